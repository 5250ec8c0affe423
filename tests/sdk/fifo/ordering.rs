//! FIFO order and group locking: sequence numbers, whole groups in send order, in-flight messages
//! blocking their group, visibility expiry, ReceiveRequestAttemptId retries, expired receipt
//! handles, and batches.

use std::collections::HashMap;

use aws_sdk_sqs::types::{Message, MessageSystemAttributeName, QueueAttributeName};

use super::{cbd_queue, entry, fifo_queue, send_fifo, sequence};
use crate::harness::{
    TestServer, bodies, change_visibility, delete, delete_handle, expect_error, handle, md5_hex,
    only, receive_count, receive_vis, sys,
};

/// SequenceNumbers: 20 digits, above u64::MAX, strictly increasing in send order, and the same
/// on receive (§4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequence_numbers_are_large_and_increasing() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "seq.fifo", &[]).await;
    let mut sent = Vec::new();
    for (i, group) in ["g1", "g2", "g1", "g3", "g2", "g1"].iter().enumerate() {
        if i == 3 {
            t.advance_secs(1);
        }
        let out = send_fifo(&t, &url, &format!("m{i}"), group, None).await;
        sent.push((
            out.message_id().expect("MessageId").to_owned(),
            sequence(out.sequence_number()),
        ));
    }
    for w in sent.windows(2) {
        assert!(
            w[0].1 < w[1].1,
            "sequence numbers increase in send order: {sent:?}"
        );
    }
    let by_id: HashMap<&str, u128> = sent.iter().map(|(id, n)| (id.as_str(), *n)).collect();
    let got = t.receive(&url, 10).await;
    assert_eq!(got.len(), sent.len());
    for m in &got {
        let id = m.message_id().expect("MessageId");
        assert_eq!(
            Some(&sequence(sys(
                m,
                &MessageSystemAttributeName::SequenceNumber
            ))),
            by_id.get(id),
            "received SequenceNumber of {id} equals the one returned by the send"
        );
    }
    t.shutdown().await;
}

/// One receive returns messages group by group, each group in send order (§6.9, G-27).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_returns_whole_groups_in_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "grouped.fifo", &[]).await;
    for (body, group) in [
        ("a1", "a"),
        ("b1", "b"),
        ("a2", "a"),
        ("b2", "b"),
        ("a3", "a"),
    ] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["a1", "a2", "a3", "b1", "b2"]);
    t.shutdown().await;
}

/// While any message of a group is in flight, the whole group is blocked (including messages
/// not yet received); other groups flow; deleting the in-flight message frees the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_message_blocks_its_group_until_deleted() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "blocking.fifo", &[]).await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let a1 = only(t.receive(&url, 1).await, "a1");
    assert_eq!(a1.body(), Some("a1"));
    let b = t.receive(&url, 10).await;
    assert_eq!(
        bodies(&b),
        ["b1", "b2"],
        "group a is blocked by a1; group b flows"
    );
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "both groups are in flight"
    );

    delete(&t, &url, &a1).await;
    let a2 = only(t.receive(&url, 10).await, "a2 after a1 was deleted");
    assert_eq!(a2.body(), Some("a2"));

    // Deleting only one of group b's two in-flight messages does not free the group.
    delete(&t, &url, &b[0]).await;
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "b2 is still in flight, a2 too"
    );
    delete(&t, &url, &b[1]).await;
    delete(&t, &url, &a2).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// Visibility expiry frees the group and redelivers in the same order (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_expiry_redelivers_in_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "expiry.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let first = t.receive(&url, 2).await;
    assert_eq!(bodies(&first), ["a1", "a2"]);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["b1"]);

    t.advance_secs(29);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "29 s into a 30 s timeout nothing is receivable"
    );
    t.advance_secs(2);
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["a1", "a2", "a3", "b1"]);
    let counts: Vec<&str> = again.iter().map(receive_count).collect();
    assert_eq!(counts, ["2", "2", "1", "2"]);
    for (before, after) in first.iter().zip(&again) {
        assert_eq!(before.message_id(), after.message_id());
        assert_ne!(before.receipt_handle(), after.receipt_handle());
    }
    t.shutdown().await;
}

/// ChangeMessageVisibility to 0 frees the group at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_visibility_to_zero_frees_the_group() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "release.fifo", &[]).await;
    for body in ["x1", "x2"] {
        send_fifo(&t, &url, body, "x", None).await;
    }
    let x1 = only(receive_vis(&t, &url, 1, 600).await, "x1");
    assert!(t.receive(&url, 10).await.is_empty(), "group x is blocked");
    t.advance_secs(60);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "still blocked: the receive asked for 600 s"
    );
    change_visibility(&t, &url, handle(&x1), 0)
        .await
        .expect("ChangeMessageVisibility 0");
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["x1", "x2"]);
    assert_eq!(receive_count(&got[0]), "2");
    t.shutdown().await;
}

/// A retry with the same ReceiveRequestAttemptId returns the same messages and receipt
/// handles (§6.7).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_request_attempt_id_retries() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "attempt.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "120")],
    )
    .await;
    for (body, group) in [("a1", "a"), ("b1", "b"), ("a2", "a")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let receive_attempt = |attempt: &'static str| {
        t.client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .receive_request_attempt_id(attempt)
            .send()
    };
    let pairs = |msgs: &[Message]| -> Vec<(String, String)> {
        msgs.iter()
            .map(|m| {
                (
                    m.message_id().expect("MessageId").to_owned(),
                    m.receipt_handle().expect("ReceiptHandle").to_owned(),
                )
            })
            .collect()
    };
    let first = receive_attempt("attempt-1")
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default();
    assert_eq!(bodies(&first), ["a1", "a2", "b1"]);
    let retry = receive_attempt("attempt-1")
        .await
        .expect("retry")
        .messages
        .unwrap_or_default();
    assert_eq!(
        pairs(&retry),
        pairs(&first),
        "same messages and receipt handles"
    );

    assert!(
        receive_attempt("attempt-2")
            .await
            .expect("another attempt id")
            .messages
            .unwrap_or_default()
            .is_empty(),
        "a new attempt id sees that everything is in flight"
    );
    assert!(t.receive(&url, 10).await.is_empty());

    t.advance_secs(60);
    let later = receive_attempt("attempt-1")
        .await
        .expect("retry a minute later")
        .messages
        .unwrap_or_default();
    assert_eq!(
        pairs(&later),
        pairs(&first),
        "still the same within 5 minutes and the visibility timeout"
    );
    // The returned handles work.
    for m in &later {
        delete(&t, &url, m).await;
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// On FIFO queues a receipt handle whose visibility expired is rejected; extending the
/// visibility before it expires keeps the handle valid (§6.8, §5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_receipt_handles_are_rejected() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "handles.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_fifo(&t, &url, "m", "g", None).await;
    let m = only(t.receive(&url, 1).await, "first receive");
    let rh = handle(&m).to_owned();
    t.advance_secs(31);
    let expired = format!(
        "Value {rh} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."
    );
    expect_error(
        "DeleteMessage with an expired handle",
        delete_handle(&t, &url, &rh).await,
        400,
        "InvalidParameterValue",
        Some(&expired),
    );
    expect_error(
        "ChangeMessageVisibility with an expired handle",
        change_visibility(&t, &url, &rh, 10).await,
        400,
        "InvalidParameterValue",
        Some(&expired),
    );

    let again = only(t.receive(&url, 1).await, "the message was not deleted");
    assert_eq!(again.message_id(), m.message_id());
    assert_eq!(receive_count(&again), "2");
    let rh2 = handle(&again).to_owned();
    t.advance_secs(20);
    change_visibility(&t, &url, &rh2, 60)
        .await
        .expect("extend the visibility before it expires");
    t.advance_secs(30);
    assert!(
        t.receive(&url, 1).await.is_empty(),
        "50 s after the receive, still in flight thanks to the extension"
    );
    delete_handle(&t, &url, &rh2)
        .await
        .expect("the extended handle is still valid");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.advance_secs(120);
    assert!(t.receive(&url, 10).await.is_empty(), "deleted for good");
    t.shutdown().await;
}

/// FIFO batch entries are enqueued in request order, with increasing SequenceNumbers
/// (§6.6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_entries_are_enqueued_in_request_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "batch.fifo", &[]).await;
    let mut req = t.client.send_message_batch().queue_url(&url);
    for i in 0..10 {
        req = req.entries(entry(&format!("e{i}"), &format!("m{i}"), Some("g"), None));
    }
    let out = req.send().await.expect("SendMessageBatch");
    assert!(out.failed().is_empty(), "{out:?}");
    assert_eq!(out.successful().len(), 10);
    let seq_of: HashMap<&str, u128> = out
        .successful()
        .iter()
        .map(|e| (e.id(), sequence(e.sequence_number())))
        .collect();
    for i in 1..10 {
        let (prev, cur) = (seq_of[&*format!("e{}", i - 1)], seq_of[&*format!("e{i}")]);
        assert!(
            prev < cur,
            "e{i} has a larger SequenceNumber than its predecessor"
        );
    }
    let got = t.receive(&url, 10).await;
    let expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies(&got), expected);
    for (i, m) in got.iter().enumerate() {
        assert_eq!(
            sequence(sys(m, &MessageSystemAttributeName::SequenceNumber)),
            seq_of[&*format!("e{i}")]
        );
        delete(&t, &url, m).await;
    }

    // Mixed groups in one batch: each group keeps entry order.
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("1", "x1", Some("x"), None))
        .entries(entry("2", "y1", Some("y"), None))
        .entries(entry("3", "x2", Some("x"), None))
        .entries(entry("4", "y2", Some("y"), None))
        .send()
        .await
        .expect("SendMessageBatch with two groups");
    assert_eq!(out.successful().len(), 4, "{out:?}");
    assert_eq!(bodies(&t.receive(&url, 10).await), ["x1", "x2", "y1", "y2"]);

    // A duplicate inside one batch is accepted with the first entry's ids and not delivered.
    let dup_url = fifo_queue(&t, "batch-dup.fifo", &[]).await;
    let out = t
        .client
        .send_message_batch()
        .queue_url(&dup_url)
        .entries(entry("first", "one", Some("g"), Some("same")))
        .entries(entry("second", "two", Some("g"), Some("same")))
        .send()
        .await
        .expect("SendMessageBatch with a duplicate id");
    assert!(out.failed().is_empty(), "{out:?}");
    let by_id: HashMap<&str, _> = out.successful().iter().map(|e| (e.id(), e)).collect();
    assert_eq!(by_id.len(), 2, "{out:?}");
    assert_eq!(by_id["second"].message_id(), by_id["first"].message_id());
    assert_eq!(
        by_id["second"].sequence_number(),
        by_id["first"].sequence_number()
    );
    assert_eq!(by_id["second"].md5_of_message_body(), md5_hex(b"two"));
    assert_eq!(bodies(&t.receive(&dup_url, 10).await), ["one"]);
    t.shutdown().await;
}
