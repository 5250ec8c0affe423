//! The whole server once: random raw requests over TCP to an in-process `localsqs::Server`.
//! Pure random bytes, HTTP/1.1 requests built from plausible and hostile parts (methods,
//! targets, versions, Content-Length too long, too short or not a number, chunked bodies,
//! `Expect: 100-continue`, SQS bodies of both protocols), and those requests with a few bytes
//! changed. Each is written on a fresh connection to a server with 1-second connection
//! timeouts; the server must answer or close within the hang guard, and no answer may be a 5xx.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use localsqs::ConnectionLimits;
use localsqs::engine::ManualClock;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestRunner;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::config;
use super::strategies::nasty_string;

/// Longer than the longest legitimate wait (a 20-second long poll); never asserted as a time.
const HANG_GUARD: Duration = Duration::from_secs(25);

/// One request as parts, so that each part can be wrong on its own.
#[derive(Debug, Clone)]
struct Http {
    method: &'static str,
    target: String,
    version: &'static str,
    headers: Vec<(String, String)>,
    length: Length,
    body: Vec<u8>,
}

/// How the body is framed.
#[derive(Debug, Clone)]
enum Length {
    Exact,
    Missing,
    Longer(u8),
    Shorter(u8),
    Text(&'static str),
    Chunked,
    BadChunks(&'static str),
}

const BODIES: &[&str] = &[
    "",
    r#"{"QueueName":"fuzz"}"#,
    r#"{"QueueUrl":"http://h/000000000000/fuzz","MessageBody":"hi"}"#,
    r#"{"QueueUrl":"/000000000000/fuzz","MaxNumberOfMessages":10,"WaitTimeSeconds":0}"#,
    r#"{"QueueUrl":"fuzz","Entries":[{"Id":"a","MessageBody":"x"},{"Id":"a"}]}"#,
    r#"{"QueueUrl":"fuzz","ReceiptHandle":"AQEBAAAA"}"#,
    r#"{"MessageBody":"\ud800"}"#,
    "Action=CreateQueue&QueueName=fuzz",
    "Action=SendMessage&QueueUrl=/000000000000/fuzz&MessageBody=a%FFb",
    "Action=ReceiveMessage&QueueUrl=/000000000000/fuzz&WaitTimeSeconds=0&AttributeName.1=All",
    "Action=ListQueues",
    "Action=GetQueueAttributes&QueueUrl=fuzz&AttributeName.1=All&AttributeName.01=x",
    "Action=Bogus%00",
    "{",
    "\u{0}\u{1}\u{2}",
];

fn header() -> BoxedStrategy<(String, String)> {
    let target = select(vec![
        "AmazonSQS.CreateQueue",
        "AmazonSQS.SendMessage",
        "AmazonSQS.ReceiveMessage",
        "AmazonSQS.ListQueues",
        "AmazonSQS.DeleteMessage",
        "AmazonSQS.SendMessageBatch",
        "AmazonSQS.GetQueueAttributes",
        "AmazonSQS.Bogus",
        "AmazonSQS.",
        "",
    ]);
    prop_oneof![
        3 => target.prop_map(|t| ("X-Amz-Target".to_owned(), t.to_owned())),
        3 => select(vec![
            "application/x-amz-json-1.0",
            "application/x-www-form-urlencoded; charset=utf-8",
            "application/json",
            "text/plain",
            "",
        ])
        .prop_map(|c| ("Content-Type".to_owned(), c.to_owned())),
        1 => Just(("Accept".to_owned(), "application/json".to_owned())),
        1 => Just(("Expect".to_owned(), "100-continue".to_owned())),
        1 => select(vec!["keep-alive", "close", "Upgrade", ""])
            .prop_map(|c| ("Connection".to_owned(), c.to_owned())),
        1 => Just(("Origin".to_owned(), "http://evil.example".to_owned())),
        1 => Just((
            "Authorization".to_owned(),
            "AWS4-HMAC-SHA256 Credential=123456789012/20260101/eu-west-1/sqs/aws4_request".to_owned(),
        )),
        1 => (nasty_string(8), nasty_string(12)),
    ]
    .boxed()
}

fn http() -> BoxedStrategy<Http> {
    let method = select(vec!["POST", "GET", "PUT", "DELETE", "OPTIONS", "BREW", ""]);
    let target = prop_oneof![
        4 => select(vec![
            "/",
            "/000000000000/fuzz",
            "/?Action=ListQueues",
            "/000000000000/fuzz?Action=ReceiveMessage&WaitTimeSeconds=0",
            "/?Action=CreateQueue&QueueName=%FF",
            "/health",
            "/metrics",
            "/_aws/sqs/messages",
            "/_aws/sqs/messages?QueueUrl=fuzz",
            "/_localstack/health",
            "*",
            "http://localhost/",
            "//",
        ])
        .prop_map(str::to_owned),
        1 => nasty_string(12).prop_map(|s| format!("/{s}")),
    ];
    let version = select(vec![
        "HTTP/1.1",
        "HTTP/1.0",
        "HTTP/2.0",
        "HTTP/1.1 extra",
        "",
    ]);
    let host = proptest::option::weighted(
        0.9,
        select(vec!["localhost", "127.0.0.1:9324", "", "a b", "[::1"]),
    );
    let length = prop_oneof![
        8 => Just(Length::Exact),
        1 => Just(Length::Missing),
        1 => (1u8..50).prop_map(Length::Longer),
        1 => (1u8..50).prop_map(Length::Shorter),
        1 => select(vec!["abc", "-1", "99999999999999999999", "1, 2", ""]).prop_map(Length::Text),
        2 => Just(Length::Chunked),
        1 => select(vec!["zz\r\n", "5\r\nab\r\n0\r\n\r\n", "ffffffffffffffffff\r\n", "0\r\n"])
            .prop_map(Length::BadChunks),
    ];
    let body = prop_oneof![
        4 => select(BODIES).prop_map(|b| b.as_bytes().to_vec()),
        1 => proptest::collection::vec(any::<u8>(), 0..64),
    ];
    (
        method,
        target,
        version,
        host,
        proptest::collection::vec(header(), 0..5),
        length,
        body,
    )
        .prop_map(
            |(method, target, version, host, mut headers, length, body)| {
                if let Some(h) = host {
                    headers.insert(0, ("Host".to_owned(), h.to_owned()));
                }
                Http {
                    method,
                    target,
                    version,
                    headers,
                    length,
                    body,
                }
            },
        )
        .boxed()
}

fn write(h: &Http) -> Vec<u8> {
    let mut out = format!("{} {} {}\r\n", h.method, h.target, h.version).into_bytes();
    let mut head = |k: &str, v: &str| {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    };
    for (k, v) in &h.headers {
        head(k, v);
    }
    let n = h.body.len();
    match &h.length {
        Length::Exact => head("Content-Length", &n.to_string()),
        Length::Missing => {}
        Length::Longer(d) => head("Content-Length", &(n + usize::from(*d)).to_string()),
        Length::Shorter(d) => head(
            "Content-Length",
            &n.saturating_sub(usize::from(*d)).to_string(),
        ),
        Length::Text(t) => head("Content-Length", t),
        Length::Chunked | Length::BadChunks(_) => head("Transfer-Encoding", "chunked"),
    }
    out.extend_from_slice(b"\r\n");
    match &h.length {
        Length::Chunked => {
            if n > 0 {
                out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                out.extend_from_slice(&h.body);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
        Length::BadChunks(c) => out.extend_from_slice(c.as_bytes()),
        _ => out.extend_from_slice(&h.body),
    }
    out
}

/// The bytes of one connection.
fn raw() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..256),
        6 => http().prop_map(|h| write(&h)),
        2 => (http(), proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)).prop_map(
            |(h, flips)| {
                let mut b = write(&h);
                for (i, v) in flips {
                    let n = b.len();
                    b[i % n] = v;
                }
                b
            }
        ),
        1 => (http(), http()).prop_map(|(a, b)| [write(&a), write(&b)].concat()),
    ]
    .boxed()
}

/// Writes `bytes` and reads until the server closes, or until it has sent a complete final
/// response and then nothing more for [`SETTLE`]. `Err` on a hang. The write side stays open:
/// hyper (without `half_close`) drops a connection whose client shuts its write side down, even
/// with an answer pending.
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + HANG_GUARD;
    let mut conn = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    // The server may close before reading everything; a failed write is not a failure.
    let _ = conn.write_all(bytes).await;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let answered = parse(&out)
            .is_ok_and(|(codes, complete)| complete && codes.last().is_some_and(|c| *c >= 200));
        let left = deadline.saturating_duration_since(Instant::now());
        let wait = if answered { SETTLE.min(left) } else { left };
        match tokio::time::timeout(wait, conn.read(&mut buf)).await {
            Err(_) if answered => return Ok(out),
            Err(_) => {
                return Err(format!(
                    "neither an answer nor a close within {HANG_GUARD:?}; read so far: {}",
                    String::from_utf8_lossy(&out)
                ));
            }
            Ok(Ok(0) | Err(_)) => return Ok(out),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// How long to wait for more after a complete answer (a second pipelined request's answer).
const SETTLE: Duration = Duration::from_millis(100);

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The status codes of the responses in `bytes`, read one after another (status line,
/// headers, then a body framed by Content-Length or chunked encoding), and whether the last
/// one is complete.
fn parse(bytes: &[u8]) -> Result<(Vec<u16>, bool), String> {
    let mut rest = bytes;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let Some(end) = find(rest, b"\r\n\r\n") else {
            return Ok((out, false));
        };
        let head = String::from_utf8_lossy(&rest[..end]).into_owned();
        let after = &rest[end + 4..];
        let status_line = head.split("\r\n").next().unwrap_or_default();
        let status: u16 = status_line
            .strip_prefix("HTTP/1.1 ")
            .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not a status line: {status_line:?}"))?;
        out.push(status);
        let header = |name: &str| {
            head.split("\r\n")
                .skip(1)
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                })
                .map(|(_, v)| v.trim().to_owned())
        };
        rest = if (100..200).contains(&status) {
            after
        } else if let Some(n) = header("content-length").and_then(|n| n.parse::<usize>().ok()) {
            match after.get(n..) {
                Some(r) => r,
                None => return Ok((out, false)),
            }
        } else if header("transfer-encoding").is_some() {
            let end = if after.starts_with(b"0\r\n\r\n") {
                Some(5)
            } else {
                find(after, b"\r\n0\r\n\r\n").map(|i| i + 7)
            };
            match end {
                Some(i) => &after[i..],
                None => return Ok((out, false)),
            }
        } else {
            // Delimited by the close.
            return Ok((out, false));
        };
    }
    Ok((out, true))
}

#[test]
fn raw_requests_never_get_a_5xx_or_a_hang() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let server = rt
        .block_on(
            localsqs::Server::builder()
                .clock(Arc::new(ManualClock::new(1_700_000_000_000)))
                .limits(ConnectionLimits {
                    header_timeout: Duration::from_secs(1),
                    body_timeout: Duration::from_secs(1),
                    idle_timeout: Duration::from_secs(1),
                    ..ConnectionLimits::default()
                })
                .start(),
        )
        .expect("server starts");
    let addr = server.local_addr();
    let setup = write(&Http {
        method: "POST",
        target: "/".into(),
        version: "HTTP/1.1",
        headers: vec![("Host".into(), "localhost".into())],
        length: Length::Exact,
        body: b"Action=CreateQueue&QueueName=fuzz".to_vec(),
    });
    let created = rt.block_on(exchange(addr, &setup)).expect("answered");
    assert_eq!(
        parse(&created),
        Ok((vec![200], true)),
        "{}",
        String::from_utf8_lossy(&created)
    );
    // This runner has no source file to record seeds next to; a failure prints its bytes.
    let mut cfg = config(200);
    cfg.failure_persistence = None;
    let mut runner = TestRunner::new(cfg);
    let result = runner.run(&raw(), |bytes| {
        let answer = rt
            .block_on(exchange(addr, &bytes))
            .map_err(TestCaseError::fail)?;
        let text = String::from_utf8_lossy(&answer);
        let (codes, _) = parse(&answer).map_err(TestCaseError::fail)?;
        prop_assert!(
            codes.iter().all(|c| *c < 500),
            "{:?} answered {}",
            String::from_utf8_lossy(&bytes),
            text
        );
        Ok(())
    });
    rt.block_on(server.shutdown());
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn the_response_reader_reads_each_framing() {
    let three =
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 \
                400 Bad\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n";
    assert_eq!(parse(three), Ok((vec![100, 200, 400], true)));
    assert_eq!(
        parse(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nok"),
        Ok((vec![200], false))
    );
    assert_eq!(parse(b"HTTP/1.1 200 OK\r\ncontent-le"), Ok((vec![], false)));
    assert!(parse(b"garbage\r\n\r\n").is_err());
    assert_eq!(parse(b""), Ok((vec![], true)));
}
