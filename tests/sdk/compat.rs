//! Drop-in for other emulators: LocalStack's health check and queue URLs (`--compat
//! localstack`), and the queue URL forms LocalStack and ElasticMQ hand out.

use localsqs::Compat;

use super::harness::{bodies, client, create_queue_on};
use super::http::get;

#[tokio::test]
async fn localstack_health_and_queue_urls() {
    let server = localsqs::Server::builder()
        .compat(Compat::LocalStack)
        .start()
        .await
        .expect("starts");
    let health = get(server.local_addr(), "/_localstack/health", &[])
        .await
        .expect("answered");
    assert_eq!(health.status, 200);
    let v: serde_json::Value = serde_json::from_str(&health.body).expect("json");
    assert_eq!(v["services"]["sqs"], "running", "{v}");
    let sqs = client(&server.endpoint());
    let url = create_queue_on(&sqs, "orders").await;
    let port = server.local_addr().port();
    assert_eq!(
        url,
        format!("http://sqs.us-east-1.localhost.localstack.cloud:{port}/000000000000/orders")
    );
    sqs.send_message()
        .queue_url(&url)
        .message_body("hi")
        .send()
        .await
        .expect("the LocalStack-style URL addresses the queue");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["hi"]);
    server.shutdown().await;
}

#[tokio::test]
async fn elasticmq_and_localstack_queue_url_forms_address_queues() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let sqs = client(&server.endpoint());
    create_queue_on(&sqs, "jobs").await;
    let ep = server.endpoint();
    for url in [
        format!("{ep}/queue/jobs"),
        format!("{ep}/000000000000/jobs"),
        format!("{ep}/queue/us-east-1/000000000000/jobs"),
        "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/jobs".to_owned(),
    ] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(url.clone())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{url}: {e:?}"));
    }
    let got = sqs
        .receive_message()
        .queue_url(format!("{ep}/queue/jobs"))
        .max_number_of_messages(10)
        .send()
        .await
        .expect("receives");
    assert_eq!(got.messages().len(), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn an_elasticmq_conf_declares_the_queues() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("elasticmq.conf");
    std::fs::write(
        &path,
        r#"include classpath("application.conf")
rest-sqs { enabled = true, bind-port = 9324 }
queues {
  orders {
    defaultVisibilityTimeout = 45 seconds
    deadLettersQueue { name = "orders-dlq", maxReceiveCount = 3 }
  }
  orders-dlq { }
}
"#,
    )
    .expect("writes");
    let server = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect("starts");
    let sqs = client(&server.endpoint());
    let url = sqs
        .get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .expect("declared")
        .queue_url
        .unwrap_or_default();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .expect("attributes");
    let attrs = attrs.attributes().cloned().unwrap_or_default();
    use aws_sdk_sqs::types::QueueAttributeName as A;
    assert_eq!(
        attrs.get(&A::VisibilityTimeout).map(String::as_str),
        Some("45")
    );
    assert!(
        attrs
            .get(&A::RedrivePolicy)
            .is_some_and(|p| p.contains("orders-dlq") && p.contains('3')),
        "{attrs:?}"
    );
    server.shutdown().await;

    std::fs::write(&path, "queues { q { moveTo = \"elsewhere\" } }").expect("writes");
    let err = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect_err("moveTo is refused");
    assert!(err.to_string().contains("moveTo"), "{err}");
}
