//! What wakes a parked long poll (docs/protocol.md §6.7, §6.9, §6.10, §6.11): every event that
//! makes a message receivable (a send, a delete that frees a FIFO group, a visibility change,
//! a move to a dead-letter queue or by a move task, time moved by a controlled clock), and the
//! poll's own sleep until the next visibility or delay expiry. An event that makes nothing
//! receivable leaves parked polls parked.
//!
//! "Still parked" is shown by a bounded wait while the injected clock stands still (a correct
//! server cannot answer within it); "woken" by an answer within the hang guard. No assertion is
//! about how long anything took.

use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput;
use aws_sdk_sqs::types::{Message, QueueAttributeName};
use tokio::task::JoinHandle;

use crate::fifo::{cbd_queue, send_fifo};
use crate::harness::{
    HANG_GUARD, TestServer, arn, change_visibility, delete, handle, only, policy,
};

/// How long a parked poll is given to prove it is still parked.
const STILL_WAITING: Duration = Duration::from_millis(200);

type Poll = JoinHandle<ReceiveMessageOutput>;

/// A long poll (20 s, one message, the queue's visibility timeout) in the background.
fn park(client: &Client, url: &str) -> Poll {
    let (client, url) = (client.clone(), url.to_owned());
    tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(url)
            .wait_time_seconds(20)
            .send()
            .await
            .expect("ReceiveMessage")
    })
}

/// Asserts that `poll` has not answered yet.
async fn still_parked(poll: &mut Poll, what: &str) {
    assert!(
        tokio::time::timeout(STILL_WAITING, poll).await.is_err(),
        "{what}: the poll should still be waiting"
    );
}

/// The one message `poll` answers with, waiting at most the hang guard.
async fn answer_message(poll: Poll, what: &str) -> Message {
    let out = tokio::time::timeout(HANG_GUARD, poll)
        .await
        .unwrap_or_else(|_| panic!("{what}: the poll was not woken"))
        .expect("task");
    only(out.messages.unwrap_or_default(), what)
}

/// The body of the one message `poll` answers with.
async fn answer(poll: Poll, what: &str) -> String {
    let m = answer_message(poll, what).await;
    m.body().expect("Body").to_owned()
}

/// Three pollers on a FIFO queue; one gets g1-m1. Sending g1-m2 (behind the in-flight head)
/// wakes nobody; deleting g1-m1 frees the group and a poller gets g1-m2 at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_fifo_head_wakes_a_poller() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "wake.fifo", &[]).await;
    let mut polls: Vec<Poll> = (0..3).map(|_| park(&t.client, &url)).collect();
    for p in &mut polls {
        still_parked(p, "empty queue").await;
    }
    send_fifo(&t, &url, "g1-m1", "g1", None).await;
    // Exactly one poller gets it; find which.
    let mut first = None;
    for _ in 0..(HANG_GUARD.as_millis() / 50) {
        if let Some(i) = polls.iter().position(JoinHandle::is_finished) {
            first = Some(polls.remove(i));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let first = first.expect("a poller gets g1-m1");
    let out = first.await.expect("task");
    let m1 = only(out.messages.unwrap_or_default(), "g1-m1");
    assert_eq!(m1.body(), Some("g1-m1"));

    send_fifo(&t, &url, "g1-m2", "g1", None).await;
    for p in &mut polls {
        still_parked(p, "g1-m2 waits behind g1-m1, in flight").await;
    }

    delete(&t, &url, &m1).await;
    let mut got = None;
    for _ in 0..(HANG_GUARD.as_millis() / 50) {
        if let Some(i) = polls.iter().position(JoinHandle::is_finished) {
            got = Some(polls.remove(i));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = got.expect("the delete wakes a poller");
    assert_eq!(answer(got, "g1-m2").await, "g1-m2");
    // The last poller is still parked; moving the clock past its wait ends it, empty.
    let mut last = polls.pop().expect("one left");
    still_parked(&mut last, "nothing left to receive").await;
    t.advance_secs(20);
    let out = tokio::time::timeout(HANG_GUARD, last)
        .await
        .expect("the clock ends the wait")
        .expect("task");
    assert!(out.messages.is_none(), "{out:?}");
    t.shutdown().await;
}

/// ChangeMessageVisibility to 0 wakes a poller at once; one to a shorter timeout wakes it when
/// that shorter timeout runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_changes_wake_pollers() {
    let t = TestServer::start().await;
    let url = t.create_queue("wake-visibility", &[]).await;
    t.send(&url, "m").await;
    let m = only(
        t.client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(600)
            .send()
            .await
            .expect("ReceiveMessage")
            .messages
            .unwrap_or_default(),
        "m",
    );
    let mut poll = park(&t.client, &url);
    still_parked(&mut poll, "m is in flight for 600 s").await;
    change_visibility(&t, &url, handle(&m), 0)
        .await
        .expect("ChangeMessageVisibility 0");
    let m_again = answer_message(poll, "visible again").await;
    assert_eq!(m_again.body(), Some("m"));

    // The poll received m again (for the queue's 30 s); hide it for 600 s, then shorten that.
    let rh = handle(&m_again);
    change_visibility(&t, &url, rh, 600)
        .await
        .expect("hide for 600 s");
    let mut poll = park(&t.client, &url);
    still_parked(&mut poll, "in flight for 600 s").await;
    change_visibility(&t, &url, rh, 1)
        .await
        .expect("shorten to 1 s");
    still_parked(&mut poll, "1 s has not passed on the clock").await;
    // Move the clock without waking anyone: the poll's own sleep ends at the new, earlier time.
    t.clock.advance_ms(1000);
    assert_eq!(answer(poll, "after the shortened timeout").await, "m");
    t.shutdown().await;
}

/// Visibility and delay expiry wake a poll through its own sleep, without `wake_all`: the
/// clock is moved, parked polls are not told, and they still answer (on a FIFO queue too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_wakes_pollers_through_their_sleep() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "expiry-sleep.fifo", &[]).await;
    send_fifo(&t, &url, "head", "g", None).await;
    send_fifo(&t, &url, "next", "g", None).await;
    let head = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(1)
        .send()
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default();
    assert_eq!(head.len(), 1, "{head:?}");
    let mut poll = park(&t.client, &url);
    still_parked(&mut poll, "the head is in flight").await;
    t.clock.advance_ms(1000);
    assert_eq!(answer(poll, "the head's visibility ran out").await, "head");

    let url = t
        .create_queue("delay-sleep", &[(QueueAttributeName::DelaySeconds, "1")])
        .await;
    t.send(&url, "later").await;
    let mut poll = park(&t.client, &url);
    still_parked(&mut poll, "delayed").await;
    t.clock.advance_ms(1000);
    assert_eq!(answer(poll, "the delay ended").await, "later");
    t.shutdown().await;
}

/// A message moved to a dead-letter queue during a receive, or back by a move task, wakes the
/// polls parked on the queue it arrives in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_arriving_by_redrive_or_move_task_wake_pollers() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("wake-dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t
        .create_queue(
            "wake-src",
            &[(QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 1))],
        )
        .await;
    t.send(&src, "poison").await;
    let first = only(t.receive(&src, 1).await, "first receive");
    assert_eq!(first.body(), Some("poison"));
    t.advance_secs(31);

    let mut on_dlq = park(&t.client, &dlq);
    still_parked(&mut on_dlq, "the DLQ is empty").await;
    assert!(
        t.receive(&src, 1).await.is_empty(),
        "the second receive moves the message instead"
    );
    assert_eq!(answer(on_dlq, "moved to the DLQ").await, "poison");
    t.advance_secs(31);

    let mut on_src = park(&t.client, &src);
    still_parked(&mut on_src, "the source is empty").await;
    t.client
        .start_message_move_task()
        .source_arn(&dlq_arn)
        .send()
        .await
        .expect("StartMessageMoveTask");
    assert_eq!(answer(on_src, "moved back by the task").await, "poison");
    t.shutdown().await;
}
