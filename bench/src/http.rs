//! HTTP/1.1 keep-alive client connections (one per virtual client) and the bare hyper
//! calibration server that measures this machine's HTTP ceiling (docs/benchmarks.md: the
//! calibration server).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

/// Which SQS wire protocol a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// AWS JSON 1.0 (`X-Amz-Target`), what current SDKs send.
    Json,
    /// AWS Query (form-encoded body, XML response).
    Query,
}

impl Proto {
    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Proto::Json => "json",
            Proto::Query => "query",
        }
    }
}

/// A pre-rendered request: the `X-Amz-Target` value (JSON only) and the body.
#[derive(Debug, Clone)]
pub struct Req {
    /// `AmazonSQS.<Action>`.
    pub target: &'static str,
    /// Request body.
    pub body: Bytes,
}

/// A response: status and body.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Bytes,
}

/// A fake but realistic SigV4 header: the server parses it, never verifies it
/// (docs/protocol.md §1.1).
const AUTH: &str = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, \
SignedHeaders=content-type;host;x-amz-date;x-amz-target, \
Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
/// [`AUTH`] with the credential scope of SNS.
const SNS_AUTH: &str = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sns/aws4_request, \
SignedHeaders=content-type;host;x-amz-date, \
Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
const JSON_CT: &str = "application/x-amz-json-1.0";
const QUERY_CT: &str = "application/x-www-form-urlencoded; charset=utf-8";

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    tx: SendRequest<Full<Bytes>>,
    host: HeaderValue,
    proto: Proto,
    addr: SocketAddr,
    /// Reconnect when the server closed the connection (moto's Werkzeug server answers
    /// HTTP/1.0 and closes after every response). Off for localsqs, where a closed
    /// connection is a failure.
    reconnect: bool,
    /// The `Authorization` header sent (its credential scope names the service).
    auth: HeaderValue,
}

impl Conn {
    /// Connects to `addr` (loopback only) and performs the HTTP/1 handshake.
    pub async fn connect(addr: SocketAddr, proto: Proto) -> Result<Conn, String> {
        let (tx, host) = Self::handshake(addr).await?;
        Ok(Conn {
            tx,
            host,
            proto,
            addr,
            reconnect: false,
            auth: HeaderValue::from_static(AUTH),
        })
    }

    /// The same connection signing for SNS (the server routes on the credential scope).
    pub fn for_sns(mut self) -> Self {
        self.auth = HeaderValue::from_static(SNS_AUTH);
        self
    }

    /// Like [`Conn::connect`], reconnecting whenever the server closed the connection.
    pub async fn connect_reconnecting(addr: SocketAddr, proto: Proto) -> Result<Conn, String> {
        let mut c = Self::connect(addr, proto).await?;
        c.reconnect = true;
        Ok(c)
    }

    async fn handshake(
        addr: SocketAddr,
    ) -> Result<(SendRequest<Full<Bytes>>, HeaderValue), String> {
        if !addr.ip().is_loopback() {
            return Err(format!("refusing non-loopback address {addr}"));
        }
        let stream = tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
            .await
            .map_err(|_| format!("connect to {addr} timed out"))?
            .map_err(|e| format!("connect to {addr}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake with {addr}: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let host = HeaderValue::from_str(&addr.to_string()).map_err(|e| e.to_string())?;
        Ok((tx, host))
    }

    /// Sends one request and reads the whole response, within `timeout`.
    pub async fn call(&mut self, req: &Req, timeout: Duration) -> Result<Resp, String> {
        let fut = async {
            if self.reconnect && (self.tx.is_closed() || self.tx.ready().await.is_err()) {
                self.tx = Self::handshake(self.addr).await?.0;
            }
            self.tx
                .ready()
                .await
                .map_err(|e| format!("connection lost: {e}"))?;
            let mut b = Request::builder()
                .method(Method::POST)
                .uri("/")
                .header(HOST, self.host.clone())
                .header(AUTHORIZATION, self.auth.clone())
                .header("x-amz-date", HeaderValue::from_static("20260101T000000Z"));
            b = match self.proto {
                Proto::Json => b
                    .header(CONTENT_TYPE, HeaderValue::from_static(JSON_CT))
                    .header("x-amz-target", HeaderValue::from_static(req.target)),
                Proto::Query => b.header(CONTENT_TYPE, HeaderValue::from_static(QUERY_CT)),
            };
            let request = b
                .body(Full::new(req.body.clone()))
                .map_err(|e| e.to_string())?;
            let resp = self
                .tx
                .send_request(request)
                .await
                .map_err(|e| format!("request failed: {e}"))?;
            let status = resp.status().as_u16();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("reading response: {e}"))?
                .to_bytes();
            Ok(Resp { status, body })
        };
        match tokio::time::timeout(timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(format!("no response within {timeout:?}")),
        }
    }
}

const CAL_JSON: &str = r#"{"MD5OfMessageBody":"fafb00f5732ab283681e124bf8747ed1","MessageId":"5fea7756-0ea4-451a-a703-a558b933e274"}"#;
const CAL_XML: &str = r#"<?xml version="1.0"?><SendMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><SendMessageResult><MD5OfMessageBody>fafb00f5732ab283681e124bf8747ed1</MD5OfMessageBody><MessageId>5fea7756-0ea4-451a-a703-a558b933e274</MessageId></SendMessageResult><ResponseMetadata><RequestId>27daac76-34dd-47df-bd01-1f6e873584a0</RequestId></ResponseMetadata></SendMessageResponse>"#;

/// Runs the calibration server until the process is killed: hyper 1, HTTP/1.1 keep-alive,
/// `TCP_NODELAY`, a tokio runtime with one worker per core (as localsqs has). It reads each
/// request body and answers a fixed SendMessage response in the request's protocol.
pub fn serve_calibration(port: u16) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("bind 127.0.0.1:{port}: {e}"))?;
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(cal_answer);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    })
}

async fn cal_answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let json = req.headers().contains_key("x-amz-target");
    let _ = req.into_body().collect().await;
    let (ct, body) = if json {
        (JSON_CT, CAL_JSON)
    } else {
        ("text/xml", CAL_XML)
    };
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    resp.headers_mut().insert(
        "x-amzn-RequestId",
        HeaderValue::from_static("27daac76-34dd-47df-bd01-1f6e873584a0"),
    );
    Ok(resp)
}
