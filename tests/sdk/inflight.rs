//! The in-flight limit per queue (docs/protocol.md §6.8): AWS allows 120,000 in-flight messages;
//! these tests lower it with `Server::max_inflight` instead of receiving 120,000 messages. A
//! standard queue's short poll past it fails with OverLimit, a long poll waits instead; a FIFO
//! queue returns nothing more and no error, and looks for available groups only among its
//! first `max_inflight` messages (§6.9).

use aws_sdk_sqs::types::QueueAttributeName;
use localsqs::engine::EngineOptions;

use crate::fifo::{cbd_queue, send_fifo};
use crate::harness::{
    TestServer, bodies, change_visibility, delete, expect_error, handle, only, wire_error,
};

/// AWS's OverLimit text [V, old: a raw AWS answer of 2014, line break included].
const TOO_MANY: &str = "Too many messages have been received without being deleted.\nPlease delete your received messages or let them timeout before receiving more.";

/// A server that allows at most `limit` messages in flight per queue.
async fn limited(limit: Option<usize>) -> TestServer {
    TestServer::start_from(localsqs::Server::builder().max_inflight(limit)).await
}

#[test]
fn the_default_is_aws_limit() {
    assert_eq!(EngineOptions::default().max_inflight, Some(120_000));
}

/// Standard queue: receives stop at the limit, a short poll past it fails with OverLimit (403),
/// a long poll waits for room instead, and a delete or a visibility change makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_queue_over_the_limit() {
    let t = limited(Some(3)).await;
    let url = t.create_queue("capped", &[]).await;
    for i in 0..5 {
        t.send(&url, &format!("m{i}")).await;
    }
    assert_eq!(t.receive(&url, 2).await.len(), 2);
    let third = t.receive(&url, 10).await;
    assert_eq!(bodies(&third), ["m2"], "only the room left");
    let r = t
        .client
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(0)
        .send()
        .await;
    expect_error(
        "short poll at the limit",
        r,
        403,
        "OverLimit",
        Some(TOO_MANY),
    );

    // A long poll does not fail: it waits, and a delete that makes room wakes it.
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("the long poll waits at the limit").await;
    delete(&t, &url, &third[0]).await;
    let m3 = poll
        .answer_message("the delete wakes the long poll, without an error")
        .await;
    assert_eq!(m3.body(), Some("m3"));

    // ChangeMessageVisibility to 0 makes room too.
    assert!(
        over_limit(&t, &url).await,
        "at the limit again (m0, m1, m3 in flight)"
    );
    change_visibility(&t, &url, handle(&m3), 0)
        .await
        .expect("ChangeMessageVisibility 0");
    assert_eq!(t.receive(&url, 10).await.len(), 1, "room for one");

    // A long poll at the limit whose wait runs out answers empty, without an error.
    let mut poll = t.long_poll(&url, 5);
    poll.assert_parked("the long poll waits at the limit again")
        .await;
    t.advance_secs(5);
    let out = poll.answer("the wait ends, without an error").await;
    assert!(out.messages.is_none(), "{out:?}");
    t.shutdown().await;
}

/// FIFO queue: no error at the limit, just nothing more until a delete makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_queue_at_the_limit_returns_nothing_more() {
    let t = limited(Some(2)).await;
    let url = cbd_queue(&t, "capped.fifo", &[]).await;
    for g in ["g1", "g2", "g3"] {
        send_fifo(&t, &url, &format!("{g}-m1"), g, None).await;
    }
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["g1-m1", "g2-m1"]);
    assert!(t.receive(&url, 10).await.is_empty(), "no error, no message");
    delete(&t, &url, &got[0]).await;
    assert_eq!(bodies(&t.receive(&url, 10).await), ["g3-m1"]);
    t.shutdown().await;
}

/// FIFO queue: groups are looked for among the first `max_inflight` messages only, so a backlog
/// in one group holds back a group sent after it until the backlog shrinks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_queue_scans_only_its_first_messages() {
    let t = limited(Some(3)).await;
    let url = cbd_queue(
        &t,
        "backlog.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let a1 = only(t.receive(&url, 1).await, "a1");
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "b1 is the fourth message, outside the first three"
    );
    delete(&t, &url, &a1).await;
    assert_eq!(
        bodies(&t.receive(&url, 10).await),
        ["b1", "a2", "a3"],
        "b1 is inside now, and b became available before a was freed"
    );

    // Without a limit, b1 is found at once.
    let t2 = limited(None).await;
    let url = cbd_queue(&t2, "unlimited.fifo", &[]).await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")] {
        send_fifo(&t2, &url, body, group, None).await;
    }
    only(t2.receive(&url, 1).await, "a1");
    assert_eq!(bodies(&t2.receive(&url, 10).await), ["b1"]);
    t2.shutdown().await;
    t.shutdown().await;
}

/// Whether a short-poll receive of one message fails with OverLimit.
async fn over_limit(t: &TestServer, url: &str) -> bool {
    let r = t
        .client
        .receive_message()
        .queue_url(url)
        .wait_time_seconds(0)
        .send()
        .await;
    r.err()
        .is_some_and(|e| wire_error(&e).code.as_deref() == Some("OverLimit"))
}
