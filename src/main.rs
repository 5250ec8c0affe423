//! The `localsqs` binary: flags and environment → [`localsqs::ServerOptions`] →
//! [`localsqs::Server`], and the subcommands that talk to a running server (`ctl.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};

mod ctl;

use localsqs::{
    AllowedHosts, Compat, ConnectionLimits, CorsOrigins, Credentials, DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MIN_BODY_RATE, DEFAULT_QUEUE_LIMIT, EngineOptions, HttpOptions, MetricsOptions, Pinned,
    Regions, ServerOptions,
};

/// A single-binary, wire-compatible Amazon SQS emulator.
#[derive(Debug, clap::Parser)]
#[command(version, about)]
struct Flags {
    /// Talk to a running server instead of starting one.
    #[command(subcommand)]
    ctl: Option<ctl::Ctl>,
    /// Address to listen on (0.0.0.0: every interface).
    #[arg(long, env = "LOCALSQS_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0 picks a free one, named in the log).
    #[arg(long, env = "LOCALSQS_PORT", default_value_t = 9324)]
    port: u16,
    /// Keep state durably in this directory (default: in memory).
    #[arg(long, env = "LOCALSQS_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Region used in queue ARNs.
    #[arg(long, env = "LOCALSQS_REGION", default_value = "us-east-1")]
    region: String,
    /// Account id used in queue URLs and ARNs.
    #[arg(long, env = "LOCALSQS_ACCOUNT_ID", default_value = "000000000000")]
    account_id: String,
    /// Host[:port] to put in queue URLs instead of the request's Host header.
    #[arg(long, env = "LOCALSQS_QUEUE_HOST")]
    queue_host: Option<String>,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "LOCALSQS_MAX_REQUEST_BYTES", default_value_t = DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
    /// Enforce AWS's 60-second cool-offs: a second PurgeQueue within 60 s fails with
    /// PurgeQueueInProgress, and re-creating a queue within 60 s of deleting it fails with
    /// QueueDeletedRecently.
    #[arg(long, env = "LOCALSQS_ENFORCE_COOLOFFS")]
    enforce_cooloffs: bool,
    /// File declaring queues (and fault rules, the clock, push targets) to create at start,
    /// applied idempotently: localsqs's TOML or ElasticMQ's elasticmq.conf, told apart by
    /// their content.
    #[arg(long, env = "LOCALSQS_CONFIG")]
    config: Option<PathBuf>,
    /// Whether the region a client signs for scopes its queues: `scoped` (AWS's way; the
    /// default) or `any` (ElasticMQ's: a queue is found by account and name in any region;
    /// the default with an ElasticMQ config).
    #[arg(long, env = "LOCALSQS_REGIONS", value_enum)]
    regions: Option<RegionsFlag>,
    /// Directory of LocalStack-style init hooks: runs boot.d/*.sh before start, start.d and
    /// ready.d once serving (with AWS_ENDPOINT_URL and an `awslocal` on PATH), shutdown.d
    /// when stopping. Failing scripts are logged, not fatal.
    #[arg(long, env = "LOCALSQS_INIT_DIR")]
    init_dir: Option<PathBuf>,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, env = "LOCALSQS_HEADER_TIMEOUT", default_value_t = 10)]
    header_timeout: u64,
    /// Seconds a client may take to send a request's body.
    #[arg(long, env = "LOCALSQS_BODY_TIMEOUT", default_value_t = 30)]
    body_timeout: u64,
    /// Seconds a keep-alive connection may stay idle between requests.
    #[arg(long, env = "LOCALSQS_IDLE_TIMEOUT", default_value_t = 75)]
    idle_timeout: u64,
    /// Most connections open at once; more clients wait in the listen backlog. Above three
    /// quarters of it, idle and slow connections get one second.
    #[arg(long, env = "LOCALSQS_MAX_CONNECTIONS", default_value_t = 4096)]
    max_connections: usize,
    /// A browser origin (e.g. http://localhost:3000) allowed to call the server, with CORS;
    /// repeatable, or comma-separated in the variable; `*` allows any. Browser requests from
    /// other origins are refused; SDKs and the CLI are never affected.
    #[arg(
        long = "cors-origin",
        env = "LOCALSQS_CORS_ORIGINS",
        value_delimiter = ','
    )]
    cors_origins: Vec<String>,
    /// Follow another emulator's conventions: `localstack` hands out LocalStack-style queue
    /// URLs (http://sqs.<region>.localhost.localstack.cloud:<port>/<account>/<name>); run it
    /// with --port 4566 so a LocalStack-based suite only changes its image.
    #[arg(long, env = "LOCALSQS_COMPAT", value_enum, default_value_t = CompatFlag::None)]
    compat: CompatFlag,
    /// Host name a browser request may name (besides loopback names, this machine's
    /// addresses and --queue-host), against DNS rebinding; repeatable, or comma-separated in
    /// the variable; `*` lifts the check. SDKs and the CLI are never affected.
    #[arg(
        long = "allowed-host",
        env = "LOCALSQS_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    allowed_hosts: Vec<String>,
    /// Require this token (`Authorization: Bearer <token>`) on every admin endpoint but the
    /// health checks; with --auth sigv4 a signature also does. The console asks for it once.
    /// The `clock` and `faults` subcommands send it.
    #[arg(
        long,
        global = true,
        env = "LOCALSQS_ADMIN_TOKEN",
        hide_env_values = true
    )]
    admin_token: Option<String>,
    /// Keep /metrics open when --auth sigv4 or --admin-token guards the admin endpoints.
    #[arg(long, env = "LOCALSQS_METRICS_OPEN")]
    metrics_open: bool,
    /// Per-queue series in /metrics (message counts, age of the oldest message, messages sent,
    /// received and deleted): `false` leaves them out, and a scrape then never walks the queues.
    #[arg(long, env = "LOCALSQS_METRICS_PER_QUEUE", default_value_t = true, action = clap::ArgAction::Set)]
    metrics_per_queue: bool,
    /// How many queues, first by name, get per-queue series of their own in /metrics; the rest
    /// are summed under queue="(other)".
    #[arg(long, env = "LOCALSQS_METRICS_QUEUE_LIMIT", default_value_t = DEFAULT_QUEUE_LIMIT)]
    metrics_queue_limit: usize,
    /// MiB of request bodies held at once across all connections; past it new bodies wait a
    /// second, then get 503 ServiceUnavailable.
    #[arg(long, env = "LOCALSQS_MAX_BODY_MEMORY", default_value_t = 256)]
    max_body_memory: usize,
    /// Slowest rate a request body may arrive at, in bytes per second over five-second windows
    /// (one second near the connection cap); slower ones get 408. 0 lifts it.
    #[arg(long, env = "LOCALSQS_MIN_BODY_RATE", default_value_t = DEFAULT_MIN_BODY_RATE)]
    min_body_rate: u64,
    /// Verify request signatures: `none` (default) accepts any credentials; `sigv4` checks
    /// every SQS request's AWS Signature Version 4 against --credentials.
    #[arg(long, env = "LOCALSQS_AUTH", value_enum, default_value_t = AuthFlag::None)]
    auth: AuthFlag,
    /// Credentials for --auth sigv4, as KEY_ID:SECRET; repeatable, or comma-separated in the
    /// variable.
    #[arg(
        long = "credentials",
        env = "LOCALSQS_CREDENTIALS",
        value_delimiter = ','
    )]
    credentials: Vec<String>,
    /// Most messages in flight per queue (AWS's 120,000): past it a standard queue's short
    /// poll fails with OverLimit and a FIFO receive returns nothing more. 0 lifts the limit.
    #[arg(long, env = "LOCALSQS_MAX_INFLIGHT", default_value_t = 120_000)]
    max_inflight: usize,
    /// Most queues this server holds (about 6 KiB of memory each): past it CreateQueue fails
    /// with OverLimit. 0 lifts the limit.
    #[arg(long, env = "LOCALSQS_MAX_QUEUES", default_value_t = 100_000)]
    max_queues: usize,
    /// Durable mode: MiB of recently sent message records kept in memory; older ones are read
    /// back from disk on receive, so memory stays flat however deep the backlog.
    #[arg(long, env = "LOCALSQS_BODY_CACHE_MIB", default_value_t = 32)]
    body_cache_mib: usize,
    /// Log lines as text (coloured only on a terminal) or as one JSON object per line.
    #[arg(long, global = true, env = "LOCALSQS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Instead of serving, ask the server on --port for GET /health and exit 0 if it is
    /// healthy (for container HEALTHCHECKs in images without curl).
    #[arg(long)]
    healthcheck: bool,
}

/// `--compat` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CompatFlag {
    /// localsqs's own conventions.
    None,
    /// LocalStack's queue URLs.
    Localstack,
}

/// `--regions` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RegionsFlag {
    /// A queue lives in one region; requests act in the region they sign for.
    Scoped,
    /// The signing region is ignored; queues are found by account and name.
    Any,
}

/// `--auth` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AuthFlag {
    /// Accept any credentials.
    None,
    /// Verify AWS Signature Version 4.
    Sigv4,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines; coloured only when stderr is a terminal.
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

fn init_logs(format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => logs.json().with_ansi(false).init(),
    }
}

fn main() -> ExitCode {
    let matches = Flags::command().get_matches();
    let f = match Flags::from_arg_matches(&matches) {
        Ok(f) => f,
        Err(e) => e.exit(),
    };
    // Given on the command line or in the environment, not left at the default: a config
    // file's own defaults (ElasticMQ's aws block) do not override these.
    let chosen = |id: &str| {
        matches
            .value_source(id)
            .is_some_and(|s| s != clap::parser::ValueSource::DefaultValue)
    };
    let pinned = Pinned {
        account_id: chosen("account_id"),
        region: chosen("region"),
        regions: chosen("regions"),
    };
    init_logs(f.log_format);
    if f.healthcheck {
        return ctl::healthcheck(f.port);
    }
    if let Some(c) = f.ctl {
        return ctl::run(c, &f.host, f.port, f.admin_token.as_deref());
    }
    let sigv4 = match f.auth {
        AuthFlag::None => None,
        AuthFlag::Sigv4 => match Credentials::parse(f.credentials.iter().map(String::as_str)) {
            Ok(c) if !c.is_empty() => Some(c),
            Ok(_) => {
                eprintln!("localsqs: --auth sigv4 needs --credentials KEY_ID:SECRET");
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("localsqs: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let options = ServerOptions {
        http: HttpOptions {
            host: f.host,
            port: f.port,
            queue_host: f.queue_host,
            max_request_bytes: f.max_request_bytes,
            max_body_memory: f.max_body_memory.saturating_mul(1 << 20),
            min_body_rate: f.min_body_rate,
            limits: ConnectionLimits {
                header_timeout: Duration::from_secs(f.header_timeout),
                body_timeout: Duration::from_secs(f.body_timeout),
                idle_timeout: Duration::from_secs(f.idle_timeout),
                max_connections: f.max_connections.max(1),
            },
            cors_origins: CorsOrigins::new(f.cors_origins),
            allowed_hosts: AllowedHosts::new(f.allowed_hosts),
            admin_token: f.admin_token.filter(|t| !t.is_empty()),
            metrics_open: f.metrics_open,
            compat: match f.compat {
                CompatFlag::None => Compat::None,
                CompatFlag::Localstack => Compat::LocalStack,
            },
            sigv4,
        },
        engine: EngineOptions {
            account_id: f.account_id,
            region: f.region,
            data_dir: f.data_dir,
            enforce_cooloffs: f.enforce_cooloffs,
            max_inflight: (f.max_inflight > 0).then_some(f.max_inflight),
            max_queues: (f.max_queues > 0).then_some(f.max_queues),
            body_cache_bytes: f.body_cache_mib.saturating_mul(1 << 20),
            regions: match f.regions {
                None | Some(RegionsFlag::Scoped) => Regions::Scoped,
                Some(RegionsFlag::Any) => Regions::Any,
            },
            ..EngineOptions::default()
        },
        config_file: f.config,
        init_dir: f.init_dir,
        pinned,
        metrics: MetricsOptions {
            per_queue: f.metrics_per_queue,
            queue_limit: f.metrics_queue_limit,
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("localsqs: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(options))
}

async fn run(options: ServerOptions) -> ExitCode {
    let mode = options.engine.data_dir.as_ref().map_or_else(
        || "in memory".to_owned(),
        |d| format!("durable in {}", d.display()),
    );
    let server = match localsqs::Server::with_options(options).start().await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("localsqs: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One line per URL that reaches the listener (for 0.0.0.0: loopback, then the machine's
    // other addresses); the first also says where state is kept.
    for (i, url) in server.urls().iter().enumerate() {
        if i == 0 {
            tracing::info!(endpoint = %url.endpoint, console = %url.console, %mode, "localsqs is serving");
        } else {
            tracing::info!(endpoint = %url.endpoint, console = %url.console, "localsqs is serving");
        }
    }
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
