//! A full disk in durable mode: the failing commit is refused, `/health` reports not ready with
//! the reason, SQS requests get 503 meanwhile, and once space is back the store reopens and
//! memory is rebuilt from the file, without a restart. Nothing acknowledged is lost and
//! nothing unacknowledged appears. The disk is a switchable storage backend (`DiskFaults`).

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::config::retry::RetryConfig;
use localsqs::engine::{DiskFaults, ManualClock};

use super::harness::{HANG_GUARD, START_MS, bodies, client_with_retries, create_queue_on};
use super::http::get;

async fn health(server: &localsqs::RunningServer) -> (u16, serde_json::Value) {
    let r = get(server.local_addr(), "/health", &[])
        .await
        .expect("answered");
    (r.status, serde_json::from_str(&r.body).expect("json"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_survived_without_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let disk = DiskFaults::new();
    let start = |disk: Option<Arc<DiskFaults>>| {
        let mut b = localsqs::Server::builder()
            .clock(Arc::new(ManualClock::new(START_MS)))
            .data_dir(dir.path());
        if let Some(d) = disk {
            b = b.disk_faults(d);
        }
        b.start()
    };
    let server = start(Some(Arc::clone(&disk))).await.expect("starts");
    let sqs = client_with_retries(&server.endpoint(), RetryConfig::disabled());
    let url = create_queue_on(&sqs, "kept").await;
    for body in ["a", "b", "c"] {
        sqs.send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
            .await
            .expect("acknowledged");
    }

    disk.fill();
    let failed = sqs
        .send_message()
        .queue_url(&url)
        .message_body("never")
        .send()
        .await;
    assert!(
        failed.is_err(),
        "a send the disk refused is not acknowledged"
    );
    let (status, v) = health(&server).await;
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["ready"], false);
    assert!(v["reason"].as_str().unwrap_or("").contains("space"), "{v}");
    let refused = sqs.get_queue_attributes().queue_url(&url).send().await;
    let err = refused.expect_err("not served while storage fails");
    let status = err.raw_response().map(|r| r.status().as_u16());
    assert_eq!(status, Some(503));

    disk.free();
    tokio::time::timeout(HANG_GUARD, async {
        while health(&server).await.0 != 200 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the store recovers by itself");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("served again");
    let mut got: Vec<&str> = bodies(got.messages());
    got.sort_unstable();
    assert_eq!(
        got,
        ["a", "b", "c"],
        "the acknowledged three, not the refused one"
    );
    sqs.send_message()
        .queue_url(&url)
        .message_body("d")
        .send()
        .await
        .expect("writes again");
    server.shutdown().await;

    let server = start(None).await.expect("restarts on the same directory");
    let sqs = client_with_retries(&server.endpoint(), RetryConfig::disabled());
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .expect("attributes");
    let n = |name: aws_sdk_sqs::types::QueueAttributeName| {
        attrs
            .attributes()
            .and_then(|a| a.get(&name))
            .cloned()
            .unwrap_or_default()
    };
    use aws_sdk_sqs::types::QueueAttributeName as A;
    assert_eq!(n(A::ApproximateNumberOfMessages), "1", "d");
    assert_eq!(
        n(A::ApproximateNumberOfMessagesNotVisible),
        "3",
        "a, b, c in flight"
    );
    server.shutdown().await;
}
