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

use aws_sdk_sqs::types::QueueAttributeName;

use crate::fifo::{cbd_queue, send_fifo};
use crate::harness::{
    DeadLetter, HANG_GUARD, LongPoll, TestServer, change_visibility, delete, handle, only,
    receive_vis,
};

/// Waits (within the hang guard) until one of `polls` has answered and takes it out.
async fn first_to_answer(polls: &mut Vec<LongPoll>, what: &str) -> LongPoll {
    for _ in 0..(HANG_GUARD.as_millis() / 50) {
        if let Some(i) = polls.iter().position(LongPoll::is_finished) {
            return polls.remove(i);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: no poll answered");
}

/// Three pollers on a FIFO queue; one gets g1-m1. Sending g1-m2 (behind the in-flight head)
/// wakes nobody; deleting g1-m1 frees the group and a poller gets g1-m2 at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_fifo_head_wakes_a_poller() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "wake.fifo", &[]).await;
    let mut polls: Vec<LongPoll> = (0..3).map(|_| t.long_poll(&url, 20)).collect();
    for p in &mut polls {
        p.assert_parked("empty queue").await;
    }
    send_fifo(&t, &url, "g1-m1", "g1", None).await;
    // Exactly one poller gets it; find which.
    let first = first_to_answer(&mut polls, "a poller gets g1-m1").await;
    let m1 = first.answer_message("g1-m1").await;
    assert_eq!(m1.body(), Some("g1-m1"));

    send_fifo(&t, &url, "g1-m2", "g1", None).await;
    for p in &mut polls {
        p.assert_parked("g1-m2 waits behind g1-m1, in flight").await;
    }

    delete(&t, &url, &m1).await;
    let got = first_to_answer(&mut polls, "the delete wakes a poller").await;
    assert_eq!(got.answer_body("g1-m2").await, "g1-m2");
    // The last poller is still parked; moving the clock past its wait ends it, empty.
    let mut last = polls.pop().expect("one left");
    last.assert_parked("nothing left to receive").await;
    t.advance_secs(20);
    let out = last.answer("the clock ends the wait").await;
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
    let m = only(receive_vis(&t, &url, 1, 600).await, "m");
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("m is in flight for 600 s").await;
    change_visibility(&t, &url, handle(&m), 0)
        .await
        .expect("ChangeMessageVisibility 0");
    let m_again = poll.answer_message("visible again").await;
    assert_eq!(m_again.body(), Some("m"));

    // The poll received m again (for the queue's 30 s); hide it for 600 s, then shorten that.
    let rh = handle(&m_again);
    change_visibility(&t, &url, rh, 600)
        .await
        .expect("hide for 600 s");
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("in flight for 600 s").await;
    change_visibility(&t, &url, rh, 1)
        .await
        .expect("shorten to 1 s");
    poll.assert_parked("1 s has not passed on the clock").await;
    // Move the clock without waking anyone: the poll's own sleep ends at the new, earlier time.
    t.clock.advance_ms(1000);
    assert_eq!(poll.answer_body("after the shortened timeout").await, "m");
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
    let head = receive_vis(&t, &url, 1, 1).await;
    assert_eq!(head.len(), 1, "{head:?}");
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("the head is in flight").await;
    t.clock.advance_ms(1000);
    assert_eq!(
        poll.answer_body("the head's visibility ran out").await,
        "head"
    );

    let url = t
        .create_queue("delay-sleep", &[(QueueAttributeName::DelaySeconds, "1")])
        .await;
    t.send(&url, "later").await;
    let mut poll = t.long_poll(&url, 20);
    poll.assert_parked("delayed").await;
    t.clock.advance_ms(1000);
    assert_eq!(poll.answer_body("the delay ended").await, "later");
    t.shutdown().await;
}

/// A message moved to a dead-letter queue during a receive, or back by a move task, wakes the
/// polls parked on the queue it arrives in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_arriving_by_redrive_or_move_task_wake_pollers() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, dlq_arn } = t
        .create_dead_letter_pair("wake-src", &[], "wake-dlq", &[], 1)
        .await;
    t.send(&src, "poison").await;
    let first = only(t.receive(&src, 1).await, "first receive");
    assert_eq!(first.body(), Some("poison"));
    t.advance_secs(31);

    let mut on_dlq = t.long_poll(&dlq, 20);
    on_dlq.assert_parked("the DLQ is empty").await;
    assert!(
        t.receive(&src, 1).await.is_empty(),
        "the second receive moves the message instead"
    );
    assert_eq!(on_dlq.answer_body("moved to the DLQ").await, "poison");
    t.advance_secs(31);

    let mut on_src = t.long_poll(&src, 20);
    on_src.assert_parked("the source is empty").await;
    t.client
        .start_message_move_task()
        .source_arn(&dlq_arn)
        .send()
        .await
        .expect("StartMessageMoveTask");
    assert_eq!(on_src.answer_body("moved back by the task").await, "poison");
    t.shutdown().await;
}
