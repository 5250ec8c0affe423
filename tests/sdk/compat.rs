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
