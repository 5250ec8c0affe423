//! Server layer: the embeddable [`Server`] builder and its [`RunningServer`].
//!
//! The server owns a request's journey: `listen` accepts connections, `dispatch` turns HTTP
//! into a [`crate::wire::WireRequest`] and runs decode → execute → encode, and `admin` holds
//! the route table of every endpoint that is not the SQS API (health, metrics, peek, reset).
//! All SQS protocol knowledge lives in `wire`; all queue semantics in `engine`.

pub mod admin;
pub mod clock;
mod conn;
mod console;
mod dispatch;
mod elasticmq;
pub mod faults;
mod listen;
pub mod metrics;
mod origin;
pub mod push;
pub mod setup;
pub mod sigv4;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use conn::ConnectionLimits;
pub use origin::CorsOrigins;

use crate::engine::{Clock, Engine, EngineOptions, IdGen, RandomIds, ReceiveOrder, SystemClock};

/// Default request body limit, a bound on memory rather than an SQS rule: SQS's own limits
/// (message and batch sizes) are checked on the decoded values. A valid 1 MiB message can grow
/// sixfold on the wire (botocore writes a control character such as DEL as `\u007f` in JSON;
/// percent-encoding triples bytes in a Query form), so allow that plus room for the other
/// parameters. The connection cap bounds how many such bodies are held at once.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 6 * 1024 * 1024 + 256 * 1024;

/// Server options (all of them have flags and environment variables in the binary).
#[derive(Debug, Clone)]
pub struct ServerOptions {
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
    /// A TOML file declaring queues to create at start (see [`setup`]).
    pub config_file: Option<PathBuf>,
    /// Timeouts and the connection cap that bound what slow or idle clients can hold.
    pub limits: ConnectionLimits,
    /// Browser origins let in besides the server's own (`--cors-origin`).
    pub cors_origins: CorsOrigins,
    /// Which other emulator's conventions to follow, if any (`--compat`).
    pub compat: Compat,
    /// Verify SigV4 signatures against these credentials (`--auth sigv4`); `None` accepts any.
    pub sigv4: Option<sigv4::Credentials>,
}

/// Another emulator whose conventions the server can follow, for suites written against it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Compat {
    /// localsqs's own: queue URLs follow the Host header.
    #[default]
    None,
    /// LocalStack's: queue URLs `http://sqs.<region>.localhost.localstack.cloud:<port>/<account>/<name>`.
    LocalStack,
}

impl Default for ServerOptions {
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
            limits: ConnectionLimits::default(),
            cors_origins: CorsOrigins::default(),
            compat: Compat::None,
            sigv4: None,
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
    options: ServerOptions,
    disk_faults: Option<Arc<crate::engine::DiskFaults>>,
    /// Most messages in flight per queue ([`EngineOptions::max_inflight`]).
    max_inflight: Option<usize>,
    /// Most queues ([`EngineOptions::max_queues`]).
    max_queues: Option<usize>,
    /// Durable mode's body cache ([`EngineOptions::body_cache_bytes`]).
    body_cache_bytes: usize,
    faults: Vec<faults::FaultRule>,
    push: Vec<push::PushTarget>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A builder for an in-memory server on 127.0.0.1 and a free port.
    #[must_use]
    pub fn builder() -> Self {
        Self::with_options(ServerOptions {
            port: 0,
            ..ServerOptions::default()
        })
    }

    /// A builder with the given options.
    #[must_use]
    pub fn with_options(options: ServerOptions) -> Self {
        Self {
            options,
            disk_faults: None,
            max_inflight: EngineOptions::default().max_inflight,
            max_queues: EngineOptions::default().max_queues,
            body_cache_bytes: EngineOptions::default().body_cache_bytes,
            faults: Vec::new(),
            push: Vec::new(),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        }
    }

    /// Keeps state in `dir`, durably.
    #[must_use]
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.data_dir = Some(dir.into());
        self
    }

    /// Listens on this port (0 picks a free one).
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.options.port = port;
        self
    }

    /// Creates the queues declared in this TOML file at start.
    #[must_use]
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.options.config_file = Some(path.into());
        self
    }

    /// Enforces AWS's 60-second PurgeQueue and DeleteQueue cool-offs.
    #[must_use]
    pub fn enforce_cooloffs(mut self, on: bool) -> Self {
        self.options.enforce_cooloffs = on;
        self
    }

    /// Allows at most this many messages in flight per queue, AWS's 120,000 by default
    /// (`None`: no limit).
    #[must_use]
    pub fn max_inflight(mut self, limit: Option<usize>) -> Self {
        self.max_inflight = limit;
        self
    }

    /// Holds at most this many queues, 100,000 by default (`None`: no limit); past it
    /// CreateQueue fails with OverLimit.
    #[must_use]
    pub fn max_queues(mut self, limit: Option<usize>) -> Self {
        self.max_queues = limit;
        self
    }

    /// Durable mode only: keeps at most this many bytes of recently sent message records in
    /// memory (32 MiB by default). Older records are read back from disk when received, so
    /// memory stays flat however deep the backlog; a send → receive → delete pipeline stays
    /// within the cache and never reads the disk. `0` keeps only uncommitted records.
    #[must_use]
    pub fn body_cache_bytes(mut self, bytes: usize) -> Self {
        self.body_cache_bytes = bytes;
        self
    }

    /// Uses these connection timeouts and cap.
    #[must_use]
    pub fn limits(mut self, limits: ConnectionLimits) -> Self {
        self.options.limits = limits;
        self
    }

    /// Lets browser pages from these origins call the server (CORS).
    #[must_use]
    pub fn cors_origins(mut self, origins: CorsOrigins) -> Self {
        self.options.cors_origins = origins;
        self
    }

    /// Verifies SigV4 signatures of SQS requests against these credentials.
    #[must_use]
    pub fn sigv4(mut self, credentials: sigv4::Credentials) -> Self {
        self.options.sigv4 = Some(credentials);
        self
    }

    /// Follows another emulator's conventions (queue URLs).
    #[must_use]
    pub fn compat(mut self, compat: Compat) -> Self {
        self.options.compat = compat;
        self
    }

    /// Starts with this fault-injection rule (see [`faults::FaultRule`]).
    #[must_use]
    pub fn fault(mut self, rule: faults::FaultRule) -> Self {
        self.faults.push(rule);
        self
    }

    /// Starts with this push target (see [`push::PushTarget`]).
    #[must_use]
    pub fn push(mut self, target: push::PushTarget) -> Self {
        self.push.push(target);
        self
    }

    /// For tests: a switch that makes the data file's writes fail as on a full disk.
    #[must_use]
    pub fn disk_faults(mut self, faults: Arc<crate::engine::DiskFaults>) -> Self {
        self.disk_faults = Some(faults);
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
        let clock = Arc::new(clock::ControlledClock::new(self.clock));
        let faults = Arc::new(faults::Faults::new());
        let engine = Engine::open(
            EngineOptions {
                account_id: self.options.account_id.clone(),
                region: self.options.region.clone(),
                data_dir: self.options.data_dir.clone(),
                enforce_cooloffs: self.options.enforce_cooloffs,
                disk_faults: self.disk_faults,
                max_inflight: self.max_inflight,
                max_queues: self.max_queues,
                body_cache_bytes: self.body_cache_bytes,
                receive_order: Some(Arc::clone(&faults) as Arc<dyn ReceiveOrder>),
                ..EngineOptions::default()
            },
            Arc::clone(&clock) as Arc<dyn Clock>,
            self.ids,
        )?;
        let mut startup = match &self.options.config_file {
            Some(path) => setup::load(path)?,
            None => setup::Setup::default(),
        };
        startup.fault.splice(0..0, self.faults);
        let push = Arc::new(push::PushTargets::new(
            engine.clone(),
            Arc::clone(&clock) as Arc<dyn Clock>,
            self.push,
        ));
        startup.restore(&engine, &faults, &clock, &push).await?;
        let listener = TcpListener::bind((self.options.host.as_str(), self.options.port)).await?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut metrics = metrics::Metrics::new(&engine, &faults);
        metrics.register_push(&push);
        push.start();
        let shared = Arc::new(Shared {
            metrics,
            engine: engine.clone(),
            options: self.options,
            faults: Arc::clone(&faults),
            clock: Arc::clone(&clock),
            startup,
            push: Arc::clone(&push),
        });
        let task = tokio::spawn(listen::accept_loop(listener, shared, stop_rx));
        Ok(RunningServer {
            addr,
            engine,
            faults,
            push,
            clock,
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
    faults: Arc<faults::Faults>,
    push: Arc<push::PushTargets>,
    clock: Arc<clock::ControlledClock>,
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

    /// The server's clock: where it stands, whether it is frozen.
    #[must_use]
    pub fn clock(&self) -> clock::ClockState {
        self.clock.state()
    }

    /// Moves the server's time forward: visibility timeouts, delays, retention, deduplication
    /// windows and parked long polls all see the new time at once.
    pub fn advance(&self, by: std::time::Duration) {
        self.clock
            .advance_ms(u64::try_from(by.as_millis()).unwrap_or(u64::MAX));
        self.engine.wake_all();
    }

    /// Stops the server's time where it is (`advance` still moves it).
    pub fn freeze(&self) {
        self.clock.freeze();
    }

    /// Lets the server's time run again from where it stood.
    pub fn resume(&self) {
        self.clock.resume();
        self.engine.wake_all();
    }

    /// The fault-injection rules of this server: add, list and remove them while it runs.
    #[must_use]
    pub fn faults(&self) -> &faults::Faults {
        &self.faults
    }

    /// The push targets of this server: add, list and remove them while it runs.
    #[must_use]
    pub fn push_targets(&self) -> &push::PushTargets {
        &self.push
    }

    /// Stops the push targets and accepting, answers parked long polls, finishes open
    /// requests, and returns.
    pub async fn shutdown(self) {
        self.push.shutdown().await;
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

/// What every connection task shares.
struct Shared {
    engine: Engine,
    options: ServerOptions,
    metrics: metrics::Metrics,
    faults: Arc<faults::Faults>,
    clock: Arc<clock::ControlledClock>,
    /// What the server started with (config file and builder), restored by a reset.
    startup: setup::Setup,
    /// Push targets (`/_localsqs/push`).
    push: Arc<push::PushTargets>,
}
