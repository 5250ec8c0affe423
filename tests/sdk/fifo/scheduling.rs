//! FIFO message-group scheduling (docs/protocol.md §6.9): a group is available when its head is
//! visible, whatever its later messages do; a receive takes each available group's run of
//! visible messages from the head; groups are served in the order they became available, and a
//! group whose head turns visible again or is freed by a delete goes to the back. Also the FIFO
//! receipt-handle expiry in batches (§6.8).

use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, Message,
    QueueAttributeName,
};

use super::{cbd_queue, send_fifo};
use crate::harness::{
    TestServer, bodies, change_visibility, delete, handle, only, receive_count, receive_vis,
};

async fn send_all(t: &TestServer, url: &str, msgs: &[(&str, &str)]) {
    for (body, group) in msgs {
        send_fifo(t, url, body, group, None).await;
    }
}

/// The example of the issue: one receive of 3 with VisibilityTimeout=0 serves g1 (both of its
/// messages) and the head of g2, and sends g1 then g2 to the back of the order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_are_served_in_the_order_they_became_available() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "order.fifo", &[]).await;
    send_all(
        &t,
        &url,
        &[
            ("g1-m1", "g1"),
            ("g2-m1", "g2"),
            ("g2-m2", "g2"),
            ("g3-m1", "g3"),
            ("g1-m2", "g1"),
        ],
    )
    .await;
    let first = receive_vis(&t, &url, 3, 0).await;
    assert_eq!(bodies(&first), ["g1-m1", "g1-m2", "g2-m1"]);
    let second = receive_vis(&t, &url, 10, 0).await;
    assert_eq!(
        bodies(&second),
        ["g3-m1", "g1-m1", "g1-m2", "g2-m1", "g2-m2"]
    );
    t.shutdown().await;
}

/// A head that becomes visible again is served although later messages of its group are still
/// in flight; a visible message behind an invisible head is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_head_decides_whether_a_group_is_available() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "head.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_all(&t, &url, &[("a1", "a"), ("a2", "a"), ("a3", "a")]).await;
    let all = receive_vis(&t, &url, 10, 60).await;
    assert_eq!(bodies(&all), ["a1", "a2", "a3"]);

    // a2 visible again, behind the in-flight head a1: not returned.
    change_visibility(&t, &url, handle(&all[1]), 0)
        .await
        .expect("ChangeMessageVisibility");
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "a2 waits behind a1, which is in flight"
    );

    // a1 visible again while a3 is still in flight: the run a1, a2 stops at a3.
    change_visibility(&t, &url, handle(&all[0]), 0)
        .await
        .expect("ChangeMessageVisibility");
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["a1", "a2"]);
    assert_eq!(receive_count(&again[0]), "2");

    // The same after a visibility expiry: a1 and a2 (received again with the queue's 30 s) come
    // back at 30 s, while a3 is in flight until 60 s.
    t.advance_secs(31);
    let expired = t.receive(&url, 10).await;
    assert_eq!(bodies(&expired), ["a1", "a2"]);
    assert_eq!(receive_count(&expired[0]), "3");
    t.advance_secs(30);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["a1", "a2", "a3"]);
    t.shutdown().await;
}

/// A group freed by a delete, or whose head's visibility runs out, goes behind the groups
/// that were available before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_freed_group_goes_to_the_back() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "back.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_all(
        &t,
        &url,
        &[("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")],
    )
    .await;
    let a1 = only(t.receive(&url, 1).await, "a1");
    assert_eq!(a1.body(), Some("a1"));
    delete(&t, &url, &a1).await;
    let got = receive_vis(&t, &url, 10, 0).await;
    assert_eq!(bodies(&got), ["b1", "c1", "a2"], "a is behind b and c");

    // Visibility expiry: x's head comes back after y was sent, so y goes first.
    let url = cbd_queue(
        &t,
        "expiry-order.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_fifo(&t, &url, "x1", "x", None).await;
    only(t.receive(&url, 1).await, "x1");
    t.advance_secs(10);
    send_fifo(&t, &url, "y1", "y", None).await;
    t.advance_secs(21);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["y1", "x1"]);
    t.shutdown().await;
}

/// On a FIFO queue a handle whose visibility ran out is refused even though nobody received the
/// message since; in the batch forms each such entry fails alone (§6.8, §5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_handles_fail_per_entry_in_batches() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "batch-handles.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_all(&t, &url, &[("old", "g"), ("fresh", "h")]).await;
    let old = only(t.receive(&url, 1).await, "old");
    t.advance_secs(31);
    let fresh = only(
        receive_vis(&t, &url, 1, 600).await,
        "fresh: h was sent first",
    );
    assert_eq!(fresh.body(), Some("fresh"), "old's group went to the back");
    let expired = |m: &Message| {
        format!(
            "Value {} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.",
            m.receipt_handle().expect("ReceiptHandle")
        )
    };

    let out = t
        .client
        .change_message_visibility_batch()
        .queue_url(&url)
        .entries(
            ChangeMessageVisibilityBatchRequestEntry::builder()
                .id("old")
                .receipt_handle(old.receipt_handle().expect("ReceiptHandle"))
                .visibility_timeout(60)
                .build()
                .expect("entry builds"),
        )
        .send()
        .await
        .expect("ChangeMessageVisibilityBatch");
    let [f] = out.failed() else {
        panic!("one failure expected: {out:?}")
    };
    assert_eq!(
        (f.id(), f.code(), f.sender_fault()),
        ("old", "InvalidParameterValue", true)
    );
    assert_eq!(f.message(), Some(expired(&old).as_str()));

    let out = t
        .client
        .delete_message_batch()
        .queue_url(&url)
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("old")
                .receipt_handle(old.receipt_handle().expect("ReceiptHandle"))
                .build()
                .expect("entry builds"),
        )
        .entries(
            DeleteMessageBatchRequestEntry::builder()
                .id("fresh")
                .receipt_handle(fresh.receipt_handle().expect("ReceiptHandle"))
                .build()
                .expect("entry builds"),
        )
        .send()
        .await
        .expect("DeleteMessageBatch");
    let ok: Vec<&str> = out.successful().iter().map(|e| e.id()).collect();
    assert_eq!(ok, ["fresh"]);
    let [f] = out.failed() else {
        panic!("one failure expected: {out:?}")
    };
    assert_eq!(
        (f.id(), f.code(), f.sender_fault()),
        ("old", "InvalidParameterValue", true)
    );
    assert_eq!(f.message(), Some(expired(&old).as_str()));

    // The expired handle deleted nothing: the message comes back.
    let again = only(t.receive(&url, 10).await, "old is still there");
    assert_eq!(again.message_id(), old.message_id());
    assert_eq!(receive_count(&again), "2");
    t.shutdown().await;
}

/// A FIFO group "g" holding m1 then m2, both received with a 1-second visibility timeout.
async fn two_in_flight(t: &TestServer, name: &str) -> (String, Vec<Message>) {
    let url = cbd_queue(t, name, &[]).await;
    send_all(t, &url, &[("m1", "g"), ("m2", "g")]).await;
    let msgs = receive_vis(t, &url, 2, 1).await;
    assert_eq!(msgs.len(), 2);
    (url, msgs)
}

/// A later message of a group turning visible while the head is still in flight (its
/// visibility was extended) must not be served: the head decides (found by the model test).
#[tokio::test]
async fn a_visible_follower_waits_while_the_head_is_in_flight() {
    let t = TestServer::start().await;
    let (url, msgs) = two_in_flight(&t, "follower.fifo").await;
    change_visibility(&t, &url, handle(&msgs[0]), 2)
        .await
        .expect("ChangeMessageVisibility");
    t.advance_secs(1);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "m2 is visible but m1, the head, is still in flight"
    );
    t.advance_secs(1);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["m1", "m2"]);
    t.shutdown().await;
}

/// The head received again, then a follower's visibility runs out: the follower must wait
/// behind the head in flight (found by the model test).
#[tokio::test]
async fn a_follower_turning_visible_behind_a_received_head_waits() {
    let t = TestServer::start().await;
    let (url, msgs) = two_in_flight(&t, "behind.fifo").await;
    change_visibility(&t, &url, handle(&msgs[1]), 2)
        .await
        .expect("ChangeMessageVisibility");
    t.advance_secs(1);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["m1"], "the head again");
    t.advance_secs(1);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "m2 turned visible, but m1, the head, is in flight"
    );
    t.shutdown().await;
}
