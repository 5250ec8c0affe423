//! Operations features against the in-process server: embedding, health, metrics, peek, reset,
//! the config file and the retention sweep.

use std::net::SocketAddr;
use std::sync::Arc;

use aws_sdk_sqs::types::QueueAttributeName;
use localsqs::engine::ManualClock;

use crate::harness::{START_MS, TestServer, client};
use crate::http;
use crate::http::get;

/// One raw HTTP/1.1 request through the shared hyper client; returns (status, body).
async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let resp = http::exchange(addr, method, path, headers, "")
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (resp.status, resp.body)
}

/// The embedding path documented on `localsqs::Server`: builder, port 0, endpoint, SDK, shutdown.
#[tokio::test]
async fn embedded_server_serves_the_sdk() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    // Exactly the configuration shown in the rustdoc of `localsqs::Server`.
    let conf = aws_sdk_sqs::Config::builder()
        .endpoint_url(server.endpoint())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .build();
    let sqs = aws_sdk_sqs::Client::from_conf(conf);
    let url = sqs
        .create_queue()
        .queue_name("embedded")
        .send()
        .await
        .expect("CreateQueue")
        .queue_url
        .expect("url");
    assert!(
        url.starts_with(&server.endpoint()),
        "{url} reaches the server"
    );
    sqs.send_message()
        .queue_url(&url)
        .message_body("hi")
        .send()
        .await
        .expect("SendMessage");
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("ReceiveMessage");
    assert_eq!(got.messages()[0].body(), Some("hi"));
    server.shutdown().await;
}

#[tokio::test]
async fn health_metrics_peek_and_reset() {
    let t = TestServer::start().await;
    let ep = t.server.local_addr();
    let (status, body) = request(ep, "GET", "/health", &[]).await;
    assert_eq!(status, 200);
    let health: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(health["status"], "ok");
    assert_eq!(health["mode"], "memory");
    assert_eq!(health["queues"], 0, "{health}");

    let url = t.create_queue("ops", &[]).await;
    let other = t.create_queue("other", &[]).await;
    let queues = |body: String| serde_json::from_str::<serde_json::Value>(&body).expect("json");
    assert_eq!(
        queues(request(ep, "GET", "/health", &[]).await.1)["queues"],
        2
    );
    t.client
        .delete_queue()
        .queue_url(&other)
        .send()
        .await
        .expect("DeleteQueue");
    assert_eq!(
        queues(request(ep, "GET", "/health", &[]).await.1)["queues"],
        1
    );
    t.send(&url, "one").await;
    t.send(&url, "two").await;
    let received = t.receive(&url, 1).await;
    assert_eq!(received.len(), 1);

    // Peek shows visible messages only by default, and in-flight ones on request, without
    // touching receive counts.
    let peek = format!("/_aws/sqs/messages?QueueUrl={url}");
    let (status, body) = request(ep, "GET", &peek, &[("Accept", "application/json")]).await;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("json");
    // LocalStack's JSON peek: the XML document's names, every repeated element a list.
    let messages = &v["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"];
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{v}");
    let attrs = messages[0]["Attribute"].as_array().expect("attribute list");
    assert!(attrs.iter().any(|a| a["Name"] == "SentTimestamp"), "{v}");
    let (_, body) = request(
        ep,
        "GET",
        &format!("{peek}&ShowInvisible=true"),
        &[("Accept", "application/json")],
    )
    .await;
    let v: serde_json::Value = serde_json::from_str(&body).expect("json");
    let all = v["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
        .as_array()
        .expect("messages");
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["ReceiptHandle"], "SQS/BACKDOOR/ACCESS");
    let (_, xml) = request(ep, "GET", &format!("{peek}&ShowInvisible=true"), &[]).await;
    assert!(
        xml.starts_with("<?xml version=\"1.0\"?><ReceiveMessageResponse"),
        "{xml}"
    );
    assert_eq!(t.counts(&url).await, (1, 1, 0), "peek changed nothing");
    let (status, _) = request(
        ep,
        "GET",
        "/_aws/sqs/messages?QueueUrl=nope",
        &[("Accept", "application/json")],
    )
    .await;
    assert_eq!(status, 400);

    let (status, metrics) = request(ep, "GET", "/metrics", &[]).await;
    assert_eq!(status, 200);
    for line in [
        "localsqs_messages_sent_total 2",
        "localsqs_messages_received_total 1",
        "localsqs_queue_messages_visible{queue=\"ops\",account=\"000000000000\",region=\"us-east-1\"} 1",
        "localsqs_queue_messages_in_flight{queue=\"ops\",account=\"000000000000\",region=\"us-east-1\"} 1",
        "localsqs_request_duration_seconds_count{action=\"SendMessage\"} 2",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line:?} in\n{metrics}"
        );
    }
    assert!(
        metrics.contains("localsqs_commit_batch_size_bucket"),
        "{metrics}"
    );

    let (status, _) = request(ep, "POST", "/_localsqs/reset", &[]).await;
    assert_eq!(status, 200);
    let listed = t.client.list_queues().send().await.expect("ListQueues");
    assert!(listed.queue_urls().is_empty(), "reset dropped every queue");
    t.shutdown().await;
}

/// A browser opening the server (`/` or `/_localsqs/`) is sent to the console; an SDK's or
/// curl's `GET /`, and any request naming an SQS action, keep the SQS API's answers.
#[tokio::test]
async fn a_browser_opening_the_server_finds_the_console() {
    let t = TestServer::start().await;
    let ep = t.server.local_addr();
    let html = ("Accept", "text/html,application/xhtml+xml,*/*;q=0.8");
    for path in ["/", "/_localsqs", "/_localsqs/"] {
        let r = get(ep, path, &[html]).await.expect("answered");
        assert_eq!(r.status, 302, "{path}");
        assert_eq!(r.header("location"), Some("/_localsqs/ui/"), "{path}");
    }
    let sdk = get(ep, "/", &[]).await.expect("answered");
    assert_eq!(sdk.status, 404, "{}", sdk.body);
    assert!(
        sdk.body.contains("UnknownOperationException"),
        "{}",
        sdk.body
    );
    let curl = get(ep, "/", &[("Accept", "*/*")]).await.expect("answered");
    assert_eq!(curl.status, 404);
    let listed = get(ep, "/?Action=ListQueues", &[html])
        .await
        .expect("answered");
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        listed.body.contains("<ListQueuesResponse"),
        "{}",
        listed.body
    );
    t.shutdown().await;
}

const CONFIG: &str = r#"
[[queue]]
name = "orders-dlq"
redrive_allow = { permission = "byQueue", source_queues = ["orders"] }

[[queue]]
name = "orders"
attributes = { VisibilityTimeout = "45", DelaySeconds = 2 }
dead_letter = { queue = "orders-dlq", max_receive_count = 3 }
tags = { team = "shop" }

[[queue]]
name = "jobs.fifo"
attributes = { ContentBasedDeduplication = true }
"#;

#[tokio::test]
async fn config_file_declares_queues_idempotently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("queues.toml");
    std::fs::write(&file, CONFIG).expect("write");
    let data = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(START_MS));
    let start = |c: Arc<ManualClock>| {
        localsqs::Server::builder()
            .clock(c)
            .data_dir(&data)
            .config_file(&file)
            .start()
    };
    let server = start(clock.clone()).await.expect("starts with the config");
    let sqs = client(&server.endpoint());
    let url = format!("{}/000000000000/orders", server.endpoint());
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("orders exists")
        .attributes
        .expect("attributes");
    assert_eq!(attrs[&QueueAttributeName::VisibilityTimeout], "45");
    assert_eq!(attrs[&QueueAttributeName::DelaySeconds], "2");
    assert_eq!(
        attrs[&QueueAttributeName::RedrivePolicy],
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:orders-dlq","maxReceiveCount":3}"#
    );
    let modified = attrs[&QueueAttributeName::LastModifiedTimestamp].clone();
    let tags = sqs
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .expect("tags");
    assert_eq!(
        tags.tags().and_then(|t| t.get("team")).map(String::as_str),
        Some("shop")
    );
    let fifo = format!("{}/000000000000/jobs.fifo", server.endpoint());
    let f = sqs
        .get_queue_attributes()
        .queue_url(&fifo)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("jobs.fifo exists")
        .attributes
        .expect("attributes");
    assert_eq!(f[&QueueAttributeName::FifoQueue], "true");
    assert_eq!(f[&QueueAttributeName::ContentBasedDeduplication], "true");
    server.shutdown().await;

    // Applying the same file again changes nothing, not even LastModifiedTimestamp.
    clock.advance_ms(10_000);
    let server = start(clock.clone())
        .await
        .expect("restarts with the same config");
    let sqs = client(&server.endpoint());
    let url = format!("{}/000000000000/orders", server.endpoint());
    let again = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::LastModifiedTimestamp)
        .send()
        .await
        .expect("attributes")
        .attributes
        .expect("attributes");
    assert_eq!(again[&QueueAttributeName::LastModifiedTimestamp], modified);
    let listed = sqs.list_queues().send().await.expect("list");
    assert_eq!(listed.queue_urls().len(), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn config_errors_name_the_queue_and_attribute() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.toml");
    std::fs::write(
        &file,
        "[[queue]]\nname = \"slow\"\nattributes = { VisibilityTimeout = 99999 }\n",
    )
    .expect("write");
    let err = localsqs::Server::builder()
        .config_file(&file)
        .start()
        .await
        .expect_err("an out-of-range attribute stops the start");
    let text = err.to_string();
    assert!(text.contains("queue slow"), "{text}");
    assert!(text.contains("VisibilityTimeout"), "{text}");
    std::fs::write(&file, "[[queue]]\nnam = \"typo\"\n").expect("write");
    let err = localsqs::Server::builder()
        .config_file(&file)
        .start()
        .await
        .expect_err("unknown key");
    assert!(err.to_string().contains("nam"), "{err}");
}

/// The peek used to answer a whole queue at once (250 MB and a 2.5 s stall for 200k × 1 KB);
/// it now answers a page at a time, with the next page's token in a header.
#[tokio::test]
async fn peek_answers_page_by_page() {
    let t = TestServer::start().await;
    let url = t.create_queue("paged", &[]).await;
    for i in 0..25 {
        t.send(&url, &format!("m{i:02}")).await;
    }
    let addr = t.server.local_addr();
    let mut bodies = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut target = format!("/_aws/sqs/messages?QueueUrl={url}&MaxResults=10");
        if let Some(tok) = &token {
            target.push_str(&format!("&NextToken={tok}"));
        }
        let r = get(addr, &target, &[("Accept", "application/json")])
            .await
            .expect("answered");
        assert_eq!(r.status, 200, "{}", r.body);
        let v: serde_json::Value = serde_json::from_str(&r.body).expect("json");
        let page = v["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(page.len() <= 10);
        bodies.extend(
            page.iter()
                .map(|m| m["Body"].as_str().unwrap_or("").to_owned()),
        );
        pages += 1;
        token = r.header("x-localsqs-next-token").map(str::to_owned);
        if token.is_none() {
            break;
        }
        assert!(pages < 10, "paging ends");
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).map(|i| format!("m{i:02}")).collect();
    assert_eq!(bodies, expected);
    let bad = get(
        addr,
        &format!("/_aws/sqs/messages?QueueUrl={url}&MaxResults=5000"),
        &[],
    )
    .await
    .expect("answered");
    assert_eq!(bad.status, 400);
    t.shutdown().await;
}
