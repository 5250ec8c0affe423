//! Optional SigV4 verification (`--auth sigv4`): the SDK's signatures are checked against the
//! configured secrets; a wrong secret, an unknown key, a missing signature and a signature
//! outside the allowed clock skew get AWS's errors. Off by default (every other test).

use std::time::{Duration, SystemTime};

use aws_sdk_sqs::config::retry::RetryConfig;
use localsqs::Credentials;

use super::harness::{client_config, expect_error};
use super::http::exchange;

fn signing_client(
    endpoint: &str,
    key: &str,
    secret: &str,
    at: Option<SystemTime>,
) -> aws_sdk_sqs::Client {
    let mut conf =
        client_config(endpoint, "us-east-1", key, secret).retry_config(RetryConfig::disabled());
    if let Some(t) = at {
        conf = conf.time_source(aws_smithy_async::time::SharedTimeSource::new(
            aws_smithy_async::time::StaticTimeSource::new(t),
        ));
    }
    aws_sdk_sqs::Client::from_conf(conf.build())
}

async fn server() -> localsqs::RunningServer {
    localsqs::Server::builder()
        .sigv4(Credentials::parse(["AKIDLOCAL:right-secret"]).expect("parses"))
        .start()
        .await
        .expect("starts")
}

#[tokio::test]
async fn the_right_secret_passes_and_wrong_ones_do_not() {
    let server = server().await;
    let ep = server.endpoint();
    let good = signing_client(&ep, "AKIDLOCAL", "right-secret", None);
    let url = good
        .create_queue()
        .queue_name("signed")
        .send()
        .await
        .expect("a correctly signed request passes")
        .queue_url
        .unwrap_or_default();
    good.send_message()
        .queue_url(&url)
        .message_body("hello")
        .send()
        .await
        .expect("a body is covered by the signature");
    let wrong = signing_client(&ep, "AKIDLOCAL", "wrong-secret", None);
    let res = wrong.list_queues().send().await;
    expect_error("wrong secret", res, 403, "SignatureDoesNotMatch", None);
    let unknown = signing_client(&ep, "AKIDOTHER", "right-secret", None);
    let res = unknown.list_queues().send().await;
    expect_error(
        "unknown key",
        res,
        403,
        "InvalidClientTokenId",
        Some("The security token included in the request is invalid."),
    );
    let stale = signing_client(
        &ep,
        "AKIDLOCAL",
        "right-secret",
        Some(SystemTime::now() - Duration::from_secs(3600)),
    );
    let res = stale.list_queues().send().await;
    expect_error(
        "an hour-old signature",
        res,
        403,
        "SignatureDoesNotMatch",
        None,
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_unsigned_request_is_refused_in_either_protocol() {
    let server = server().await;
    let query = exchange(
        server.local_addr(),
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        "Action=ListQueues",
    )
    .await
    .expect("answered");
    assert_eq!(query.status, 403, "{}", query.body);
    assert!(
        query
            .body
            .contains("<Code>MissingAuthenticationToken</Code>"),
        "{}",
        query.body
    );
    let json = exchange(
        server.local_addr(),
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", "AmazonSQS.ListQueues"),
        ],
        "{}",
    )
    .await
    .expect("answered");
    assert_eq!(json.status, 403);
    assert_eq!(
        json.header("x-amzn-query-error"),
        Some("MissingAuthenticationToken;Sender")
    );
    let health = exchange(server.local_addr(), "GET", "/health", &[], "")
        .await
        .expect("answered");
    assert_eq!(health.status, 200, "admin endpoints stay open");
    server.shutdown().await;
}
