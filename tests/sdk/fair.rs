//! Fair queues (docs/protocol.md §6.17): on a standard queue whose messages carry a
//! MessageGroupId, a tenant holding many messages in flight is served after the others; without
//! group ids the order is the plain oldest-first of any standard queue.

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;

use super::harness::{TestServer, bodies};

/// Sends `n` messages `<prefix>-<i>` in batches of ten, in order, with `prefix` as their
/// MessageGroupId when `grouped`.
async fn send_many(t: &TestServer, url: &str, prefix: &str, n: usize, grouped: bool) {
    for start in (0..n).step_by(10) {
        let entries = (start..n.min(start + 10))
            .map(|i| {
                SendMessageBatchRequestEntry::builder()
                    .id(format!("e{i}"))
                    .message_body(format!("{prefix}-{i}"))
                    .set_message_group_id(grouped.then(|| prefix.to_owned()))
                    .build()
                    .expect("entry")
            })
            .collect();
        let out = t
            .client
            .send_message_batch()
            .queue_url(url)
            .set_entries(Some(entries))
            .send()
            .await
            .expect("SendMessageBatch");
        assert!(out.failed().is_empty(), "{out:?}");
    }
}

/// The bodies of four receives of ten, each held in flight (the clock stands still, so nothing
/// becomes visible again).
async fn four_receives(t: &TestServer, url: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for _ in 0..4 {
        let got = t.receive(url, 10).await;
        out.push(bodies(&got).into_iter().map(str::to_owned).collect());
    }
    out
}

fn names(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}-{i}")).collect()
}

#[tokio::test]
async fn a_flood_from_one_tenant_does_not_delay_another() {
    let t = TestServer::start().await;
    let url = t.create_queue("tenants", &[]).await;
    send_many(&t, &url, "A", 10_000, true).await;
    send_many(&t, &url, "B", 10, true).await;
    let got = four_receives(&t, &url).await;
    // Three receives put 30 of A's messages in flight, which makes A noisy (§6.17): the fourth
    // receive serves B, whose ten messages would otherwise wait behind 9,970 of A's.
    assert_eq!(got[0], names("A", 0..10));
    assert_eq!(got[1], names("A", 10..20));
    assert_eq!(got[2], names("A", 20..30));
    assert_eq!(got[3], names("B", 0..10), "B within the first receives");
    // With B's messages in flight too, A is still the only tenant with a backlog: served next,
    // in its order.
    assert_eq!(bodies(&t.receive(&url, 10).await), names("A", 30..40));
    assert_eq!(t.counts(&url).await, (9_960, 50, 0));
    t.shutdown().await;
}

#[tokio::test]
async fn without_group_ids_the_oldest_come_first() {
    let t = TestServer::start().await;
    let url = t.create_queue("plain", &[]).await;
    send_many(&t, &url, "A", 10_000, false).await;
    send_many(&t, &url, "B", 10, false).await;
    let got = four_receives(&t, &url).await;
    for (i, batch) in got.iter().enumerate() {
        assert_eq!(batch, &names("A", i * 10..i * 10 + 10), "receive {i}");
    }
    t.shutdown().await;
}
