//! Fault injection: rules added over HTTP or the embedding API answer AWS errors in either
//! protocol, hand messages out twice, answer short polls empty, and replay by seed; SDK retries
//! absorb injected throttling.

use std::time::Duration;

use aws_sdk_sqs::config::retry::RetryConfig;
use localsqs::faults::{FaultRule, InjectedError};

use super::fifo::{cbd_queue, send_fifo};
use super::harness::{
    TestServer, bodies, change_visibility, client_with_retries, delete, expect_error, handle,
};
use super::http::exchange;

fn throttle(queue: &str, rate: f64) -> FaultRule {
    FaultRule {
        queue: Some(queue.into()),
        actions: vec!["SendMessage".into()],
        error: Some(InjectedError::RequestThrottled),
        error_rate: Some(rate),
        seed: Some(42),
        ..FaultRule::default()
    }
}

#[tokio::test]
async fn an_injected_error_reaches_the_sdk_with_its_status_and_code() {
    let t = TestServer::start().await;
    let url = t.create_queue("flaky", &[]).await;
    let other = t.create_queue("steady", &[]).await;
    t.server
        .faults()
        .add(throttle("flaky", 1.0))
        .expect("valid");
    let sdk = client_with_retries(&t.server.endpoint(), RetryConfig::disabled());
    let res = sdk
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .send()
        .await;
    expect_error(
        "throttled",
        res,
        403,
        "RequestThrottled",
        Some("Rate exceeded."),
    );
    sdk.send_message()
        .queue_url(&other)
        .message_body("x")
        .send()
        .await
        .expect("other queues are untouched");
    t.shutdown().await;
}

#[tokio::test]
async fn sdk_retries_absorb_injected_throttling() {
    let t = TestServer::start().await;
    let url = t.create_queue("flaky", &[]).await;
    t.server
        .faults()
        .add(throttle("flaky", 0.5))
        .expect("valid");
    let retry = RetryConfig::standard()
        .with_max_attempts(20)
        .with_initial_backoff(Duration::from_millis(1))
        .with_max_backoff(Duration::from_millis(5));
    let sdk = client_with_retries(&t.server.endpoint(), retry);
    for i in 0..20 {
        sdk.send_message()
            .queue_url(&url)
            .message_body(format!("m{i}"))
            .send()
            .await
            .expect("retries get every send through");
    }
    let (visible, _, _) = t.counts(&url).await;
    assert_eq!(visible, 20, "each send landed exactly once");
    let metrics = t.metrics().await;
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("localsqs_faults_injected_total{kind=\"error\"}")),
        "{metrics}"
    );
    t.shutdown().await;
}

#[tokio::test]
async fn rules_are_managed_over_http_and_answer_in_the_query_protocol_too() {
    let t = TestServer::start().await;
    let url = t.create_queue("q", &[]).await;
    let addr = t.server.local_addr();
    let added = exchange(
        addr,
        "POST",
        "/_localsqs/faults",
        &[("Content-Type", "application/json")],
        r#"{"queue":"q","actions":["ReceiveMessage"],"error":"ServiceUnavailable"}"#,
    )
    .await
    .expect("answered");
    assert_eq!(added.status, 200, "{}", added.body);
    let id: serde_json::Value = serde_json::from_str(&added.body).expect("json");
    let id = id["id"].as_str().expect("an id").to_owned();
    let listed = exchange(addr, "GET", "/_localsqs/faults", &[], "")
        .await
        .expect("list");
    assert!(listed.body.contains(&id), "{}", listed.body);
    let query = exchange(
        addr,
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &format!("Action=ReceiveMessage&QueueUrl={url}"),
    )
    .await
    .expect("answered");
    assert_eq!(query.status, 503, "{}", query.body);
    assert!(
        query.body.contains("<Code>ServiceUnavailable</Code>"),
        "{}",
        query.body
    );
    assert!(
        query.body.contains("<Type>Receiver</Type>"),
        "{}",
        query.body
    );
    let removed = exchange(addr, "DELETE", &format!("/_localsqs/faults/{id}"), &[], "")
        .await
        .expect("removed");
    assert_eq!(removed.status, 200);
    let again = exchange(addr, "DELETE", &format!("/_localsqs/faults/{id}"), &[], "")
        .await
        .expect("answered");
    assert_eq!(again.status, 404);
    assert!(t.receive(&url, 1).await.is_empty(), "served normally again");
    let bad = exchange(
        addr,
        "POST",
        "/_localsqs/faults",
        &[],
        r#"{"error":"RequestThrottled","error_rate":3}"#,
    )
    .await
    .expect("answered");
    assert_eq!(bad.status, 400, "{}", bad.body);
    t.shutdown().await;
}

#[tokio::test]
async fn a_duplicate_is_handed_out_again_while_in_flight_and_not_after_delete() {
    let t = TestServer::start().await;
    let url = t.create_queue("dups", &[]).await;
    t.server
        .faults()
        .add(FaultRule {
            duplicate_rate: Some(1.0),
            ..FaultRule::default()
        })
        .expect("valid");
    t.send(&url, "once").await;
    let first = t.receive(&url, 1).await;
    assert_eq!(bodies(&first), ["once"]);
    let second = t.receive(&url, 1).await;
    assert_eq!(
        bodies(&second),
        ["once"],
        "handed out again while in flight"
    );
    assert_eq!(second[0].message_id, first[0].message_id);
    delete(&t, &url, &first[0]).await;
    assert!(t.receive(&url, 1).await.is_empty());
    t.shutdown().await;
}

#[tokio::test]
async fn fifo_queues_never_get_duplicates_or_empty_receives() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "strict.fifo", &[]).await;
    t.server
        .faults()
        .add(FaultRule {
            duplicate_rate: Some(1.0),
            empty_receive_rate: Some(1.0),
            ..FaultRule::default()
        })
        .expect("valid");
    send_fifo(&t, &url, "a", "g", None).await;
    assert_eq!(bodies(&t.receive(&url, 10).await), ["a"]);
    assert!(t.receive(&url, 10).await.is_empty(), "no duplicate on FIFO");
    t.shutdown().await;
}

#[tokio::test]
async fn short_polls_answer_empty_at_the_rate_and_the_seed_replays() {
    let run = || async {
        let t = TestServer::start().await;
        let url = t.create_queue("sampled", &[]).await;
        t.server
            .faults()
            .add(FaultRule {
                empty_receive_rate: Some(0.5),
                seed: Some(9),
                ..FaultRule::default()
            })
            .expect("valid");
        t.send(&url, "m").await;
        let mut pattern = Vec::new();
        for _ in 0..30 {
            let got = t.receive(&url, 1).await;
            pattern.push(got.is_empty());
            if let Some(m) = got.first() {
                change_visibility(&t, &url, handle(m), 0)
                    .await
                    .expect("back to visible");
            }
        }
        t.shutdown().await;
        pattern
    };
    let first = run().await;
    let empties = first.iter().filter(|e| **e).count();
    assert!((5..=25).contains(&empties), "{empties} empty of 30");
    assert_eq!(
        first,
        run().await,
        "the same seed replays the same receives"
    );
}

#[tokio::test]
async fn the_config_file_declares_fault_rules_and_the_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("localsqs.toml");
    std::fs::write(
        &path,
        r#"
[[queue]]
name = "orders"

[[fault]]
queue = "orders"
actions = ["SendMessage"]
error = "RequestThrottled"
latency_ms = [1, 2]
seed = 3

[clock]
freeze = true
advance_seconds = 3600
"#,
    )
    .expect("writes");
    let server = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect("starts");
    let rules = server.faults().list();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].1.error, Some(InjectedError::RequestThrottled));
    let clock = server.clock();
    assert!(clock.frozen);
    // Frozen an hour ahead of the system clock, which keeps running underneath.
    assert!(clock.offset_ms > 3_500_000, "{clock:?}");
    let sqs = client_with_retries(&server.endpoint(), RetryConfig::disabled());
    let url = format!("{}/000000000000/orders", server.endpoint());
    let res = sqs
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .send()
        .await;
    expect_error("declared fault", res, 403, "RequestThrottled", None);
    server.shutdown().await;

    std::fs::write(&path, "[[fault]]\nerror = \"Nope\"\n").expect("writes");
    let err = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect_err("an invalid rule stops the start");
    assert!(err.to_string().contains("Nope"), "{err}");
}

#[tokio::test]
async fn reorder_takes_messages_in_random_order_and_replays_by_seed() {
    let run = || async {
        let t = TestServer::start().await;
        let url = t.create_queue("shuffled", &[]).await;
        t.server
            .faults()
            .add(FaultRule {
                reorder: true,
                seed: Some(5),
                ..FaultRule::default()
            })
            .expect("valid");
        for i in 0..20 {
            t.send(&url, &format!("m{i:02}")).await;
        }
        let mut order = Vec::new();
        for _ in 0..20 {
            let got = t.receive(&url, 1).await;
            order.extend(bodies(&got).into_iter().map(str::to_owned));
        }
        t.shutdown().await;
        order
    };
    let first = run().await;
    let mut sorted = first.clone();
    sorted.sort();
    let expected: Vec<String> = (0..20).map(|i| format!("m{i:02}")).collect();
    assert_eq!(sorted, expected, "every message exactly once");
    assert_ne!(first, expected, "not oldest first");
    assert_eq!(first, run().await, "the same seed gives the same order");
}

#[tokio::test]
async fn reset_restores_the_declared_queues_rules_and_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("localsqs.toml");
    std::fs::write(
        &path,
        "[[queue]]\nname = \"declared\"\n\n[[fault]]\nqueue = \"declared\"\nlatency_ms = 1\n",
    )
    .expect("writes");
    let server = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect("starts");
    let sqs = client_with_retries(&server.endpoint(), RetryConfig::disabled());
    sqs.create_queue()
        .queue_name("scratch")
        .send()
        .await
        .expect("creates");
    server
        .faults()
        .add(throttle("scratch", 1.0))
        .expect("valid");
    server.advance(Duration::from_secs(600));
    let reset = exchange(server.local_addr(), "POST", "/_localsqs/reset", &[], "")
        .await
        .expect("answered");
    assert_eq!(reset.status, 200, "{}", reset.body);
    let names: Vec<String> = sqs
        .list_queues()
        .send()
        .await
        .expect("lists")
        .queue_urls()
        .iter()
        .map(|u| u.rsplit('/').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["declared"]);
    let rules = server.faults().list();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0].1.queue.as_deref(), Some("declared"));
    assert_eq!(server.clock().offset_ms, 0);
    server.shutdown().await;
}

/// Every kind of fault through the Query protocol: latency and an error on sends, then
/// duplicates, reordering and empty short polls on receives.
#[tokio::test]
async fn every_fault_kind_through_the_query_protocol() {
    let t = TestServer::start().await;
    let addr = t.server.local_addr();
    let url = t.create_queue("query-faults", &[]).await;
    let form = |body: String| async move {
        exchange(
            addr,
            "POST",
            "/",
            &[("Content-Type", "application/x-www-form-urlencoded")],
            &body,
        )
        .await
        .expect("answered")
    };
    let faults = t.server.faults();
    let slow = faults
        .add(FaultRule {
            actions: vec!["SendMessage".into()],
            latency_ms: Some(localsqs::faults::Latency::Fixed(5)),
            error: Some(InjectedError::KmsThrottled),
            error_rate: Some(1.0),
            ..FaultRule::default()
        })
        .expect("valid");
    let sent = form(format!("Action=SendMessage&QueueUrl={url}&MessageBody=x")).await;
    assert_eq!(sent.status, 400, "{}", sent.body);
    assert!(
        sent.body.contains("<Code>KMS.ThrottlingException</Code>"),
        "{}",
        sent.body
    );
    assert!(faults.remove(&slow));
    for i in 0..6 {
        let ok = form(format!(
            "Action=SendMessage&QueueUrl={url}&MessageBody=m{i}"
        ))
        .await;
        assert_eq!(ok.status, 200, "{}", ok.body);
    }
    faults
        .add(FaultRule {
            reorder: true,
            duplicate_rate: Some(1.0),
            seed: Some(2),
            ..FaultRule::default()
        })
        .expect("valid");
    let receive = || {
        form(format!(
            "Action=ReceiveMessage&QueueUrl={url}&MaxNumberOfMessages=2"
        ))
    };
    let bodies_of = |xml: &str| -> Vec<String> {
        xml.split("<Body>")
            .skip(1)
            .filter_map(|s| s.split("</Body>").next())
            .map(str::to_owned)
            .collect()
    };
    let mut seen = Vec::new();
    for _ in 0..8 {
        seen.extend(bodies_of(&receive().await.body));
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert!(
        sorted.len() < seen.len(),
        "a duplicate was handed out: {seen:?}"
    );
    assert_eq!(
        sorted,
        ["m0", "m1", "m2", "m3", "m4", "m5"],
        "every message came out"
    );
    let firsts: Vec<&String> = seen.iter().take(6).collect();
    assert_ne!(
        firsts,
        ["m0", "m1", "m2", "m3", "m4", "m5"],
        "not oldest first: {seen:?}"
    );
    faults.clear();
    faults
        .add(FaultRule {
            empty_receive_rate: Some(1.0),
            ..FaultRule::default()
        })
        .expect("valid");
    let fresh = form(format!(
        "Action=SendMessage&QueueUrl={url}&MessageBody=fresh"
    ))
    .await;
    assert_eq!(fresh.status, 200);
    assert!(
        t.server
            .engine()
            .queue_counts()
            .iter()
            .any(|c| c.visible == 1)
    );
    let empty = receive().await;
    assert_eq!(empty.status, 200);
    assert!(bodies_of(&empty.body).is_empty(), "{}", empty.body);
    t.shutdown().await;
}
