//! Safe to leave running: no program run from the network, no DNS-rebinding page served, the
//! admin endpoints behind the admin token or a signature when the server requires one, and the
//! memory and slots clients can hold bounded. Each test pins one finding of a hostile review.

use std::time::{Duration, Instant};

use localsqs::{AllowedHosts, ConnectionLimits, Credentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::http::{Response, exchange};

const JSON: &str = "application/x-amz-json-1.0";
const FORM: &str = "application/x-www-form-urlencoded";
/// A guard against a hang, far above anything the server should need; not a timing assertion.
const GUARD: Duration = Duration::from_secs(30);

async fn call(
    s: &localsqs::RunningServer,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Response {
    exchange(s.local_addr(), method, target, headers, body)
        .await
        .expect("answered")
}

async fn queues(s: &localsqs::RunningServer) -> usize {
    s.engine().queue_counts().len()
}

async fn create(s: &localsqs::RunningServer, name: &str) {
    let body = format!("{{\"QueueName\":\"{name}\"}}");
    let r = call(
        s,
        "POST",
        "/",
        &[
            ("Content-Type", JSON),
            ("X-Amz-Target", "AmazonSQS.CreateQueue"),
        ],
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn no_request_makes_the_server_run_a_program() {
    let s = localsqs::Server::builder().start().await.expect("starts");
    create(&s, "q").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let proof = dir.path().join("proof");
    let body = format!(
        r#"{{"queue":"q","command":["sh","-c","id > {}"]}}"#,
        proof.display()
    );
    let r = call(&s, "POST", "/_localsqs/push", &[], &body).await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(
        r.body.contains("--config"),
        "says how to declare one: {}",
        r.body
    );
    assert!(s.push_targets().list().is_empty(), "nothing was added");
    let url = call(
        &s,
        "POST",
        "/_localsqs/push",
        &[],
        r#"{"queue":"q","url":"http://127.0.0.1:9"}"#,
    )
    .await;
    assert_eq!(url.status, 200, "URL targets stay: {}", url.body);
    s.shutdown().await;
    assert!(!proof.exists(), "no program ran");
}

/// A page of `rebind.example`, whose name was made to resolve to 127.0.0.1: to the browser its
/// requests are same-origin.
fn rebound(port: u16) -> (String, String) {
    let host = format!("rebind.example:{port}");
    (format!("http://{host}"), host)
}

#[tokio::test]
async fn a_dns_rebinding_page_reaches_nothing() {
    let s = localsqs::Server::builder().start().await.expect("starts");
    create(&s, "q").await;
    let (origin, host) = rebound(s.local_addr().port());
    let page = [
        ("Host", host.as_str()),
        ("Origin", origin.as_str()),
        ("Sec-Fetch-Site", "same-origin"),
    ];
    for (method, path) in [
        ("POST", "/_localsqs/reset"),
        ("GET", "/_aws/sqs/messages?QueueUrl=q"),
        ("GET", "/_localsqs/queues"),
        ("POST", "/_localsqs/faults"),
    ] {
        let r = call(&s, method, path, &page, "").await;
        assert_eq!(r.status, 403, "{method} {path}: {}", r.body);
        assert!(r.body.contains("--allowed-host"), "{}", r.body);
    }
    let mut json = page.to_vec();
    json.extend([
        ("Content-Type", JSON),
        ("X-Amz-Target", "AmazonSQS.DeleteQueue"),
    ]);
    let url = format!("{{\"QueueUrl\":\"http://{host}/000000000000/q\"}}");
    let r = call(&s, "POST", "/", &json, &url).await;
    assert_eq!(r.status, 403, "JSON: {}", r.body);
    let mut form = page.to_vec();
    form.push(("Content-Type", FORM));
    let r = call(&s, "POST", "/", &form, "Action=PurgeQueue&QueueUrl=q").await;
    assert_eq!(r.status, 403, "Query: {}", r.body);
    assert!(r.body.contains("<Code>AccessDenied</Code>"), "{}", r.body);
    // A browser GET (an <img>) carries only Sec-Fetch-* headers.
    let img = [("Host", host.as_str()), ("Sec-Fetch-Mode", "no-cors")];
    let r = call(&s, "GET", "/?Action=DeleteQueue&QueueUrl=q", &img, "").await;
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(queues(&s).await, 1, "nothing was deleted or wiped");
    // An SDK in a compose network names a service the server does not know, and is served.
    let sdk = call(
        &s,
        "POST",
        "/",
        &[
            ("Host", "sqs:9324"),
            ("Content-Type", JSON),
            ("X-Amz-Target", "AmazonSQS.ListQueues"),
        ],
        "{}",
    )
    .await;
    assert_eq!(sdk.status, 200, "{}", sdk.body);
    s.shutdown().await;
}

#[tokio::test]
async fn an_https_origin_is_another_origin_and_allowed_hosts_are_served() {
    let s = localsqs::Server::builder()
        .allowed_hosts(AllowedHosts::new(["dev-box".to_owned()]))
        .start()
        .await
        .expect("starts");
    let port = s.local_addr().port();
    let local = format!("127.0.0.1:{port}");
    let https = format!("https://{local}");
    let r = call(
        &s,
        "POST",
        "/_localsqs/reset",
        &[("Host", &local), ("Origin", &https)],
        "",
    )
    .await;
    assert_eq!(r.status, 403, "scheme compared: {}", r.body);
    let named = format!("dev-box:{port}");
    let origin = format!("http://{named}");
    let r = call(
        &s,
        "GET",
        "/_localsqs/queues",
        &[("Host", &named), ("Origin", &origin)],
        "",
    )
    .await;
    assert_eq!(r.status, 200, "--allowed-host dev-box: {}", r.body);
    s.shutdown().await;
}

async fn guarded() -> localsqs::RunningServer {
    localsqs::Server::builder()
        .sigv4(Credentials::parse(["AKIDLOCAL:right-secret"]).expect("parses"))
        .admin_token("s3cret")
        .start()
        .await
        .expect("starts")
}

#[tokio::test]
async fn under_auth_admin_needs_the_token_and_health_stays_open() {
    let s = guarded().await;
    let bearer = [("Authorization", "Bearer s3cret")];
    for (method, path, body) in [
        ("POST", "/_localsqs/reset", ""),
        ("GET", "/_localsqs/queues", ""),
        ("GET", "/_aws/sqs/messages?QueueUrl=q", ""),
        ("POST", "/_localsqs/clock", r#"{"advance_seconds":1209600}"#),
        ("POST", "/_localsqs/faults", r#"{"error":"InternalError"}"#),
        (
            "POST",
            "/_localsqs/push",
            r#"{"queue":"q","url":"http://127.0.0.1:9"}"#,
        ),
        ("DELETE", "/_localsqs/queues/q/messages/m", ""),
        ("GET", "/metrics", ""),
    ] {
        let r = call(&s, method, path, &[], body).await;
        assert_eq!(r.status, 401, "{method} {path}: {}", r.body);
        assert!(r.body.contains("Bearer"), "{}", r.body);
        let wrong = call(&s, method, path, &[("Authorization", "Bearer nope")], body).await;
        assert_eq!(wrong.status, 401, "{method} {path} with a wrong token");
    }
    assert_eq!(s.clock().offset_ms, 0, "the clock did not move");
    assert!(s.faults().list().is_empty(), "no fault was added");
    for path in ["/health", "/_localstack/health"] {
        assert_eq!(call(&s, "GET", path, &[], "").await.status, 200, "{path}");
    }
    let r = call(&s, "GET", "/_localsqs/queues", &bearer, "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    // The console's page loads, but shows data only with the token.
    let page = call(&s, "GET", "/_localsqs/ui/", &[], "").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("{\"initial\":null}"), "no data inlined");
    // The console calls the SQS API with the token too.
    let sqs = call(
        &s,
        "POST",
        "/",
        &[
            ("Content-Type", JSON),
            ("X-Amz-Target", "AmazonSQS.ListQueues"),
            ("Authorization", "Bearer s3cret"),
        ],
        "{}",
    )
    .await;
    assert_eq!(sqs.status, 200, "{}", sqs.body);
    s.shutdown().await;
}

#[tokio::test]
async fn metrics_open_keeps_metrics_readable_under_auth() {
    let s = localsqs::Server::builder()
        .admin_token("t")
        .metrics_open(true)
        .start()
        .await
        .expect("starts");
    assert_eq!(call(&s, "GET", "/metrics", &[], "").await.status, 200);
    assert_eq!(
        call(&s, "POST", "/_localsqs/reset", &[], "").await.status,
        401
    );
    s.shutdown().await;
}

/// Opens a connection that announces a body of `len` bytes, sends `sent` of them, and stalls.
async fn stalled_body(addr: std::net::SocketAddr, len: usize, sent: usize) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connects");
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {FORM}\r\nContent-Length: {len}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.expect("writes");
    s.write_all(&vec![b'x'; sent]).await.expect("writes");
    s
}

async fn read_status(s: &mut TcpStream) -> String {
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(GUARD, s.read(&mut buf))
        .await
        .expect("answered in time")
        .expect("reads");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[tokio::test]
async fn stalled_bodies_cannot_pin_more_than_the_body_budget() {
    let s = localsqs::Server::builder()
        .max_body_memory(1 << 20)
        .min_body_rate(0)
        .start()
        .await
        .expect("starts");
    let addr = s.local_addr();
    // Two stalled bodies of 600 KB cannot both fit in 1 MiB: the second waits, then gets 503.
    let _first = stalled_body(addr, 600_000, 500_000).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = stalled_body(addr, 600_000, 10).await;
    let answer = read_status(&mut second).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("--max-body-memory"), "{answer}");
    // Small requests still fit beside the stalled one.
    let r = call(
        &s,
        "POST",
        "/",
        &[("Content-Type", FORM)],
        "Action=ListQueues",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    s.shutdown().await;
}

#[tokio::test]
async fn a_body_trickling_slower_than_the_minimum_rate_gets_408() {
    let s = localsqs::Server::builder()
        .min_body_rate(1 << 20)
        .start()
        .await
        .expect("starts");
    let mut slow = stalled_body(s.local_addr(), 10_000, 10).await;
    let answer = read_status(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("fast enough"), "{answer}");
    s.shutdown().await;
}

#[tokio::test]
async fn health_answers_on_a_reserve_slot_when_every_slot_is_taken() {
    let limits = ConnectionLimits {
        idle_timeout: Duration::from_secs(600),
        header_timeout: Duration::from_secs(600),
        body_timeout: Duration::from_secs(600),
        max_connections: 4,
    };
    let s = localsqs::Server::builder()
        .limits(limits)
        .min_body_rate(0)
        .start()
        .await
        .expect("starts");
    let addr = s.local_addr();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(stalled_body(addr, 1000, 1).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let health = call(&s, "GET", "/health", &[], "").await;
    assert_eq!(health.status, 200, "{}", health.body);
    assert!(started.elapsed() < GUARD);
    let sqs = call(
        &s,
        "POST",
        "/",
        &[("Content-Type", FORM)],
        "Action=ListQueues",
    )
    .await;
    assert_eq!(
        sqs.status, 503,
        "an SQS request on a reserve slot: {}",
        sqs.body
    );
    assert!(sqs.body.contains("--max-connections"), "{}", sqs.body);
    drop(held);
    s.shutdown().await;
}

#[tokio::test]
async fn under_sigv4_alone_admin_needs_a_signature() {
    let s = localsqs::Server::builder()
        .sigv4(Credentials::parse(["AKIDLOCAL:right-secret"]).expect("parses"))
        .start()
        .await
        .expect("starts");
    for (method, path, body) in [
        ("POST", "/_localsqs/reset", ""),
        ("GET", "/_localsqs/queues", ""),
        ("POST", "/_localsqs/clock", r#"{"advance_seconds":1209600}"#),
    ] {
        let r = call(&s, method, path, &[], body).await;
        assert_eq!(r.status, 401, "{method} {path}: {}", r.body);
    }
    assert_eq!(s.clock().offset_ms, 0, "the clock did not move");
    assert_eq!(call(&s, "GET", "/health", &[], "").await.status, 200);
    s.shutdown().await;
}

/// Parks a long poll on its own connection; the connection stays open after the answer
/// unless the server closes it.
async fn parked_poll(addr: std::net::SocketAddr, url: &str) -> TcpStream {
    let body = format!("{{\"QueueUrl\":\"{url}\",\"WaitTimeSeconds\":20}}");
    let req = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {JSON}\r\nX-Amz-Target: AmazonSQS.ReceiveMessage\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.expect("connects");
    s.write_all(req.as_bytes()).await.expect("writes");
    s
}

#[tokio::test]
async fn parked_long_polls_give_their_slots_to_new_clients() {
    let limits = ConnectionLimits {
        idle_timeout: Duration::from_secs(600),
        header_timeout: Duration::from_secs(600),
        body_timeout: Duration::from_secs(600),
        max_connections: 4,
    };
    let s = localsqs::Server::builder()
        .limits(limits)
        .start()
        .await
        .expect("starts");
    let addr = s.local_addr();
    // Created without a connection, so every slot is free for the polls.
    let ctx = localsqs::command::RequestContext::new("http://h", s.engine().default_scope());
    let c = localsqs::command::CreateQueue {
        queue_name: "parked".into(),
        ..localsqs::command::CreateQueue::default()
    };
    s.engine()
        .execute(&ctx, localsqs::command::Command::CreateQueue(c))
        .await
        .expect("created");
    let url = format!("http://{addr}/000000000000/parked");
    let mut polls = Vec::new();
    for n in 1..=4 {
        polls.push(parked_poll(addr, &url).await);
        let deadline = Instant::now() + GUARD;
        while s.engine().parked_polls() < n {
            assert!(Instant::now() < deadline, "poll {n} parked");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // Every slot holds a parked poll: a new SQS client still gets a full answer, because the
    // oldest polls are answered early (empty) and their connections closed.
    let r = call(
        &s,
        "POST",
        "/",
        &[("Content-Type", FORM)],
        "Action=ListQueues",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let answer = read_status(&mut polls[0]).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(!answer.contains("\"Messages\""), "answered empty: {answer}");
    s.shutdown().await;
}
