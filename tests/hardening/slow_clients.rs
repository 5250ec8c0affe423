//! Slow and idle clients cannot lock others out: the connection cap, the header, body and idle
//! timeouts, and a shutdown that does not wait for them. Raw TCP on purpose: these clients
//! send what no well-behaved HTTP client would (half a header, a body that never ends).

use std::time::Duration;

use localsqs::ConnectionLimits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A guard against a hang, far above anything the server should need; not a timing assertion.
const GUARD: Duration = Duration::from_secs(60);
/// Shutdown's own grace for busy connections is 30 s; a shutdown held up by idle or slow
/// connections would reach it, one that closes them at once is far below it.
const SHUTDOWN_GUARD: Duration = Duration::from_secs(20);

fn limits(max_connections: usize) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_secs(5),
        body_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(30),
        max_connections,
    }
}

async fn start(limits: ConnectionLimits) -> localsqs::RunningServer {
    localsqs::Server::builder()
        .limits(limits)
        .start()
        .await
        .expect("server starts")
}

/// Opens `n` connections that each send half a request header and then nothing.
async fn slowloris(addr: std::net::SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        // Past the cap the kernel still completes the handshake into the listen backlog.
        let mut s = TcpStream::connect(addr).await.expect("connects");
        s.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .await
            .expect("writes");
        held.push(s);
    }
    held
}

async fn health(addr: std::net::SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connects");
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("writes");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("reads");
    out
}

#[tokio::test]
async fn a_normal_client_is_served_while_slow_headers_fill_the_cap() {
    let server = start(limits(16)).await;
    let addr = server.local_addr();
    let _held = slowloris(addr, 40).await;
    let answer = tokio::time::timeout(GUARD, health(addr))
        .await
        .expect("answered, not locked out");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    tokio::time::timeout(SHUTDOWN_GUARD, server.shutdown())
        .await
        .expect("shutdown does not wait for slow clients");
}

#[tokio::test]
async fn a_header_that_never_ends_is_closed() {
    let server = start(limits(16)).await;
    let mut held = slowloris(server.local_addr(), 1).await;
    let mut buf = Vec::new();
    let read = tokio::time::timeout(GUARD, held[0].read_to_end(&mut buf))
        .await
        .expect("the server closes the connection");
    assert!(read.is_ok() || buf.is_empty());
    assert!(buf.is_empty(), "no answer to half a request");
    server.shutdown().await;
}

#[tokio::test]
async fn a_body_that_never_ends_gets_408() {
    let server = start(limits(16)).await;
    let mut s = TcpStream::connect(server.local_addr())
        .await
        .expect("connects");
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n\
          X-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100\r\n\r\n{",
    )
    .await
    .expect("writes");
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(GUARD, s.read(&mut buf))
        .await
        .expect("answered")
        .expect("reads");
    let head = String::from_utf8_lossy(&buf[..n]);
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert!(head.contains("RequestTimeout"), "{head}");
    server.shutdown().await;
}

#[tokio::test]
async fn idle_keep_alive_connections_do_not_delay_shutdown() {
    let server = start(ConnectionLimits {
        idle_timeout: Duration::from_secs(600),
        ..limits(16)
    })
    .await;
    let mut s = TcpStream::connect(server.local_addr())
        .await
        .expect("connects");
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("writes");
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).await.expect("reads");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    // The connection is now idle and kept alive; shutdown must not wait out the idle timeout.
    tokio::time::timeout(SHUTDOWN_GUARD, server.shutdown())
        .await
        .expect("shutdown does not wait for idle connections");
}

/// A thousand parked long polls are busy connections, not idle ones: the default cap holds
/// them all, and none is cut (the benchmark's W5 lost them to a cap of 512).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_parked_long_polls_are_all_answered() {
    const POLLS: usize = 700;
    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let create = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n\
        X-Amz-Target: AmazonSQS.CreateQueue\r\nConnection: close\r\nContent-Length: 20\r\n\r\n\
        {\"QueueName\":\"pq\"}  ";
    let mut s = TcpStream::connect(addr).await.expect("connects");
    s.write_all(create).await.expect("writes");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("reads");
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    let body = format!(r#"{{"QueueUrl":"http://{addr}/000000000000/pq","WaitTimeSeconds":20}}"#);
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n\
         X-Amz-Target: AmazonSQS.ReceiveMessage\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut polls = Vec::new();
    for _ in 0..POLLS {
        let request = request.clone();
        polls.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.expect("connects");
            s.write_all(request.as_bytes()).await.expect("writes");
            let mut out = String::new();
            s.read_to_string(&mut out).await.map(|_| out)
        }));
    }
    // End every wait on the server's clock, again and again until the last poll has parked
    // and been answered.
    let server = std::sync::Arc::new(server);
    let advancer = tokio::spawn({
        let server = std::sync::Arc::clone(&server);
        async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                server.advance(Duration::from_secs(20));
            }
        }
    });
    let mut answered = 0;
    for p in polls {
        let out = tokio::time::timeout(GUARD, p)
            .await
            .expect("answered, not left hanging")
            .expect("joins")
            .expect("not cut");
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        answered += 1;
    }
    assert_eq!(answered, POLLS);
    advancer.abort();
    let _ = advancer.await;
    let server = std::sync::Arc::into_inner(server).expect("the advancer is gone");
    server.shutdown().await;
}
