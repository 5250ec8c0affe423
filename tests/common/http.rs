//! The one HTTP client of the test binaries, for raw requests: `/health`, `/metrics`, the peek
//! and reset endpoints, and every exchange of the protocol fixtures. It is hyper's own HTTP/1.1
//! client connection (`hyper::client::conn::http1`), one request per fresh TCP connection,
//! hang-guarded.
//!
//! hyper replaces the hand-written clients and chunked decoders the tests used to carry: it
//! frames requests and reads status lines, headers and bodies (Content-Length, chunked or
//! delimited by the close) as real clients do, so a failure points at the server rather than at
//! a home-made parser. Raw TCP is only needed for bytes no HTTP client would send (malformed
//! requests); no test sends any today.
//!
//! Included by each test binary with `#[path]`; each uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{CONNECTION, CONTENT_LENGTH, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Longest one exchange may take before it counts as a hang (a hang guard, never asserted).
pub const EXCHANGE_WAIT: Duration = Duration::from_secs(10);

/// An answer, read to the end.
#[derive(Debug)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Header lines in the order hyper keeps them, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body (which must be UTF-8).
    pub body: String,
}

impl Response {
    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `GET target` on a new connection to `addr`, with the extra `headers`.
pub async fn get(
    addr: SocketAddr,
    target: &str,
    headers: &[(&str, &str)],
) -> Result<Response, String> {
    exchange(addr, "GET", target, headers, "").await
}

/// One request on a new connection to `addr`, hang-guarded by [`EXCHANGE_WAIT`]. `target` is
/// the request target (`/path?query`). Adds `Host: <addr>` unless `headers` has a Host, and
/// always `Content-Length` and `Connection: close`.
pub async fn exchange(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<Response, String> {
    tokio::time::timeout(
        EXCHANGE_WAIT,
        exchange_unguarded(addr, method, target, headers, body),
    )
    .await
    .map_err(|_| format!("{method} {target}: no answer within {EXCHANGE_WAIT:?}"))?
}

async fn exchange_unguarded(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<Response, String> {
    let method = Method::from_bytes(method.as_bytes()).map_err(|e| format!("{method:?}: {e}"))?;
    let mut req = Request::builder().method(method).uri(target);
    let mut has_host = false;
    for (k, v) in headers {
        has_host |= k.eq_ignore_ascii_case("host");
        req = req.header(*k, *v);
    }
    if !has_host {
        req = req.header(HOST, addr.to_string());
    }
    let req = req
        .header(CONTENT_LENGTH, body.len())
        .header(CONNECTION, "close")
        .body(Full::new(Bytes::copy_from_slice(body.as_bytes())))
        .map_err(|e| format!("request {target}: {e}"))?;

    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(conn);
    let answer = async {
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("send: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (k.as_str().to_owned(), v)
            })
            .collect();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("read body: {e}"))?
            .to_bytes();
        let body =
            String::from_utf8(bytes.to_vec()).map_err(|e| format!("body is not UTF-8: {e}"))?;
        Ok(Response {
            status,
            headers,
            body,
        })
    }
    .await;
    // The connection closes after this one exchange; make sure its task is gone either way.
    driver.abort();
    answer
}
