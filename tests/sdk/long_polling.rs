//! Long polling: parked receives woken by a send or by the end of a delay, expiry with the
//! clock, the queue's ReceiveMessageWaitTimeSeconds, and shutdown answering parked polls.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock): a poll's wait moves only when a
//! test advances it (and wakes parked polls), so nothing here sleeps for seconds. Section
//! numbers refer to docs/protocol.md.

use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::{HANG_GUARD, TestServer, only};

/// How long a spawned long poll is given to prove that it is still waiting. A correct server
/// never answers within it (its clock is frozen), so this cannot cause a false failure.
const STILL_WAITING: Duration = Duration::from_millis(200);

/// 7a. A long poll parked on an empty queue returns the message that a later send delivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_by_a_send() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll", &[]).await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "a long poll on an empty queue waits while the clock stands still"
    );
    let id = t.send(&url, "wake up").await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the send wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the sent message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("wake up"));
    t.shutdown().await;
}

/// 7b. A long poll on an empty queue ends with no messages once its wait has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_expires_with_the_clock() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll-expiry", &[]).await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(5)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the poll waits while the clock stands still"
    );
    // Normally one step ends it. Should the request only now reach the server, its wait starts
    // from the moved clock, so keep stepping (each step is a full wait) until it answers.
    let mut result = None;
    for _ in 0..50 {
        t.advance_secs(5);
        if let Ok(joined) = tokio::time::timeout(Duration::from_millis(500), &mut receive).await {
            result = Some(joined.expect("task").expect("ReceiveMessage"));
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
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .visibility_timeout(5)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the queue's wait time makes this a long poll"
    );
    let id = t.send(&url, "queue wait").await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the send wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the sent message, got {:?}", out.messages());
    };
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
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the poll is parked"
    );
    t.shutdown().await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("shutdown ends the long poll")
        .expect("task")
        .expect("the parked poll gets an answer, not a broken connection");
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
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the delayed message is not receivable yet"
    );
    t.advance_secs(10);
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the end of the delay wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the delayed message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), sent.message_id());
    t.shutdown().await;
}
