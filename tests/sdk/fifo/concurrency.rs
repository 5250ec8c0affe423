//! Many concurrent consumers of one FIFO queue: group order, group locking and exactly-once
//! delivery.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use aws_sdk_sqs::types::DeleteMessageBatchRequestEntry;

use super::{cbd_queue, entry};
use crate::harness::{HANG_GUARD, TestServer};

/// Who holds a group's messages, as seen by the consumers of the concurrency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Received; the delete has not been sent yet, so the server must still see it in flight.
    Received,
    /// The delete has been sent; the server may already have freed the group.
    Deleting,
}

#[derive(Debug, Default)]
struct Tracker {
    /// Per group: the consumer holding it and how far along it is.
    holders: HashMap<String, (usize, Hold)>,
    /// Per group: message indexes in the order they were received.
    received: HashMap<String, Vec<usize>>,
    total: usize,
    violations: Vec<String>,
}

/// 50 groups × 20 messages consumed by 8 concurrent consumers (batch sizes 1 to 10, deleting
/// each batch before receiving again): each group arrives in send order,
/// no group is ever handed to two consumers at once, and every message is delivered exactly
/// once.
///
/// The locking check is race-free: a consumer marks its groups `Received` as soon as a receive
/// returns and moves them to `Deleting` just before it sends the delete. A receive that returns
/// a message of a group some other consumer still holds as `Received` is a violation: that
/// consumer had not even sent its delete, so both messages were in flight at the server at the
/// same time (visibility never expires here: the clock is frozen and the timeout is 10 minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_consumers_keep_group_order_and_locking() {
    const GROUPS: usize = 50;
    const PER_GROUP: usize = 20;
    const TOTAL: usize = GROUPS * PER_GROUP;
    const CONSUMERS: usize = 8;
    const MAX_ITERATIONS: usize = 20_000;

    const RUN: usize = 10;

    let t = TestServer::start().await;
    let url = cbd_queue(&t, "concurrent.fifo", &[]).await;
    // Each group's messages are sent in runs of 10 (g00:00-09, g01:00-09, …, g00:10-19, …), so
    // that a server without group locking would hand the rest of a run to another consumer
    // while the first one still holds the start of it.
    let all: Vec<(usize, usize)> = (0..PER_GROUP / RUN)
        .flat_map(|run| {
            (0..GROUPS).flat_map(move |g| (run * RUN..(run + 1) * RUN).map(move |i| (g, i)))
        })
        .collect();
    for chunk in all.chunks(10) {
        let mut req = t.client.send_message_batch().queue_url(&url);
        for (n, (g, i)) in chunk.iter().enumerate() {
            req = req.entries(entry(
                &n.to_string(),
                &format!("g{g:02}:{i:02}"),
                Some(&format!("g{g:02}")),
                None,
            ));
        }
        let out = req.send().await.expect("SendMessageBatch");
        assert!(out.failed().is_empty(), "{out:?}");
    }
    assert_eq!(t.counts(&url).await, (TOTAL as u64, 0, 0));

    let tracker = Arc::new(Mutex::new(Tracker::default()));
    let mut consumers = Vec::new();
    for me in 0..CONSUMERS {
        // Mixed batch sizes: 1, 4, 7, 10, 3, 6, 9, 2.
        let max = i32::try_from(1 + (me * 3) % 10).expect("fits");
        let client = t.client.clone();
        let url = url.clone();
        let tracker = tracker.clone();
        consumers.push(tokio::spawn(async move {
            for _ in 0..MAX_ITERATIONS {
                if tracker.lock().expect("tracker").total >= TOTAL {
                    return;
                }
                let msgs = client
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(max)
                    .visibility_timeout(600)
                    .wait_time_seconds(0)
                    .send()
                    .await
                    .expect("ReceiveMessage")
                    .messages
                    .unwrap_or_default();
                if msgs.is_empty() {
                    tokio::task::yield_now().await;
                    continue;
                }
                let mut groups = HashSet::new();
                {
                    let mut tr = tracker.lock().expect("tracker");
                    for m in &msgs {
                        let body = m.body().expect("Body");
                        let (g, i) = body.split_once(':').expect("g:i body");
                        let i: usize = i.parse().expect("index");
                        if let Some((other, Hold::Received)) = tr.holders.get(g).copied()
                            && other != me
                        {
                            tr.violations.push(format!(
                                "consumer {me} received {body} while consumer {other} held an undeleted message of {g}"
                            ));
                        }
                        tr.holders.insert(g.to_owned(), (me, Hold::Received));
                        tr.received.entry(g.to_owned()).or_default().push(i);
                        tr.total += 1;
                        groups.insert(g.to_owned());
                    }
                }
                // "Process" the batch: other consumers run while this one holds its groups
                // as Received, which is when a violation can be seen.
                tokio::task::yield_now().await;
                {
                    let mut tr = tracker.lock().expect("tracker");
                    for g in &groups {
                        tr.holders.insert(g.clone(), (me, Hold::Deleting));
                    }
                }
                let mut req = client.delete_message_batch().queue_url(&url);
                for (n, m) in msgs.iter().enumerate() {
                    req = req.entries(
                        DeleteMessageBatchRequestEntry::builder()
                            .id(n.to_string())
                            .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
                            .build()
                            .expect("delete entry builds"),
                    );
                }
                let out = req.send().await.expect("DeleteMessageBatch");
                assert!(out.failed().is_empty(), "{out:?}");
                let mut tr = tracker.lock().expect("tracker");
                for g in &groups {
                    if tr.holders.get(g).is_some_and(|(c, _)| *c == me) {
                        tr.holders.remove(g);
                    }
                }
            }
            panic!("consumer {me} gave up after {MAX_ITERATIONS} iterations");
        }));
    }
    tokio::time::timeout(HANG_GUARD, async {
        for c in consumers {
            c.await.expect("consumer task");
        }
    })
    .await
    .expect("consumers finish");

    // Every consumer has finished: take the record out of the mutex.
    let tr = std::mem::take(&mut *tracker.lock().expect("tracker"));
    assert!(
        tr.violations.is_empty(),
        "group locking violated: {:?}",
        tr.violations
    );
    assert_eq!(tr.total, TOTAL, "every message delivered exactly once");
    assert_eq!(tr.received.len(), GROUPS);
    let expected: Vec<usize> = (0..PER_GROUP).collect();
    for (g, got) in &tr.received {
        assert_eq!(
            got, &expected,
            "group {g}: send order, each message exactly once"
        );
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}
