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

/// Waits until the engine counts `n` parked polls.
async fn parked(t: &TestServer, n: usize) {
    tokio::time::timeout(crate::harness::HANG_GUARD, async {
        while t.server.engine().parked_polls() != n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never {n} parked polls"));
}

/// For issue 29, finding 6: when parked long polls hold every connection slot, the front door
/// answers the oldest early. `Engine::release_oldest_polls` answers exactly the oldest ones,
/// at once and empty, leaves the younger parked, and leaves nothing behind: the queue's next
/// message goes to a poll still parked, and on a FIFO queue a released poll's
/// ReceiveRequestAttemptId receives normally afterwards. The injected clock stands still, so
/// no poll could end by its deadline meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oldest_parked_polls_are_released_early_and_empty() {
    let t = TestServer::start().await;
    let url = t.create_queue("parked", &[]).await;
    let engine = t.server.engine();
    assert_eq!(
        (engine.parked_polls(), engine.release_oldest_polls(3)),
        (0, 0)
    );
    let a = t.long_poll(&url, 20);
    parked(&t, 1).await;
    let b = t.long_poll(&url, 20);
    parked(&t, 2).await;
    let mut c = t.long_poll(&url, 20);
    parked(&t, 3).await;

    assert_eq!(engine.release_oldest_polls(2), 2);
    for (poll, what) in [(a, "a"), (b, "b")] {
        let got = poll.answer(what).await;
        assert!(got.messages().is_empty(), "{what}: released empty");
    }
    parked(&t, 1).await;
    c.assert_parked("the youngest stays").await;
    t.send(&url, "for c").await;
    assert_eq!(c.answer_body("c").await, "for c");
    parked(&t, 0).await;
    assert_eq!(engine.release_oldest_polls(1), 0, "nothing parked");

    let fifo = crate::fifo::fifo_queue(&t, "parked.fifo", &[]).await;
    let attempt = || {
        t.client
            .receive_message()
            .queue_url(&fifo)
            .wait_time_seconds(20)
            .receive_request_attempt_id("attempt-1")
    };
    let held = LongPoll::spawn(attempt());
    parked(&t, 1).await;
    assert_eq!(engine.release_oldest_polls(10), 1);
    assert!(held.answer("fifo").await.messages().is_empty());
    t.client
        .send_message()
        .queue_url(&fifo)
        .message_body("f1")
        .message_group_id("g")
        .message_deduplication_id("d1")
        .send()
        .await
        .expect("sent");
    let again = LongPoll::spawn(attempt());
    assert_eq!(again.answer_body("the same attempt id").await, "f1");
    parked(&t, 0).await;
    t.shutdown().await;
}
