//! The one file that wires everything together: the embeddable [`Server`] builder opens the
//! engine, loads the config file, starts the tools, hands the front door its hooks and admin
//! endpoints, and starts listening; [`RunningServer`] is the handle of what it started.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::admin::state::Admin;
use crate::command::hooks::Hook;
use crate::command::sns::envelope::SnsSigner;
use crate::config::ServerOptions;
use crate::engine::{
    Clock, DiskFaults, Engine, EngineOptions, IdGen, RandomIds, ReceiveOrder, Regions, SystemClock,
};
use crate::http::conn::ConnectionLimits;
use crate::http::front::Front;
use crate::http::guard::hosts::AllowedHosts;
use crate::http::guard::origin::CorsOrigins;
use crate::http::guard::sigv4;
use crate::http::listen;
use crate::http::options::Compat;
use crate::tools::clock::{ClockState, ControlledClock, PastTimeRange};
use crate::tools::faults::{FaultRule, Faults};
use crate::tools::init::{InitHooks, Stage};
use crate::tools::metrics::Metrics;
use crate::tools::metrics_queues::MetricsOptions;
use crate::tools::push::{PushTarget, PushTargets};
use crate::tools::setup::{self, Setup};
use crate::tools::sns::deliver::SnsWorker;
use crate::tools::sns::signing::Signer;
use crate::urls::{self, ServerUrl};

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
    faults: Vec<FaultRule>,
    push: Vec<PushTarget>,
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
        let mut options = ServerOptions::default();
        options.http.port = 0;
        Self::with_options(options)
    }

    /// A builder with the given options.
    #[must_use]
    pub fn with_options(options: ServerOptions) -> Self {
        Self {
            options,
            faults: Vec::new(),
            push: Vec::new(),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        }
    }

    /// Keeps state in `dir`, durably.
    #[must_use]
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.engine.data_dir = Some(dir.into());
        self
    }

    /// Listens on this port (0 picks a free one).
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.options.http.port = port;
        self
    }

    /// Creates the queues declared in this TOML file (or ElasticMQ's `elasticmq.conf`) at
    /// start.
    #[must_use]
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.options.config_file = Some(path.into());
        self
    }

    /// Runs LocalStack-style init hooks from this directory (`boot.d`, `start.d`, `ready.d`,
    /// `shutdown.d`); see [`RunningServer::init_done`].
    #[must_use]
    pub fn init_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.init_dir = Some(dir.into());
        self
    }

    /// Whether regions scope queues ([`Regions::Scoped`], AWS's way and the default) or not
    /// ([`Regions::Any`], ElasticMQ's). Chosen here, it holds even with an ElasticMQ config.
    #[must_use]
    pub fn regions(mut self, regions: Regions) -> Self {
        self.options.engine.regions = regions;
        self.options.pinned.regions = true;
        self
    }

    /// Enforces AWS's 60-second PurgeQueue and DeleteQueue cool-offs.
    #[must_use]
    pub fn enforce_cooloffs(mut self, on: bool) -> Self {
        self.options.engine.enforce_cooloffs = on;
        self
    }

    /// Allows at most this many messages in flight per queue, AWS's 120,000 by default
    /// (`None`: no limit).
    #[must_use]
    pub fn max_inflight(mut self, limit: Option<usize>) -> Self {
        self.options.engine.max_inflight = limit;
        self
    }

    /// Holds at most this many queues, 100,000 by default (`None`: no limit); past it
    /// CreateQueue fails with OverLimit.
    #[must_use]
    pub fn max_queues(mut self, limit: Option<usize>) -> Self {
        self.options.engine.max_queues = limit;
        self
    }

    /// Durable mode only: keeps at most this many bytes of recently sent message records in
    /// memory (32 MiB by default). Older records are read back from disk when received, so
    /// memory stays flat however deep the backlog; a send → receive → delete pipeline stays
    /// within the cache and never reads the disk. `0` keeps only uncommitted records.
    #[must_use]
    pub fn body_cache_bytes(mut self, bytes: usize) -> Self {
        self.options.engine.body_cache_bytes = bytes;
        self
    }

    /// Uses these connection timeouts and cap.
    #[must_use]
    pub fn limits(mut self, limits: ConnectionLimits) -> Self {
        self.options.http.limits = limits;
        self
    }

    /// Lets browser pages from these origins call the server (CORS).
    #[must_use]
    pub fn cors_origins(mut self, origins: CorsOrigins) -> Self {
        self.options.http.cors_origins = origins;
        self
    }

    /// Lets browser requests name these hosts too (DNS-rebinding defence; `*` lifts it).
    #[must_use]
    pub fn allowed_hosts(mut self, hosts: AllowedHosts) -> Self {
        self.options.http.allowed_hosts = hosts;
        self
    }

    /// Requires `Authorization: Bearer <token>` on the admin endpoints (not the health
    /// checks); with [`Server::sigv4`], a signature also does.
    #[must_use]
    pub fn admin_token(mut self, token: impl Into<String>) -> Self {
        self.options.http.admin_token = Some(token.into());
        self
    }

    /// Keeps `/metrics` open while the admin endpoints require authentication.
    #[must_use]
    pub fn metrics_open(mut self, open: bool) -> Self {
        self.options.http.metrics_open = open;
        self
    }

    /// Chooses the per-queue series of `/metrics`: none, or series of their own for the first
    /// `queue_limit` queues by name and one sum for the rest.
    #[must_use]
    pub fn metrics(mut self, options: MetricsOptions) -> Self {
        self.options.metrics = options;
        self
    }

    /// Holds at most this many bytes of request bodies at once, across connections.
    #[must_use]
    pub fn max_body_memory(mut self, bytes: usize) -> Self {
        self.options.http.max_body_memory = bytes;
        self
    }

    /// Refuses (408) a body arriving slower than this many bytes a second (0 lifts it).
    #[must_use]
    pub fn min_body_rate(mut self, bytes_per_second: u64) -> Self {
        self.options.http.min_body_rate = bytes_per_second;
        self
    }

    /// Verifies SigV4 signatures of SQS requests against these credentials.
    #[must_use]
    pub fn sigv4(mut self, credentials: sigv4::Credentials) -> Self {
        self.options.http.sigv4 = Some(credentials);
        self
    }

    /// Follows another emulator's conventions (queue URLs).
    #[must_use]
    pub fn compat(mut self, compat: Compat) -> Self {
        self.options.http.compat = compat;
        self
    }

    /// Starts with this fault-injection rule (see [`FaultRule`]).
    #[must_use]
    pub fn fault(mut self, rule: FaultRule) -> Self {
        self.faults.push(rule);
        self
    }

    /// Starts with this push target (see [`PushTarget`]).
    #[must_use]
    pub fn push(mut self, target: PushTarget) -> Self {
        self.push.push(target);
        self
    }

    /// For tests: a switch that makes the data file's writes fail as on a full disk.
    #[must_use]
    pub fn disk_faults(mut self, faults: Arc<DiskFaults>) -> Self {
        self.options.engine.disk_faults = Some(faults);
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
        let ServerOptions {
            http,
            engine: mut engine_options,
            config_file,
            init_dir,
            pinned,
            metrics: metrics_options,
        } = self.options;
        let mut startup = match &config_file {
            Some(path) => setup::load(path)?,
            None => Setup::default(),
        };
        apply_defaults(&startup, &mut engine_options, pinned);
        let init = Arc::new(match &init_dir {
            Some(dir) => InitHooks::discover(dir)?,
            None => InitHooks::none(),
        });
        let (key, secret) = http
            .sigv4
            .as_ref()
            .and_then(sigv4::Credentials::first)
            .unwrap_or(("test", "test"));
        let (key, secret) = (key.to_owned(), secret.to_owned());
        // boot.d runs before anything answers; it knows the endpoint only when the port is set.
        let planned = (http.port != 0).then(|| urls::endpoint_url(&http.host, http.port));
        init.set_env(planned.as_deref(), &key, &secret, &engine_options.region);
        init.run(Stage::Boot).await;
        let clock = Arc::new(ControlledClock::new(self.clock));
        let faults = Arc::new(Faults::new());
        // Fault rules' `reorder` decides the order of a standard queue's receive.
        // SNS envelopes are signed with the server's test key unless the caller brought a signer.
        let sns_signer = match engine_options.sns_signer.clone() {
            Some(s) => s,
            None => Arc::new(Signer::new()?) as Arc<dyn SnsSigner>,
        };
        let engine_options = EngineOptions {
            receive_order: Some(Arc::clone(&faults) as Arc<dyn ReceiveOrder>),
            sns_signer: Some(sns_signer),
            ..engine_options
        };
        let region = engine_options.region.clone();
        let engine = Engine::open(
            engine_options,
            Arc::clone(&clock) as Arc<dyn Clock>,
            self.ids,
        )?;
        startup.fault.splice(0..0, self.faults);
        let push = Arc::new(PushTargets::new(
            engine.clone(),
            Arc::clone(&clock) as Arc<dyn Clock>,
            self.push,
        ));
        startup.restore(&engine, &faults, &clock, &push).await?;
        let listener = listen::bind(&http.host, http.port).await?;
        let addr = listener.local_addr()?;
        init.set_env(
            Some(&urls::endpoint_url(&addr.ip().to_string(), addr.port())),
            &key,
            &secret,
            &region,
        );
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut metrics = Metrics::new(&engine, &faults, metrics_options);
        metrics.register_push(&push);
        let metrics = Arc::new(metrics);
        push.start();
        // Fault rules decide before a command runs; metrics see every finished request.
        let hooks: Vec<Arc<dyn Hook>> = vec![
            Arc::clone(&faults) as Arc<dyn Hook>,
            Arc::clone(&metrics) as Arc<dyn Hook>,
        ];
        let admin = Admin {
            engine: engine.clone(),
            metrics,
            faults: Arc::clone(&faults),
            clock: Arc::clone(&clock),
            push: Arc::clone(&push),
            startup,
            init: Arc::clone(&init),
            started_at: std::time::SystemTime::now(),
            session_id: uuid::Uuid::new_v4().to_string(),
            localstack: http.compat == Compat::LocalStack,
        };
        let front = Arc::new(Front::new(engine.clone(), http, hooks, admin));
        // Deliveries to http and lambda subscriptions, until the server stops.
        tokio::spawn(
            SnsWorker {
                engine: engine.clone(),
                clock: Arc::clone(&clock) as Arc<dyn Clock>,
                push: Arc::clone(&push),
                stop: stop_rx.clone(),
            }
            .run(),
        );
        let task = tokio::spawn(listen::accept_loop(listener, front, stop_rx));
        // start.d and ready.d call the server, so they run once it serves, in the background.
        let (init_tx, init_rx) = watch::channel(false);
        let hooks = Arc::clone(&init);
        tokio::spawn(async move {
            hooks.run(Stage::Start).await;
            hooks.run(Stage::Ready).await;
            let _ = init_tx.send(true);
        });
        Ok(RunningServer {
            addr,
            engine,
            faults,
            push,
            clock,
            init,
            init_done: init_rx,
            stop: stop_tx,
            task,
        })
    }
}

/// Applies what the config file says about the server (ElasticMQ's `aws { }` block and its
/// region-blind lookups) where the caller chose nothing; says so in the log, and warns where a
/// choice of the caller's overrides the file.
fn apply_defaults(startup: &Setup, engine: &mut EngineOptions, pinned: crate::config::Pinned) {
    let d = &startup.server;
    let source = d.source;
    let set = |what: &str, flag: &str, pinned: bool, slot: &mut String, value: &Option<String>| {
        let Some(v) = value else { return };
        if !pinned {
            tracing::info!("{source} sets the {what}: {v}");
            v.clone_into(slot);
        } else if slot != v {
            tracing::warn!("{flag} {slot} overrides the {what} {v} of {source}");
        }
    };
    set(
        "account",
        "--account-id",
        pinned.account_id,
        &mut engine.account_id,
        &d.account_id,
    );
    set(
        "region",
        "--region",
        pinned.region,
        &mut engine.region,
        &d.region,
    );
    if let Some(r) = d.regions
        && !pinned.regions
    {
        if r == Regions::Any {
            tracing::info!(
                "{source}: queues are found by account and name whatever region a client signs for, as in ElasticMQ (--regions any; --regions scoped for AWS's way)"
            );
        }
        engine.regions = r;
    }
}

/// A running server. Dropping it does not stop it; call [`RunningServer::shutdown`].
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    engine: Engine,
    faults: Arc<Faults>,
    push: Arc<PushTargets>,
    clock: Arc<ControlledClock>,
    init: Arc<InitHooks>,
    init_done: watch::Receiver<bool>,
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

    /// The URLs that reach this server, loopback first, each with the console's page under it:
    /// the bound address, or for a wildcard bind (`0.0.0.0`, `[::]`) loopback and each of the
    /// machine's other addresses, which clients can dial where they cannot dial `0.0.0.0`.
    #[must_use]
    pub fn urls(&self) -> Vec<ServerUrl> {
        let wildcard = self.addr.ip().is_unspecified();
        let interfaces = if wildcard {
            urls::interface_addresses()
        } else {
            Vec::new()
        };
        urls::reachable(self.addr, &interfaces)
    }

    /// The engine behind the server (for tests that drive an injected clock).
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The server's clock: where it stands, whether it is frozen.
    #[must_use]
    pub fn clock(&self) -> ClockState {
        self.clock.state()
    }

    /// Moves the server's time forward: visibility timeouts, delays, retention, deduplication
    /// windows and parked long polls all see the new time at once.
    ///
    /// # Panics
    /// When that would pass [`MAX_TIME_MS`](crate::engine::MAX_TIME_MS), the latest time the
    /// engine stores (as `Instant + Duration` panics on overflow); [`RunningServer::try_advance`]
    /// answers an error instead.
    pub fn advance(&self, by: std::time::Duration) {
        if let Err(e) = self.try_advance(by) {
            panic!("RunningServer::advance: {e}");
        }
    }

    /// [`RunningServer::advance`], refused (and the clock left where it was) when it would
    /// pass [`MAX_TIME_MS`](crate::engine::MAX_TIME_MS).
    ///
    /// # Errors
    /// [`PastTimeRange`] when the move would pass the range the engine stores.
    pub fn try_advance(&self, by: std::time::Duration) -> Result<(), PastTimeRange> {
        self.clock
            .advance_ms(u64::try_from(by.as_millis()).unwrap_or(u64::MAX))?;
        self.engine.wake_all();
        Ok(())
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
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// The push targets of this server: add, list and remove them while it runs.
    #[must_use]
    pub fn push_targets(&self) -> &PushTargets {
        &self.push
    }

    /// Waits until the `start.d` and `ready.d` init hooks have run (at once without
    /// [`Server::init_dir`]).
    pub async fn init_done(&self) {
        let mut done = self.init_done.clone();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Runs the `shutdown.d` init hooks, stops the push targets and accepting, answers parked
    /// long polls, finishes open requests, and returns.
    pub async fn shutdown(self) {
        self.init.run(Stage::Shutdown).await;
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
