//! Server layer: the hyper accept loop, body limit, request ids and graceful shutdown, plus the
//! embeddable [`Server`] builder.
//!
//! Turns HTTP into [`WireRequest`]s and [`WireResponse`]s back into HTTP; all SQS knowledge
//! lives below, in `wire`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::engine::{Clock, Engine, EngineConfig, IdGen, RandomIds, SystemClock};
use crate::error::{ErrorCode, SqsError};
use crate::wire::{self, Protocol, WireRequest};

/// Default request body limit: a 1 MiB message can triple in size when percent-encoded in a
/// Query form body, so allow that plus room for the other parameters.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 3 * 1024 * 1024 + 64 * 1024;

/// Server settings (all of them have flags and environment variables in the binary).
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on.
    pub host: String,
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
    /// Keep state here; `None` keeps it for the life of the process only.
    pub data_dir: Option<PathBuf>,
    /// Region in ARNs.
    pub region: String,
    /// Account id in queue URLs and ARNs.
    pub account_id: String,
    /// If set, queue URLs use this `host[:port]` instead of the request's Host header.
    pub queue_host: Option<String>,
    /// Largest request body accepted.
    pub max_request_bytes: usize,
    /// Enforce AWS's 60-second cool-offs after PurgeQueue and DeleteQueue (off by default).
    pub enforce_cooloffs: bool,
    /// A TOML file declaring queues to create at start (see [`crate::config`]).
    pub config_file: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 9324,
            data_dir: None,
            region: "us-east-1".into(),
            account_id: "000000000000".into(),
            queue_host: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            enforce_cooloffs: false,
            config_file: None,
        }
    }
}

/// Builds and starts a localsqs server, in-process: the Rust counterpart of moto's
/// `ThreadedMotoServer` and ElasticMQ's `withDynamicPort`.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// // In memory, on 127.0.0.1 and a free port (add `.data_dir(path)` to keep state).
/// let server = localsqs::Server::builder().start().await?;
///
/// let conf = aws_sdk_sqs::Config::builder()
///     .endpoint_url(server.endpoint())
///     .region(aws_sdk_sqs::config::Region::new("us-east-1"))
///     .credentials_provider(aws_sdk_sqs::config::Credentials::new("test", "test", None, None, "static"))
///     .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
///     .build();
/// let sqs = aws_sdk_sqs::Client::from_conf(conf);
/// let url = sqs.create_queue().queue_name("jobs").send().await?.queue_url.unwrap_or_default();
/// sqs.send_message().queue_url(&url).message_body("hi").send().await?;
///
/// server.shutdown().await;
/// # Ok(()) }
/// ```
pub struct Server {
    config: Config,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A builder for an in-memory server on 127.0.0.1 and a free port.
    #[must_use]
    pub fn builder() -> Self {
        Self::with_config(Config {
            port: 0,
            ..Config::default()
        })
    }

    /// A builder with the given settings.
    #[must_use]
    pub fn with_config(config: Config) -> Self {
        Self {
            config,
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        }
    }

    /// Keeps state in `dir`, durably.
    #[must_use]
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.data_dir = Some(dir.into());
        self
    }

    /// Listens on this port (0 picks a free one).
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.config.port = port;
        self
    }

    /// Creates the queues declared in this TOML file at start.
    #[must_use]
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.config_file = Some(path.into());
        self
    }

    /// Enforces AWS's 60-second PurgeQueue and DeleteQueue cool-offs.
    #[must_use]
    pub fn enforce_cooloffs(mut self, on: bool) -> Self {
        self.config.enforce_cooloffs = on;
        self
    }

    /// Uses this clock instead of the system clock.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses this id generator instead of random ids.
    #[must_use]
    pub fn ids(mut self, ids: Arc<dyn IdGen>) -> Self {
        self.ids = ids;
        self
    }

    /// Opens the engine, binds the port and starts serving.
    pub async fn start(self) -> Result<RunningServer, Box<dyn std::error::Error + Send + Sync>> {
        let engine = Engine::open(
            EngineConfig {
                account_id: self.config.account_id.clone(),
                region: self.config.region.clone(),
                data_dir: self.config.data_dir.clone(),
                enforce_cooloffs: self.config.enforce_cooloffs,
                ..EngineConfig::default()
            },
            self.clock,
            self.ids,
        )?;
        if let Some(path) = &self.config.config_file {
            let file = crate::config::load(path)?;
            file.apply(&engine).await?;
        }
        let listener = TcpListener::bind((self.config.host.as_str(), self.config.port)).await?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            metrics: crate::metrics::Metrics::new(&engine),
            engine: engine.clone(),
            config: self.config,
        });
        let task = tokio::spawn(accept_loop(listener, shared, stop_rx));
        Ok(RunningServer {
            addr,
            engine,
            stop: stop_tx,
            task,
        })
    }
}

/// A running server. Dropping it does not stop it; call [`RunningServer::shutdown`].
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    engine: Engine,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl RunningServer {
    /// The bound address.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL to give an SDK, e.g. `http://127.0.0.1:49152`.
    #[must_use]
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The engine behind the server (for tests that drive an injected clock).
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Stops accepting, answers parked long polls, finishes open requests, and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        self.engine.shutdown();
        let _ = self.task.await;
        self.engine.close().await;
    }

    /// Waits until the server stops (after a shutdown signal).
    pub async fn stopped(self) {
        let _ = self.task.await;
    }
}

struct Shared {
    engine: Engine,
    config: Config,
    metrics: crate::metrics::Metrics,
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let local = stream.local_addr().ok();
                let shared = Arc::clone(&shared);
                let svc = hyper::service::service_fn(move |req| {
                    let shared = Arc::clone(&shared);
                    async move { Ok::<_, Infallible>(serve(&shared, req, local).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(%peer, error = %e, "connection ended with an error");
                    }
                });
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after 30 s; closing them");
    }
}

fn header(req: &Request<Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn serve(
    shared: &Shared,
    req: Request<Incoming>,
    local: Option<SocketAddr>,
) -> Response<Full<Bytes>> {
    let started = std::time::Instant::now();
    let request_id = shared.engine.new_uuid();
    let target = header(&req, "x-amz-target");
    let content_type = header(&req, CONTENT_TYPE.as_str());
    let protocol = Protocol::detect(target.as_deref(), content_type.as_deref());
    let host = shared
        .config
        .queue_host
        .clone()
        .or_else(|| header(&req, HOST.as_str()))
        .or_else(|| local.map(|a| a.to_string()))
        .unwrap_or_else(|| "localhost".into());
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    if path == "/metrics" && method == "GET" && target.is_none() {
        let mut out = Response::new(Full::new(Bytes::from(shared.metrics.render())));
        out.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        return out;
    }
    let query = req.uri().query().map(str::to_owned);
    let trace_header = header(&req, "x-amzn-trace-id");
    let accept_json = header(&req, "accept").is_some_and(|a| a.contains("application/json"));
    let body = match Limited::new(req.into_body(), shared.config.max_request_bytes)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes().to_vec(),
        Err(e) => {
            let err = if e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                // [E] AWS's front door answers oversized bodies before SQS sees them.
                SqsError::new(
                    ErrorCode::RequestEntityTooLarge,
                    format!(
                        "Request body is larger than the {} bytes this server accepts.",
                        shared.config.max_request_bytes
                    ),
                )
            } else {
                SqsError::new(
                    ErrorCode::SerializationException,
                    "Could not read the request body.",
                )
            };
            return respond(
                wire::error_response(protocol, &err, &request_id),
                &request_id,
            );
        }
    };
    let wreq = WireRequest {
        method: method.clone(),
        path: path.clone(),
        query,
        target,
        content_type,
        trace_header,
        accept_json,
        base_url: format!("http://{host}"),
        body,
    };
    let resp = wire::handle(&shared.engine, wreq, &request_id).await;
    if let Some(action) = resp.action {
        shared
            .metrics
            .observe(action, started.elapsed().as_secs_f64());
    }
    tracing::debug!(
        %method,
        %path,
        status = resp.status,
        elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    respond(resp, &request_id)
}

fn respond(resp: wire::WireResponse, request_id: &str) -> Response<Full<Bytes>> {
    let mut out = Response::new(Full::new(Bytes::from(resp.body)));
    *out.status_mut() =
        StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = out.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(resp.content_type));
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert("x-amzn-RequestId", v);
    }
    for (name, value) in resp.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    out
}
