//! Drop-in for other emulators: LocalStack's health check and queue URLs (`--compat
//! localstack`), and the queue URL forms LocalStack and ElasticMQ hand out.

use localsqs::server::Compat;

use super::harness::{bodies, client};
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
    let url = sqs
        .create_queue()
        .queue_name("orders")
        .send()
        .await
        .expect("creates")
        .queue_url
        .unwrap_or_default();
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
    sqs.create_queue()
        .queue_name("jobs")
        .send()
        .await
        .expect("creates");
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
