//! Queue URLs follow the Host header only when it is a plain authority, and always carry a
//! port, so clients that follow queue URLs reach this server.

use super::http::exchange;

async fn created_url(host: &str) -> (String, String) {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let resp = exchange(
        server.local_addr(),
        "POST",
        "/",
        &[
            ("Host", host),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        "Action=CreateQueue&QueueName=q",
    )
    .await
    .expect("answered");
    let port = server.local_addr().port().to_string();
    server.shutdown().await;
    assert_eq!(resp.status, 200, "{}", resp.body);
    let url = resp
        .body
        .split("<QueueUrl>")
        .nth(1)
        .and_then(|r| r.split("</QueueUrl>").next())
        .expect("a QueueUrl")
        .to_owned();
    (url, port)
}

#[tokio::test]
async fn a_host_without_port_gets_the_listening_port() {
    let (url, port) = created_url("127.0.0.1").await;
    assert_eq!(url, format!("http://127.0.0.1:{port}/000000000000/q"));
}

#[tokio::test]
async fn a_host_that_is_not_an_authority_is_not_copied_into_queue_urls() {
    let (url, port) = created_url("a/b?x#y").await;
    assert_eq!(url, format!("http://127.0.0.1:{port}/000000000000/q"));
}

#[tokio::test]
async fn a_host_with_a_port_is_kept() {
    let (url, _) = created_url("localstack:4566").await;
    assert_eq!(url, "http://localstack:4566/000000000000/q");
}
