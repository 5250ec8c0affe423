//! The durable body cache (`Server::body_cache_bytes`, `--body-cache-mib`): records past the
//! budget leave memory once committed and are read back from disk on receive, bodies intact;
//! `/metrics` reports the cached bytes.

use std::sync::Arc;

use localsqs::engine::ManualClock;

use super::harness::{START_MS, client, create_queue_on, sorted_bodies};
use super::http::get;

const BODY_LEN: usize = 1_000;

/// Sends five 1,000-byte messages to a durable server with this cache budget and returns the
/// cache gauge afterwards, then checks every body comes back from a receive.
async fn cached_after_five_sends(budget: Option<usize>) -> i64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut b = localsqs::Server::builder()
        .clock(Arc::new(ManualClock::new(START_MS)))
        .data_dir(dir.path());
    if let Some(bytes) = budget {
        b = b.body_cache_bytes(bytes);
    }
    let server = b.start().await.expect("starts");
    let sqs = client(&server.endpoint());
    let url = create_queue_on(&sqs, "cached").await;
    let sent: Vec<String> = (0..5)
        .map(|i| format!("{i}{}", "x".repeat(BODY_LEN - 1)))
        .collect();
    for body in &sent {
        sqs.send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
            .await
            .expect("acknowledged");
    }
    let metrics = get(server.local_addr(), "/metrics", &[])
        .await
        .expect("metrics");
    let gauge = metrics
        .body
        .lines()
        .find_map(|l| l.strip_prefix("localsqs_body_cache_bytes "))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .expect("the gauge is exported");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .send()
        .await
        .expect("receives")
        .messages
        .unwrap_or_default();
    assert_eq!(sorted_bodies(&got), sent, "every body comes back intact");
    server.shutdown().await;
    gauge
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_budget_keeps_at_most_the_uncommitted_record_and_reads_the_rest_back() {
    let cached = cached_after_five_sends(Some(0)).await;
    // Each send evicts what earlier commits made durable; only the newest may still count.
    assert!(
        cached < 2 * BODY_LEN as i64,
        "at most one record held, got {cached} bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_budget_keeps_recent_records_in_memory() {
    let cached = cached_after_five_sends(None).await;
    assert!(
        cached >= 5 * BODY_LEN as i64,
        "all five records held, got {cached} bytes"
    );
}
