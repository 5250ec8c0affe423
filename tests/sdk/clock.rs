//! The clock users can move (`/_localsqs/clock`, `RunningServer::advance/freeze/resume`):
//! every time-based rule follows it at once, in memory and with a data directory.
//!
//! The base clock is the harness's `ManualClock`, which never moves by itself here, so every
//! change of time below comes from the controlled clock under test.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use localsqs::engine::ManualClock;
use serde_json::Value;

use super::fifo::fifo_queue;
use super::harness::{START_MS, TestServer, bodies, create_queue_on, delete, expect_error, sys};
use super::http::exchange;

/// Sends a clock change over HTTP and returns the answered state.
async fn clock(t: &TestServer, body: &str) -> (u16, Value) {
    let resp = exchange(
        t.server.local_addr(),
        "POST",
        "/_localsqs/clock",
        &[("Content-Type", "application/json")],
        body,
    )
    .await
    .expect("answered");
    let v = serde_json::from_str(&resp.body).unwrap_or(Value::Null);
    (resp.status, v)
}

async fn advance(t: &TestServer, secs: f64) {
    let (status, v) = clock(t, &format!(r#"{{"advance_seconds": {secs}}}"#)).await;
    assert_eq!(status, 200, "{v}");
}

/// Runs `scenario` against a memory server and against a durable one.
async fn both_modes<F, Fut>(scenario: F)
where
    F: Fn(TestServer) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    scenario(TestServer::start().await).await;
    let dir = tempfile::tempdir().expect("tempdir");
    scenario(TestServer::start_with(Arc::new(ManualClock::new(START_MS)), Some(dir.path())).await)
        .await;
}

#[tokio::test]
async fn get_shows_the_clock_and_post_changes_it() {
    let t = TestServer::start().await;
    let shown = exchange(t.server.local_addr(), "GET", "/_localsqs/clock", &[], "")
        .await
        .expect("answered");
    let v: Value = serde_json::from_str(&shown.body).expect("json");
    assert_eq!(v["now_ms"], START_MS);
    assert_eq!(v["offset_ms"], 0);
    assert_eq!(v["frozen"], false);
    let (_, v) = clock(&t, r#"{"advance_seconds": 1.5}"#).await;
    assert_eq!(v["now_ms"], START_MS + 1500);
    assert_eq!(v["offset_ms"], 1500);
    let (_, v) = clock(&t, r#"{"freeze": true}"#).await;
    assert_eq!(v["frozen"], true);
    t.clock.advance_ms(10_000);
    let (_, v) = clock(&t, r#"{"advance_seconds": 0}"#).await;
    assert_eq!(v["now_ms"], START_MS + 1500, "frozen time does not run");
    let (_, v) = clock(&t, r#"{"freeze": false}"#).await;
    assert_eq!(v["frozen"], false);
    assert_eq!(v["now_ms"], START_MS + 1500, "resumes from where it stood");
    let (status, v) = clock(&t, r#"{"advance_seconds": -5}"#).await;
    assert_eq!(status, 400);
    assert!(
        v["error"].as_str().unwrap_or("").contains("backwards"),
        "{v}"
    );
    let (_, v) = clock(&t, r#"{"reset": true}"#).await;
    assert_eq!(v["offset_ms"], 0);
    assert_eq!(v["now_ms"], START_MS + 10_000);
    t.shutdown().await;
}

#[tokio::test]
async fn visibility_timeouts_and_sent_timestamps_follow_the_clock() {
    both_modes(|t| async move {
        let url = t
            .create_queue("vis", &[(QueueAttributeName::VisibilityTimeout, "30")])
            .await;
        advance(&t, 1000.0).await;
        t.send(&url, "m").await;
        let got = t.receive(&url, 1).await;
        assert_eq!(
            sys(&got[0], &MessageSystemAttributeName::SentTimestamp),
            Some((START_MS + 1_000_000).to_string().as_str())
        );
        advance(&t, 29.0).await;
        assert!(t.receive(&url, 1).await.is_empty(), "still in flight");
        advance(&t, 1.0).await;
        assert_eq!(
            bodies(&t.receive(&url, 1).await),
            ["m"],
            "visible again at 30 s"
        );
        t.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn message_and_queue_delays_follow_the_clock() {
    both_modes(|t| async move {
        let url = t
            .create_queue("delayed", &[(QueueAttributeName::DelaySeconds, "60")])
            .await;
        t.send(&url, "queue-delay").await;
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("own-delay")
            .delay_seconds(900)
            .send()
            .await
            .expect("sends");
        assert_eq!(t.counts(&url).await, (0, 0, 2));
        advance(&t, 60.0).await;
        let first = t.receive(&url, 10).await;
        assert_eq!(bodies(&first), ["queue-delay"]);
        super::harness::delete(&t, &url, &first[0]).await;
        advance(&t, 840.0).await;
        assert_eq!(bodies(&t.receive(&url, 10).await), ["own-delay"]);
        t.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn retention_follows_the_clock() {
    both_modes(|t| async move {
        let url = t
            .create_queue(
                "short",
                &[(QueueAttributeName::MessageRetentionPeriod, "60")],
            )
            .await;
        t.send(&url, "old").await;
        advance(&t, 61.0).await;
        assert!(t.receive(&url, 10).await.is_empty(), "expired by retention");
        assert_eq!(t.counts(&url).await, (0, 0, 0));
        t.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn fifo_deduplication_and_receive_attempt_windows_follow_the_clock() {
    both_modes(|t| async move {
        let url = fifo_queue(
            &t,
            "dedup.fifo",
            &[(QueueAttributeName::VisibilityTimeout, "900")],
        )
        .await;
        let send = |body: &'static str| {
            t.client
                .send_message()
                .queue_url(&url)
                .message_body(body)
                .message_group_id("g")
                .message_deduplication_id("same")
                .send()
        };
        send("first").await.expect("sends");
        advance(&t, 299.0).await;
        send("deduplicated").await.expect("accepted and dropped");
        let receive = || {
            t.client
                .receive_message()
                .queue_url(&url)
                .max_number_of_messages(10)
                .receive_request_attempt_id("attempt")
                .send()
        };
        let once = receive()
            .await
            .expect("receives")
            .messages
            .unwrap_or_default();
        assert_eq!(bodies(&once), ["first"]);
        let retry = receive().await.expect("retry").messages.unwrap_or_default();
        assert_eq!(
            retry[0].receipt_handle, once[0].receipt_handle,
            "same attempt"
        );
        advance(&t, 301.0).await;
        let late = receive()
            .await
            .expect("receives")
            .messages
            .unwrap_or_default();
        assert!(
            late.is_empty(),
            "the attempt window closed; the group is in flight"
        );
        send("after-window").await.expect("sends");
        delete(&t, &url, &once[0]).await;
        assert_eq!(bodies(&t.receive(&url, 10).await), ["after-window"]);
        t.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn parked_long_polls_end_and_wake_on_the_controlled_clock() {
    both_modes(|t| async move {
        let url = t.create_queue("poll", &[]).await;
        let mut poll = t.long_poll(&url, 20);
        poll.assert_parked("an empty queue").await;
        advance(&t, 20.0).await;
        let got = poll.answer("the 20 s wait elapsed on the clock").await;
        assert!(got.messages.unwrap_or_default().is_empty());
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("later")
            .delay_seconds(10)
            .send()
            .await
            .expect("sends");
        let mut poll = t.long_poll(&url, 20);
        poll.assert_parked("the message is delayed").await;
        advance(&t, 10.0).await;
        let got = poll.answer_message("woken by the advance").await;
        assert_eq!(got.body(), Some("later"));
        t.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn purge_cool_off_follows_the_clock_when_enforced() {
    let dir = tempfile::tempdir().expect("tempdir");
    for durable in [false, true] {
        let mut builder = localsqs::Server::builder()
            .clock(Arc::new(ManualClock::new(START_MS)))
            .enforce_cooloffs(true);
        if durable {
            builder = builder.data_dir(dir.path());
        }
        let server = builder.start().await.expect("starts");
        let sqs = super::harness::client(&server.endpoint());
        let url = create_queue_on(&sqs, "purged").await;
        sqs.purge_queue()
            .queue_url(&url)
            .send()
            .await
            .expect("purges");
        let again = sqs.purge_queue().queue_url(&url).send().await;
        expect_error(
            "second purge",
            again,
            403,
            "AWS.SimpleQueueService.PurgeQueueInProgress",
            None,
        );
        server.advance(Duration::from_secs(60));
        sqs.purge_queue()
            .queue_url(&url)
            .send()
            .await
            .expect("after 60 s");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn the_rust_api_freezes_resumes_and_advances() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    server.freeze();
    let frozen = server.clock();
    assert!(frozen.frozen);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(server.clock().now_ms, frozen.now_ms, "frozen");
    server.advance(Duration::from_secs(90));
    assert_eq!(server.clock().now_ms, frozen.now_ms + 90_000);
    server.resume();
    assert!(!server.clock().frozen);
    assert!(server.clock().now_ms >= frozen.now_ms + 90_000);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_task_pacing_follows_the_clock() {
    use crate::harness::DeadLetter;
    use crate::move_tasks::{poison, quick_pair, start_task, wait_moved, wait_status};
    both_modes(|t| async move {
        let DeadLetter { src, dlq_arn, .. } = quick_pair(&t, "src", "dlq").await;
        poison(&t, &src, &["a", "b", "c", "d"]).await;
        start_task(&t, &dlq_arn, None, Some(2)).await;
        wait_moved(&t, &dlq_arn, 2).await;
        advance(&t, 1.0).await;
        wait_moved(&t, &dlq_arn, 4).await;
        wait_status(&t, &dlq_arn, "COMPLETED").await;
        assert_eq!(t.counts(&src).await, (4, 0, 0));
        t.shutdown().await;
    })
    .await;
}

/// docs/clock-and-faults.md's example, verbatim in spirit: a redrive after 3 × 30-second visibility
/// timeouts, checked in milliseconds of real time.
#[tokio::test]
async fn readme_redrive_after_three_visibility_timeouts() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let sqs = super::harness::client(&server.endpoint());
    let dlq = sqs
        .create_queue()
        .queue_name("orders-dlq")
        .send()
        .await
        .expect("dlq");
    let dlq_url = dlq.queue_url().unwrap_or_default();
    let dlq_arn = sqs
        .get_queue_attributes()
        .queue_url(dlq_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("arn")
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .unwrap_or_default();
    let policy = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"3"}}"#);
    let url = sqs
        .create_queue()
        .queue_name("orders")
        .attributes(QueueAttributeName::VisibilityTimeout, "30")
        .attributes(QueueAttributeName::RedrivePolicy, policy)
        .send()
        .await
        .expect("source")
        .queue_url
        .unwrap_or_default();
    sqs.send_message()
        .queue_url(&url)
        .message_body("poison")
        .send()
        .await
        .expect("sent");
    for _ in 0..3 {
        let got = sqs
            .receive_message()
            .queue_url(&url)
            .send()
            .await
            .expect("receive");
        assert_eq!(got.messages().len(), 1, "received, and the consumer fails");
        server.advance(Duration::from_secs(30)); // the visibility timeout passes at once
    }
    let fourth = sqs
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("receive");
    assert!(fourth.messages().is_empty(), "moved to the DLQ instead");
    let dead = sqs
        .receive_message()
        .queue_url(dlq_url)
        .send()
        .await
        .expect("receive");
    assert_eq!(dead.messages()[0].body(), Some("poison"));
    server.shutdown().await;
}

/// The seconds the clock can still move from `START_MS` before it passes `MAX_TIME_MS`.
const ROOM_S: u64 = (localsqs::engine::MAX_TIME_MS - START_MS) / 1000;

/// Issue 29, finding 7: after the clock was moved past 2^46 ms, SendMessage answered 200 and
/// the message was never seen again. Now a move past the range the engine stores is refused
/// (400, naming the limit) and leaves the clock where it was; up to it, a message sent is
/// received (SDK, JSON protocol).
#[tokio::test]
async fn the_clock_refuses_to_pass_the_range_the_engine_stores() {
    let t = TestServer::start().await;
    let url = t.create_queue("late", &[]).await;
    let limit = localsqs::engine::MAX_TIME_MS.to_string();
    for body in [
        format!(r#"{{"advance_seconds": {}}}"#, ROOM_S + 1),
        format!(r#"{{"advance_seconds": {}}}"#, 1u64 << 37),
        format!(r#"{{"reset": true, "advance_seconds": {}}}"#, ROOM_S + 1),
    ] {
        let (status, v) = clock(&t, &body).await;
        assert_eq!(status, 400, "{body}: {v}");
        let e = v["error"].as_str().unwrap_or("");
        assert!(e.contains(&limit) && e.contains("4199"), "{body}: {v}");
    }
    assert_eq!(t.server.clock().now_ms, START_MS, "refused: unchanged");
    let past = t.server.try_advance(Duration::from_secs(ROOM_S + 1));
    assert!(past.is_err(), "the Rust API refuses too");
    assert_eq!(t.server.clock().now_ms, START_MS);

    advance(&t, ROOM_S as f64).await;
    assert!(t.server.clock().now_ms <= localsqs::engine::MAX_TIME_MS);
    t.send(&url, "in 4199").await;
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["in 4199"], "acknowledged and kept");
    t.shutdown().await;
}

/// The config file's `[clock] advance_seconds` is held to the same range: the server does not
/// start, and says why.
#[tokio::test]
async fn a_declared_advance_past_the_range_stops_the_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("localsqs.toml");
    std::fs::write(
        &path,
        format!("[clock]\nadvance_seconds = {}\n", 1u64 << 37),
    )
    .expect("writes");
    let started = localsqs::Server::builder()
        .clock(Arc::new(ManualClock::new(START_MS)))
        .config_file(&path)
        .start()
        .await;
    let err = started.expect_err("refused").to_string();
    assert!(
        err.contains("advance_seconds") && err.contains(&localsqs::engine::MAX_TIME_MS.to_string()),
        "{err}"
    );
}

/// Whatever the clock says, nothing acknowledged is lost to arithmetic: with the base clock
/// itself past the range (an embedder's clock, or a system clock in the year 4200), a send is
/// refused with an error in both protocols instead of answering 200 and vanishing, and the
/// rest of the API keeps working.
#[tokio::test]
async fn past_the_range_a_send_is_refused_never_lost() {
    let t = TestServer::start().await;
    let url = t.create_queue("beyond", &[]).await;
    t.clock.set_ms((1 << 46) + 1000);
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("json")
        .send()
        .await;
    let err = expect_error("a send past the range", sent, 500, "InternalError", None);
    let text = aws_sdk_sqs::error::ProvideErrorMetadata::message(&err).unwrap_or_default();
    assert!(text.contains("past the latest time"), "{text}");
    let form = format!(
        "Action=SendMessage&Version=2012-11-05&QueueUrl={}&MessageBody=query",
        url.replace(':', "%3A").replace('/', "%2F")
    );
    let resp = exchange(
        t.server.local_addr(),
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &form,
    )
    .await
    .expect("answered");
    assert_eq!(resp.status, 500, "{}", resp.body);
    assert!(
        resp.body.contains("<Code>InternalError</Code>")
            && resp.body.contains("past the latest time"),
        "{}",
        resp.body
    );
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "nothing was acknowledged"
    );
    t.clock.set_ms(START_MS + 1000);
    t.send(&url, "back in range").await;
    assert_eq!(bodies(&t.receive(&url, 10).await), ["back in range"]);
    t.shutdown().await;
}
