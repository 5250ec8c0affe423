//! Bounds and refusals that keep state honest: tombstones of deleted queues are pruned once
//! their 60 seconds pass, CreateQueue enforces TagQueue's 50-tag limit, and an empty data file
//! is refused rather than silently started afresh.

use std::collections::HashMap;

use super::harness::{DeadLetter, TestServer, change_visibility, expect_error, handle};

#[tokio::test]
async fn tombstones_are_pruned_after_their_sixty_seconds() {
    let t = TestServer::start().await;
    for i in 0..5 {
        let url = t.create_queue(&format!("gone-{i}"), &[]).await;
        t.client
            .delete_queue()
            .queue_url(&url)
            .send()
            .await
            .expect("deletes");
    }
    let engine = t.server.engine();
    assert_eq!(engine.tombstone_count(), 5);
    t.advance_secs(59);
    engine.sweep();
    assert_eq!(
        engine.tombstone_count(),
        5,
        "still inside the re-create window"
    );
    t.advance_secs(2);
    engine.sweep();
    assert_eq!(engine.tombstone_count(), 0);
    t.shutdown().await;
}

#[tokio::test]
async fn create_queue_allows_at_most_fifty_tags() {
    let t = TestServer::start().await;
    let tags = |n: usize| -> HashMap<String, String> {
        (0..n).map(|i| (format!("k{i}"), "v".to_owned())).collect()
    };
    let res = t
        .client
        .create_queue()
        .queue_name("tagged")
        .set_tags(Some(tags(60)))
        .send()
        .await;
    expect_error(
        "60 tags",
        res,
        400,
        "InvalidParameterValue",
        Some("Too many tags added for queue tagged."),
    );
    t.client
        .create_queue()
        .queue_name("tagged")
        .set_tags(Some(tags(50)))
        .send()
        .await
        .expect("50 tags are allowed");
    t.shutdown().await;
}

#[tokio::test]
async fn an_empty_data_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("localsqs.redb"), b"").expect("writes");
    let err = localsqs::Server::builder()
        .data_dir(dir.path())
        .start()
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("empty (0 bytes)"), "{err}");
    assert_eq!(
        std::fs::metadata(dir.path().join("localsqs.redb"))
            .expect("still there")
            .len(),
        0,
        "left untouched"
    );
}

/// DeleteQueue and PurgeQueue of a big durable queue remove its rows in the background, a step
/// at a time, instead of holding every other commit; whatever a restart catches half-done, the
/// deleted or purged messages never come back and later messages are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_and_purged_messages_stay_gone_across_restarts() {
    use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
    let dir = tempfile::tempdir().expect("tempdir");
    let start = || {
        TestServer::start_with(
            std::sync::Arc::new(localsqs::engine::ManualClock::new(super::harness::START_MS)),
            Some(dir.path()),
        )
    };
    let t = start().await;
    let fill = |url: String, n: usize| {
        let sqs = t.client.clone();
        async move {
            for chunk in 0..n / 10 {
                let entries: Vec<SendMessageBatchRequestEntry> = (0..10)
                    .map(|i| {
                        SendMessageBatchRequestEntry::builder()
                            .id(format!("e{i}"))
                            .message_body(format!("old-{chunk}-{i}"))
                            .build()
                            .expect("entry")
                    })
                    .collect();
                sqs.send_message_batch()
                    .queue_url(&url)
                    .set_entries(Some(entries))
                    .send()
                    .await
                    .expect("sends");
            }
        }
    };
    let doomed = t.create_queue("doomed", &[]).await;
    fill(doomed.clone(), 6000).await;
    let purged = t.create_queue("purged", &[]).await;
    fill(purged.clone(), 6000).await;
    t.client
        .delete_queue()
        .queue_url(&doomed)
        .send()
        .await
        .expect("deletes");
    t.client
        .purge_queue()
        .queue_url(&purged)
        .send()
        .await
        .expect("purges");
    t.send(&purged, "after").await;
    let reborn = t.create_queue("doomed", &[]).await;
    t.send(&reborn, "new").await;
    t.shutdown().await;

    let t = start().await;
    assert_eq!(
        t.counts(&purged).await,
        (1, 0, 0),
        "only the message sent after the purge"
    );
    assert_eq!(
        t.counts(&reborn).await,
        (1, 0, 0),
        "the re-created queue holds only its own"
    );
    let got = t.receive(&purged, 10).await;
    assert_eq!(super::harness::bodies(&got), ["after"]);
    t.shutdown().await;
}

/// A message moved into a standard dead-letter queue keeps its send time, so it can be older
/// than a message already there; it must still expire at its own retention, not wait behind
/// the younger one (found by the model test).
#[tokio::test]
async fn a_moved_message_expires_behind_a_younger_one() {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, .. } = t
        .create_dead_letter_pair(
            "retained-src",
            &[(A::VisibilityTimeout, "0")],
            "retained-dlq",
            &[(A::MessageRetentionPeriod, "60")],
            1,
        )
        .await;
    t.send(&src, "old").await;
    t.receive(&src, 1).await;
    t.advance_secs(30);
    t.send(&dlq, "young").await;
    assert!(
        t.receive(&src, 1).await.is_empty(),
        "moves 'old' to the DLQ"
    );
    assert_eq!(t.counts(&dlq).await, (2, 0, 0));
    t.advance_secs(31);
    t.server.engine().sweep();
    assert_eq!(
        t.counts(&dlq).await,
        (1, 0, 0),
        "'old' is 61 s old; 'young' 31 s"
    );
    assert_eq!(
        super::harness::bodies(&t.receive(&dlq, 10).await),
        ["young"]
    );
    t.shutdown().await;
}

/// A message moved into a FIFO dead-letter queue starts its retention again there (AWS resets
/// its enqueue time), so an old message is not expired on arrival; its SentTimestamp is the
/// move.
#[tokio::test]
async fn a_fifo_dead_letter_queue_counts_retention_from_the_move() {
    use aws_sdk_sqs::types::{MessageSystemAttributeName as S, QueueAttributeName as A};
    let t = TestServer::start().await;
    let fifo = (A::FifoQueue, "true");
    let DeadLetter { src, dlq, .. } = t
        .create_dead_letter_pair(
            "kept-src.fifo",
            &[
                fifo.clone(),
                (A::ContentBasedDeduplication, "true"),
                (A::VisibilityTimeout, "0"),
            ],
            "kept-dlq.fifo",
            &[fifo, (A::MessageRetentionPeriod, "60")],
            1,
        )
        .await;
    super::fifo::send_fifo(&t, &src, "old", "g", None).await;
    t.receive(&src, 1).await;
    t.advance_secs(90);
    let moved_at = super::harness::START_MS + 90_000;
    assert!(
        t.receive(&src, 1).await.is_empty(),
        "moves 'old' to the DLQ"
    );
    t.server.engine().sweep();
    assert_eq!(t.counts(&dlq).await, (1, 0, 0), "90 s old, yet kept");
    let m = super::harness::only(
        super::harness::receive_full(&t, &dlq, 1).await,
        "in the DLQ",
    );
    assert_eq!(
        super::harness::sys(&m, &S::SentTimestamp),
        Some(moved_at.to_string().as_str())
    );
    change_visibility(&t, &dlq, handle(&m), 0)
        .await
        .expect("made visible again");
    t.advance_secs(59);
    t.server.engine().sweep();
    assert_eq!(t.counts(&dlq).await, (1, 0, 0), "59 s after the move");
    t.advance_secs(2);
    t.server.engine().sweep();
    assert_eq!(t.counts(&dlq).await, (0, 0, 0), "61 s after the move");
    t.shutdown().await;
}
