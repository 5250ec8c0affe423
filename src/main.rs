//! Server layer: the `localsqs` binary: flags and environment → [`localsqs::Server`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use std::time::Duration;

use localsqs::server::{ConnectionLimits, CorsOrigins, DEFAULT_MAX_REQUEST_BYTES, ServerOptions};

/// A single-binary, wire-compatible Amazon SQS emulator.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Flags {
    /// Address to listen on.
    #[arg(long, env = "LOCALSQS_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on.
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
    /// TOML file declaring queues to create at start (applied idempotently).
    #[arg(long, env = "LOCALSQS_CONFIG")]
    config: Option<PathBuf>,
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
    #[arg(long, env = "LOCALSQS_MAX_CONNECTIONS", default_value_t = 512)]
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
    /// Instead of serving, ask the server on --port for GET /health and exit 0 if it is
    /// healthy (for container HEALTHCHECKs in images without curl).
    #[arg(long)]
    healthcheck: bool,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let f = Flags::parse();
    if f.healthcheck {
        return healthcheck(f.port);
    }
    let options = ServerOptions {
        host: f.host,
        port: f.port,
        data_dir: f.data_dir,
        region: f.region,
        account_id: f.account_id,
        queue_host: f.queue_host,
        max_request_bytes: f.max_request_bytes,
        enforce_cooloffs: f.enforce_cooloffs,
        config_file: f.config,
        limits: ConnectionLimits {
            header_timeout: Duration::from_secs(f.header_timeout),
            body_timeout: Duration::from_secs(f.body_timeout),
            idle_timeout: Duration::from_secs(f.idle_timeout),
            max_connections: f.max_connections.max(1),
        },
        cors_origins: CorsOrigins::new(f.cors_origins),
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
    let mode = options.data_dir.as_ref().map_or_else(
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
    tracing::info!(endpoint = %server.endpoint(), %mode, "localsqs is serving");
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

/// `GET /health` on the local port with a plain socket; exit 0 on a 200.
fn healthcheck(port: u16) -> ExitCode {
    use std::io::{Read, Write};
    use std::time::Duration;
    let ok = (|| -> std::io::Result<bool> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        s.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf)?;
        Ok(buf.starts_with(b"HTTP/1.1 200"))
    })()
    .unwrap_or(false);
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
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
