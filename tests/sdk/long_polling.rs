//! Long polling: parked receives woken by a send or by the end of a delay, expiry with the
//! clock, the queue's ReceiveMessageWaitTimeSeconds, and shutdown answering parked polls.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock): a poll's wait moves only when a
//! test advances it (and wakes parked polls), so nothing here sleeps for seconds. Section
//! numbers refer to docs/protocol.md.

use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::{LongPoll, TestServer, only};

/// 7a. A long poll parked on an empty queue returns the message that a later send delivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_by_a_send() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll", &[]).await;
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("a long poll on an empty queue waits while the clock stands still")
        .await;
    let id = t.send(&url, "wake up").await;
    let m = poll.answer_message("the send wakes the long poll").await;
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("wake up"));
    t.shutdown().await;
}

/// 7b. A long poll on an empty queue ends with no messages once its wait has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_expires_with_the_clock() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll-expiry", &[]).await;
    let mut poll = t.long_poll(&url, 5);
    poll.assert_parked("the poll waits while the clock stands still")
        .await;
    // Normally one step ends it. Should the request only now reach the server, its wait starts
    // from the moved clock, so keep stepping (each step is a full wait) until it answers.
    let mut result = None;
    for _ in 0..50 {
        t.advance_secs(5);
        result = poll.answer_within(Duration::from_millis(500)).await;
        if result.is_some() {
            break;
        }
    }
    let out = result.expect("the long poll ends once its wait has passed");
    assert!(out.messages().is_empty(), "{out:?}");
    assert!(
        out.messages.is_none(),
        "no empty Messages list (G-8): {out:?}"
    );
    t.shutdown().await;
}

/// 7c. Without WaitTimeSeconds, a receive waits for the queue's ReceiveMessageWaitTimeSeconds
/// (§6.7), and a per-receive VisibilityTimeout overrides the queue's for that receive only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_wait_time_and_receive_visibility_override() {
    let t = TestServer::start().await;
    let url = t
        .create_queue(
            "queue-wait",
            &[(QueueAttributeName::ReceiveMessageWaitTimeSeconds, "20")],
        )
        .await;
    let mut poll = LongPoll::spawn(
        t.client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(5),
    );
    poll.assert_parked("the queue's wait time makes this a long poll")
        .await;
    let id = t.send(&url, "queue wait").await;
    let m = poll.answer_message("the send wakes the long poll").await;
    assert_eq!(m.message_id(), Some(id.as_str()));

    // VisibilityTimeout 5 on that receive: back after 5 s, not 30.
    t.advance_secs(4);
    assert!(t.receive(&url, 1).await.is_empty());
    t.advance_secs(1);
    let again = only(t.receive(&url, 1).await, "visible after the 5 s override");
    assert_eq!(again.message_id(), Some(id.as_str()));
    // This receive used the queue's 30 s again.
    t.advance_secs(29);
    assert!(t.receive(&url, 1).await.is_empty());
    t.advance_secs(1);
    only(t.receive(&url, 1).await, "visible after the queue's 30 s");
    t.shutdown().await;
}

/// 7d. Shutting the server down answers a parked long poll (empty) instead of leaving it hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_parked_long_polls() {
    let t = TestServer::start().await;
    let url = t.create_queue("shutdown-poll", &[]).await;
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("the poll is parked").await;
    t.shutdown().await;
    let out = poll
        .answer("shutdown answers the parked poll, not with a broken connection")
        .await;
    assert!(out.messages().is_empty(), "{out:?}");
}

/// 8. A long poll is woken when a delayed message becomes visible (§6.15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_when_a_delay_ends() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll-delay", &[]).await;
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(10)
        .send()
        .await
        .expect("SendMessage");
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("the delayed message is not receivable yet")
        .await;
    t.advance_secs(10);
    let m = poll
        .answer_message("the end of the delay wakes the long poll")
        .await;
    assert_eq!(m.message_id(), sent.message_id());
    t.shutdown().await;
}
