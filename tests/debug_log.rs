//! The debug line of each request (`RUST_LOG=debug`): action, queue, error code, account,
//! region and, for a receive, the number of messages handed out, read through a tracing
//! subscriber of the test's own over raw JSON-protocol requests.
//!
//! A binary of its own with one test: tracing caches, per log statement, whether anyone
//! listens, and a subscriber set for one thread is only reliably heard when no other test
//! thread reaches the same statements first.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

#[path = "common/http.rs"]
mod http;

/// Log output gathered in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// The fields of every `request` line, as `key → value`.
    fn request_lines(&self) -> Vec<BTreeMap<String, String>> {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| l.contains(": request "))
            .map(|l| {
                l.split_whitespace()
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect()
            })
            .collect()
    }
}

/// One JSON-protocol call, optionally signed (in form only: the server checks no signature)
/// for `region`; returns the status.
async fn call(addr: SocketAddr, action: &str, body: &str, region: Option<&str>) -> u16 {
    let target = format!("AmazonSQS.{action}");
    let auth = region.map(|r| {
        format!(
            "AWS4-HMAC-SHA256 Credential=test/20261201/{r}/sqs/aws4_request, SignedHeaders=host, Signature=0"
        )
    });
    let mut headers = vec![
        ("Content-Type", "application/x-amz-json-1.0"),
        ("X-Amz-Target", target.as_str()),
    ];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    http::exchange(addr, "POST", "/", &headers, body)
        .await
        .unwrap_or_else(|e| panic!("{action}: {e}"))
        .status
}

/// Runs on the test's own thread (a current-thread runtime), so the subscriber set here hears
/// the server's events.
#[tokio::test]
async fn the_debug_line_names_the_error_the_scope_and_the_messages_returned() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let url = format!("{}/000000000000/work", server.endpoint());
    assert_eq!(
        call(addr, "CreateQueue", r#"{"QueueName":"work"}"#, None).await,
        200
    );
    for body in ["one", "two"] {
        let send = format!(r#"{{"QueueUrl":"{url}","MessageBody":"{body}"}}"#);
        assert_eq!(call(addr, "SendMessage", &send, None).await, 200);
    }
    let receive = format!(r#"{{"QueueUrl":"{url}","MaxNumberOfMessages":10}}"#);
    assert_eq!(call(addr, "ReceiveMessage", &receive, None).await, 200);
    assert_eq!(call(addr, "ReceiveMessage", &receive, None).await, 200);
    let nowhere = receive.replace("/work", "/nowhere");
    assert_eq!(call(addr, "ReceiveMessage", &nowhere, None).await, 400);
    assert_eq!(call(addr, "ListQueues", "{}", Some("eu-west-1")).await, 200);
    assert_eq!(call(addr, "SendMessage", "{}", None).await, 400);
    server.shutdown().await;

    let lines = captured.request_lines();
    let of = |action: &str| -> Vec<&BTreeMap<String, String>> {
        lines
            .iter()
            .filter(|l| l.get("action").map(String::as_str) == Some(action))
            .collect()
    };
    let field = |l: &BTreeMap<String, String>, k: &str| l.get(k).cloned().unwrap_or_default();
    let receives = of("ReceiveMessage");
    assert_eq!(receives.len(), 3, "{lines:#?}");
    assert_eq!(field(receives[0], "messages"), "2");
    assert_eq!(field(receives[0], "queue"), "work");
    assert_eq!(field(receives[0], "error"), "-");
    assert_eq!(field(receives[0], "status"), "200");
    assert_eq!(field(receives[0], "account"), "000000000000");
    assert_eq!(field(receives[0], "region"), "us-east-1");
    assert_eq!(
        field(receives[1], "messages"),
        "0",
        "an empty receive says 0"
    );
    let failed = receives[2];
    assert_eq!(field(failed, "queue"), "nowhere");
    assert_eq!(field(failed, "error"), "QueueDoesNotExist");
    assert_eq!(field(failed, "status"), "400");
    assert!(
        !failed.contains_key("messages"),
        "no count for a failed receive"
    );
    let sends = of("SendMessage");
    assert_eq!(sends.len(), 3);
    assert!(!sends[0].contains_key("messages"), "only receives count");
    assert_eq!(
        field(sends[2], "error"),
        "MissingRequiredParameterException",
        "a request refused while decoding names its error too"
    );
    assert_eq!(field(of("ListQueues")[0], "region"), "eu-west-1");
}
