//! `/metrics` parsed as Prometheus text: per-queue counters and the age of the oldest message,
//! errors by action and code, and the cap on per-queue series. (The debug line of each request
//! is checked in `tests/debug_log.rs`, a binary of its own: a tracing subscriber set for one
//! test is only reliable when no other test runs beside it.)

use std::collections::BTreeMap;

use localsqs::MetricsOptions;

use crate::harness::TestServer;
use crate::http;

/// `/metrics` as `series → value`, where a series is the name with its labels as written.
fn parse(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

fn queue_series(name: &str, queue: &str) -> String {
    format!("{name}{{queue=\"{queue}\",account=\"000000000000\",region=\"us-east-1\"}}")
}

#[tokio::test]
async fn metrics_count_per_queue_and_errors_by_action_and_code() {
    let t = TestServer::start().await;
    let url = t.create_queue("ops-a", &[]).await;
    t.create_queue("ops-b", &[]).await;
    t.send(&url, "1").await;
    t.advance_secs(30);
    t.send(&url, "2").await;
    t.send(&url, "3").await;
    t.advance_secs(60);
    let age = |m: &BTreeMap<String, f64>, q: &str| {
        m.get(&queue_series(
            "localsqs_queue_approximate_age_of_oldest_message_seconds",
            q,
        ))
        .copied()
    };
    assert_eq!(age(&parse(&t.metrics().await), "ops-a"), Some(90.0));
    let got = t.receive(&url, 2).await;
    let first = got
        .iter()
        .find(|m| m.body() == Some("1"))
        .expect("the oldest is received first");
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(first.receipt_handle().expect("handle"))
        .send()
        .await
        .expect("DeleteMessage");
    for _ in 0..2 {
        let missing = t.client.get_queue_url().queue_name("nope").send().await;
        assert!(missing.is_err());
    }
    // Rejected while decoding: no MessageBody.
    let raw = http::exchange(
        t.server.local_addr(),
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", "AmazonSQS.SendMessage"),
        ],
        &format!("{{\"QueueUrl\":\"{url}\"}}"),
    )
    .await
    .expect("answered");
    assert_eq!(raw.status, 400, "{}", raw.body);

    let text = t.metrics().await;
    let m = parse(&text);
    let value = |series: &str| {
        *m.get(series)
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
    };
    assert_eq!(
        value(&queue_series("localsqs_queue_messages_sent_total", "ops-a")),
        3.0
    );
    assert_eq!(
        value(&queue_series(
            "localsqs_queue_messages_received_total",
            "ops-a"
        )),
        2.0
    );
    assert_eq!(
        value(&queue_series(
            "localsqs_queue_messages_deleted_total",
            "ops-a"
        )),
        1.0
    );
    assert_eq!(
        value(&queue_series("localsqs_queue_messages_sent_total", "ops-b")),
        0.0
    );
    assert_eq!(
        age(&m, "ops-a"),
        Some(60.0),
        "the oldest is gone; the next, in flight, still counts"
    );
    assert_eq!(age(&m, "ops-b"), Some(0.0), "an empty queue");
    assert_eq!(
        value("localsqs_request_errors_total{action=\"GetQueueUrl\",code=\"QueueDoesNotExist\"}"),
        2.0
    );
    assert_eq!(
        value(
            "localsqs_request_errors_total{action=\"SendMessage\",code=\"MissingRequiredParameterException\"}"
        ),
        1.0,
        "errors answered while decoding count too"
    );
    assert_eq!(value("localsqs_metrics_other_queues"), 0.0);
    for kind in [
        "# TYPE localsqs_queue_messages_sent_total counter",
        "# TYPE localsqs_queue_approximate_age_of_oldest_message_seconds gauge",
        "# TYPE localsqs_request_errors_total counter",
    ] {
        assert!(text.lines().any(|l| l == kind), "{kind} missing in\n{text}");
    }

    t.shutdown().await;
}

#[tokio::test]
async fn per_queue_series_are_capped_and_can_be_turned_off() {
    let t = TestServer::start_from(localsqs::Server::builder().metrics(MetricsOptions {
        per_queue: true,
        queue_limit: 3,
    }))
    .await;
    let mut urls = Vec::new();
    for i in 0..8 {
        urls.push(t.create_queue(&format!("cap-{i}"), &[]).await);
    }
    t.send(&urls[1], "own series").await;
    t.send(&urls[5], "folded").await;
    t.send(&urls[6], "folded").await;
    t.send(&urls[6], "folded").await;
    let text = t.metrics().await;
    let m = parse(&text);
    let visible: Vec<&String> = m
        .keys()
        .filter(|k| k.starts_with("localsqs_queue_messages_visible{"))
        .collect();
    assert_eq!(
        visible.len(),
        4,
        "three queues and the sum of the rest: {visible:?}"
    );
    assert_eq!(
        m.get(&queue_series("localsqs_queue_messages_visible", "cap-1")),
        Some(&1.0)
    );
    let other = |name: &str| {
        m.get(&format!(
            "{name}{{queue=\"(other)\",account=\"\",region=\"\"}}"
        ))
        .copied()
    };
    assert_eq!(other("localsqs_queue_messages_visible"), Some(3.0));
    assert_eq!(other("localsqs_queue_messages_sent_total"), Some(3.0));
    assert_eq!(m.get("localsqs_metrics_other_queues"), Some(&5.0));
    assert!(!text.contains("cap-5"), "{text}");
    t.shutdown().await;

    let off = TestServer::start_from(localsqs::Server::builder().metrics(MetricsOptions {
        per_queue: false,
        queue_limit: 3,
    }))
    .await;
    let url = off.create_queue("quiet", &[]).await;
    off.send(&url, "x").await;
    let text = off.metrics().await;
    assert!(!text.contains("localsqs_queue_"), "{text}");
    assert!(!text.contains("localsqs_metrics_other_queues"), "{text}");
    assert!(
        text.lines().any(|l| l == "localsqs_messages_sent_total 1"),
        "{text}"
    );
    off.shutdown().await;
}
