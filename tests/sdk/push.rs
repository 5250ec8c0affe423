//! Push delivery: targets read queues and hand Lambda-shaped batches to a scripted HTTP handler
//! (`push/handler.rs`) or a program (`push/command.rs`), deleting what succeeded and leaving
//! failures to come back, to the dead-letter queue in the end. Time moves only through the
//! harness's clock (visibility timeouts, invocation timeouts, batching windows).

mod admin;
mod command;
mod handler;

use std::collections::HashSet;

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use localsqs::push::{PushTarget, RIE_PATH, TargetStatus};
use serde_json::{Value, json};

use super::fifo::{cbd_queue, send_fifo};
use super::harness::{
    DeadLetter, START_MS, TestServer, arn, binary_attr, md5_hex, receive_full, string_attr, sys,
};
use handler::{Answer, Handler, eventually};

/// The listing entry of target `id`.
fn status(t: &TestServer, id: &str) -> TargetStatus {
    t.server
        .push_targets()
        .list()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("push target {id} is listed"))
}

/// Waits until target `id` has finished `n` invocations.
async fn wait_invocations(t: &TestServer, id: &str, n: u64) -> TargetStatus {
    eventually(&format!("{n} invocations of {id}"), || {
        let s = status(t, id);
        async move { (s.stats.invocations >= n).then_some(s) }
    })
    .await
}

/// Waits until the queue's (visible, in flight, delayed) counts are `want`.
async fn wait_counts(t: &TestServer, url: &str, want: (u64, u64, u64)) {
    eventually(&format!("counts {want:?} of {url}"), || async move {
        (t.counts(url).await == want).then_some(())
    })
    .await;
}

fn target(queue: &str, handler: &Handler) -> PushTarget {
    PushTarget {
        max_concurrency: 1,
        ..PushTarget::http(queue, &handler.url())
    }
}

fn receive_counts(call: &handler::Call) -> Vec<&str> {
    call.records()
        .iter()
        .map(|r| {
            r["attributes"]["ApproximateReceiveCount"]
                .as_str()
                .unwrap_or("?")
        })
        .collect()
}

#[tokio::test]
async fn a_batch_arrives_as_lambdas_event_and_is_deleted_after_success() {
    let t = TestServer::start().await;
    let url = t.create_queue("orders", &[]).await;
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(r#"{"kind":"order"}"#)
        .message_attributes("Kind", string_attr("String", "order"))
        .message_attributes("Count", string_attr("Number.int", "3"))
        .message_attributes("Raw", binary_attr("Binary", b"\x00\x01\xfe"))
        .send()
        .await
        .expect("sent");
    let h = Handler::start(|_, _| Answer::ok()).await;
    let id = t
        .server
        .push_targets()
        .add(target("orders", &h))
        .expect("valid");

    let call = h.wait_calls(1).await.remove(0);
    assert_eq!(
        call.path, RIE_PATH,
        "a URL without a path reaches the RIE's"
    );
    let r = &call.records()[0];
    assert_eq!(call.records().len(), 1);
    assert_eq!(r["messageId"], sent.message_id().expect("id"));
    assert!(r["receiptHandle"].as_str().is_some_and(|h| !h.is_empty()));
    assert_eq!(r["body"], r#"{"kind":"order"}"#);
    assert_eq!(r["md5OfBody"], md5_hex(br#"{"kind":"order"}"#));
    assert_eq!(r["eventSource"], "aws:sqs");
    assert_eq!(r["eventSourceARN"], arn(&t, &url).await);
    assert_eq!(r["awsRegion"], "us-east-1");
    let attributes = r["attributes"].as_object().expect("attributes");
    assert_eq!(attributes["ApproximateReceiveCount"], "1");
    assert_eq!(attributes["SentTimestamp"], START_MS.to_string());
    assert_eq!(
        attributes["ApproximateFirstReceiveTimestamp"],
        START_MS.to_string()
    );
    assert_eq!(attributes["SenderId"], "000000000000");
    assert!(!attributes.contains_key("MessageGroupId"));
    assert_eq!(
        r["messageAttributes"],
        json!({
            "Count": { "stringValue": "3", "stringListValues": [], "binaryListValues": [], "dataType": "Number.int" },
            "Kind": { "stringValue": "order", "stringListValues": [], "binaryListValues": [], "dataType": "String" },
            "Raw": { "binaryValue": "AAH+", "stringListValues": [], "binaryListValues": [], "dataType": "Binary" },
        })
    );

    wait_counts(&t, &url, (0, 0, 0)).await;
    let s = wait_invocations(&t, &id, 1).await;
    assert_eq!(s.stats.messages_deleted, 1);
    assert_eq!(s.stats.failures, 0);
    let last = &s.stats.last_invocations[0];
    assert_eq!((last.at_ms, last.batch_size), (START_MS, 1));
    assert_eq!(last.outcome.as_str(), "success");
    t.assert_metric(r#"localsqs_push_invocations_total{queue="orders"} 1"#)
        .await;
    t.shutdown().await;
}

#[tokio::test]
async fn a_failed_batch_comes_back_with_a_higher_receive_count() {
    let t = TestServer::start().await;
    let url = t
        .create_queue("jobs", &[(QueueAttributeName::VisibilityTimeout, "30")])
        .await;
    t.send(&url, "a").await;
    t.send(&url, "b").await;
    // A 500, the RIE's payload for a failed function, the invoke API's header, then success.
    let h = Handler::start(|n, _| match n {
        0 => Answer::Status(500, "upstream broke".into()),
        1 => Answer::Status(
            200,
            r#"{"errorMessage":"boom","errorType":"ValueError","stackTrace":[]}"#.into(),
        ),
        2 => Answer::FunctionError(r#"{"errorMessage":"bad","errorType":"Error"}"#.into()),
        _ => Answer::ok(),
    })
    .await;
    let target = PushTarget {
        url: Some(format!("{}/custom/invoke?x=1", h.url())),
        ..target("jobs", &h)
    };
    let id = t.server.push_targets().add(target).expect("valid");
    let errors = [
        "HTTP 500: upstream broke",
        "function error: ValueError: boom",
        "function error (Unhandled): Error: bad",
    ];
    for (n, error) in errors.iter().enumerate() {
        let s = wait_invocations(&t, &id, n as u64 + 1).await;
        let last = s.stats.last_invocations.back().expect("an invocation");
        assert_eq!(last.outcome.as_str(), "failure");
        assert_eq!(last.error.as_deref(), Some(*error));
        assert_eq!(s.stats.failures, n as u64 + 1);
        wait_counts(&t, &url, (0, 2, 0)).await;
        t.advance_secs(30);
    }
    let calls = h.wait_calls(4).await;
    assert_eq!(
        calls[0].path, "/custom/invoke?x=1",
        "a URL's own path is used"
    );
    for (n, call) in calls.iter().enumerate() {
        let mut bodies = call.bodies();
        bodies.sort();
        assert_eq!(bodies, ["a", "b"]);
        let count = (n + 1).to_string();
        assert_eq!(receive_counts(call), [count.as_str(), count.as_str()]);
    }
    wait_counts(&t, &url, (0, 0, 0)).await;
    let s = wait_invocations(&t, &id, 4).await;
    assert_eq!((s.stats.messages_failed, s.stats.messages_deleted), (6, 2));
    t.assert_metric(r#"localsqs_push_failures_total{queue="jobs"} 3"#)
        .await;
    t.shutdown().await;
}

#[tokio::test]
async fn batch_item_failures_keep_only_the_failed_messages() {
    let t = TestServer::start().await;
    let url = t.create_queue("items", &[]).await;
    let ids = [
        t.send(&url, "a").await,
        t.send(&url, "b").await,
        t.send(&url, "c").await,
    ];
    let b = ids[1].clone();
    let h = Handler::start(move |n, _| match n {
        0 => Answer::Status(
            200,
            json!({ "batchItemFailures": [{ "itemIdentifier": b }] }).to_string(),
        ),
        // An identifier that is not in the batch fails the whole batch, as in Lambda.
        1 => Answer::Status(
            200,
            r#"{"batchItemFailures":[{"itemIdentifier":"nope"}]}"#.into(),
        ),
        _ => Answer::Status(200, r#"{"batchItemFailures":[]}"#.into()),
    })
    .await;
    let target = PushTarget {
        report_batch_item_failures: true,
        ..target("items", &h)
    };
    let id = t.server.push_targets().add(target).expect("valid");
    let s = wait_invocations(&t, &id, 1).await;
    let last = &s.stats.last_invocations[0];
    assert_eq!(last.outcome.as_str(), "partial");
    assert_eq!(last.failed_items, [ids[1].clone()]);
    wait_counts(&t, &url, (0, 1, 0)).await;
    t.advance_secs(30);
    let s = wait_invocations(&t, &id, 2).await;
    let last = s.stats.last_invocations.back().expect("an invocation");
    assert_eq!(last.outcome.as_str(), "failure");
    assert!(
        last.error
            .as_deref()
            .is_some_and(|e| e.contains("\"nope\"")),
        "{last:?}"
    );
    t.advance_secs(30);
    let calls = h.wait_calls(3).await;
    assert_eq!(calls[0].records().len(), 3);
    for call in &calls[1..] {
        assert_eq!(call.bodies(), ["b"]);
    }
    assert_eq!(receive_counts(&calls[2]), ["3"]);
    wait_counts(&t, &url, (0, 0, 0)).await;
    t.assert_metric(r#"localsqs_push_item_failures_total{queue="items"} 1"#)
        .await;
    t.shutdown().await;
}

#[tokio::test]
async fn a_handler_slower_than_the_visibility_timeout_fails_the_batch() {
    let t = TestServer::start().await;
    let url = t
        .create_queue("slow", &[(QueueAttributeName::VisibilityTimeout, "20")])
        .await;
    t.send(&url, "m").await;
    let h = Handler::start(|n, _| if n == 1 { Answer::ok() } else { Answer::Hang }).await;
    let id = t
        .server
        .push_targets()
        .add(target("slow", &h))
        .expect("valid");
    h.wait_calls(1).await;
    t.advance_secs(20);
    let s = wait_invocations(&t, &id, 1).await;
    let last = &s.stats.last_invocations[0];
    assert_eq!(last.outcome.as_str(), "timeout");
    assert_eq!(
        last.error.as_deref(),
        Some("timed out after 20 s (the queue's VisibilityTimeout)")
    );
    let calls = h.wait_calls(2).await;
    assert_eq!(receive_counts(&calls[1]), ["2"]);
    wait_counts(&t, &url, (0, 0, 0)).await;
    // Shutdown does not wait for a handler that never answers.
    t.send(&url, "stuck").await;
    h.wait_calls(3).await;
    t.shutdown().await;
}

#[tokio::test]
async fn poison_messages_move_to_the_dead_letter_queue() {
    let t = TestServer::start().await;
    let DeadLetter { src: url, dlq, .. } = t
        .create_dead_letter_pair("poison", &[], "poison-dlq", &[], 2)
        .await;
    let h = Handler::start(|_, _| Answer::Status(500, String::new())).await;
    let id = t
        .server
        .push_targets()
        .add(target("poison", &h))
        .expect("valid");
    t.send(&url, "poison pill").await;
    wait_invocations(&t, &id, 1).await;
    t.advance_secs(30);
    wait_invocations(&t, &id, 2).await;
    t.advance_secs(30);
    wait_counts(&t, &dlq, (1, 0, 0)).await;
    wait_counts(&t, &url, (0, 0, 0)).await;
    let moved = receive_full(&t, &dlq, 1).await;
    assert_eq!(moved[0].body(), Some("poison pill"));
    assert_eq!(
        sys(
            &moved[0],
            &MessageSystemAttributeName::DeadLetterQueueSourceArn
        ),
        Some(arn(&t, &url).await.as_str())
    );
    let calls = h.calls();
    assert_eq!(
        calls.len(),
        2,
        "the third receive moved the message instead"
    );
    assert_eq!(receive_counts(&calls[1]), ["2"]);
    t.shutdown().await;
}

#[tokio::test]
async fn a_filter_deletes_what_does_not_match_without_invoking() {
    let t = TestServer::start().await;
    let url = t.create_queue("filtered", &[]).await;
    for body in [
        r#"{"kind":"order","n":7}"#,
        r#"{"kind":"refund"}"#,
        "plain text",
        r#"{"kind":"order","n":1}"#,
    ] {
        t.send(&url, body).await;
    }
    let h = Handler::start(|_, _| Answer::ok()).await;
    let target = PushTarget {
        filter: Some(json!({ "body": { "kind": ["order"], "n": [{ "numeric": [">", 5] }] } })),
        ..target("filtered", &h)
    };
    let id = t.server.push_targets().add(target).expect("valid");
    wait_counts(&t, &url, (0, 0, 0)).await;
    let s = eventually("filtered messages counted", || {
        let s = status(&t, &id);
        async move { (s.stats.messages_filtered + s.stats.messages_deleted == 4).then_some(s) }
    })
    .await;
    assert_eq!(
        (s.stats.messages_filtered, s.stats.messages_deleted),
        (3, 1)
    );
    let delivered: Vec<String> = h.calls().iter().flat_map(handler::Call::bodies).collect();
    assert_eq!(delivered, [r#"{"kind":"order","n":7}"#]);
    // Only matching records were ever sent: nothing else reached the handler.
    assert_eq!(s.stats.invocations, 1);
    t.assert_metric(r#"localsqs_push_messages_filtered_total{queue="filtered"} 3"#)
        .await;
    t.shutdown().await;
}

#[tokio::test]
async fn the_batching_window_holds_a_batch_until_it_closes_on_the_servers_clock() {
    let t = TestServer::start().await;
    let url = t
        .create_queue(
            "windowed",
            &[(QueueAttributeName::VisibilityTimeout, "300")],
        )
        .await;
    let h = Handler::start(|_, _| Answer::ok()).await;
    let target = PushTarget {
        batch_size: 50,
        maximum_batching_window_seconds: 60,
        ..target("windowed", &h)
    };
    let id = t.server.push_targets().add(target).expect("valid");
    for body in ["1", "2", "3"] {
        t.send(&url, body).await;
    }
    wait_counts(&t, &url, (0, 3, 0)).await;
    assert!(h.calls().is_empty(), "the window is still open");
    assert_eq!(status(&t, &id).stats.invocations, 0);
    t.advance_secs(60);
    let calls = h.wait_calls(1).await;
    let mut bodies = calls[0].bodies();
    bodies.sort();
    assert_eq!(bodies, ["1", "2", "3"], "one batch of everything gathered");
    wait_counts(&t, &url, (0, 0, 0)).await;
    t.shutdown().await;
}

#[tokio::test]
async fn fifo_groups_keep_their_order_and_are_never_in_two_batches_at_once() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "ordered.fifo", &[]).await;
    let groups = [("g1", 7), ("g2", 5), ("g3", 4)];
    let mut sent: Vec<(String, String)> = Vec::new();
    for i in 0..7 {
        for (g, n) in groups {
            if i < n {
                let body = format!("{g}-{i}");
                send_fifo(&t, &url, &body, g, None).await;
                sent.push((g.to_owned(), body));
            }
        }
    }
    // Three batches at once, each answered a little late so that they overlap; the first fails.
    let h = Handler::start_slow(std::time::Duration::from_millis(20), |n, _| {
        if n == 0 {
            Answer::Status(500, String::new())
        } else {
            Answer::ok()
        }
    })
    .await;
    let target = PushTarget {
        batch_size: 3,
        max_concurrency: 3,
        ..PushTarget::http("ordered.fifo", &h.url())
    };
    let id = t.server.push_targets().add(target).expect("valid");
    let first = h.wait_calls(1).await.remove(0);
    let failed_groups: HashSet<String> = group_of(first.records()).into_iter().collect();
    let held = sent
        .iter()
        .filter(|(g, _)| failed_groups.contains(g))
        .count() as u64;
    let others = sent.len() as u64 - held;
    eventually("every other group delivered", || {
        let s = status(&t, &id);
        async move { (s.stats.messages_deleted == others).then_some(()) }
    })
    .await;
    t.advance_secs(30);
    wait_counts(&t, &url, (0, 0, 0)).await;

    assert!(
        h.overlaps().is_empty(),
        "groups in two batches at once: {:?}",
        h.overlaps()
    );
    let calls = h.calls();
    let r = &first.records()[0];
    for name in ["MessageGroupId", "MessageDeduplicationId", "SequenceNumber"] {
        assert!(r["attributes"][name].is_string(), "{name} in {r}");
    }
    let delivered: Vec<&Value> = calls[1..].iter().flat_map(|c| c.records()).collect();
    for (g, _) in groups {
        let want: Vec<&str> = sent
            .iter()
            .filter(|(sg, _)| sg == g)
            .map(|(_, b)| b.as_str())
            .collect();
        let got: Vec<&str> = delivered
            .iter()
            .filter(|r| r["attributes"]["MessageGroupId"] == g)
            .map(|r| r["body"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            got, want,
            "group {g}: in order, each message once after the failure"
        );
    }
    t.shutdown().await;
}

/// The MessageGroupId of each record.
fn group_of(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            r["attributes"]["MessageGroupId"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}
