//! HTTP layer: the options of the front door: where it listens, what it accepts from a
//! connection, which browser origins and signatures it lets in, and whose queue-URL conventions
//! it follows. Part of [`crate::ServerOptions`].

use super::conn::ConnectionLimits;
use super::guard::hosts::AllowedHosts;
use super::guard::origin::CorsOrigins;
use super::guard::sigv4::Credentials;

/// Default request body limit, a bound on memory rather than an SQS rule: SQS's own limits
/// (message and batch sizes) are checked on the decoded values. A valid 1 MiB message can grow
/// sixfold on the wire (botocore writes a control character such as DEL as `\u007f` in JSON;
/// percent-encoding triples bytes in a Query form), so allow that plus room for the other
/// parameters. The connection cap bounds how many such bodies are held at once.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 6 * 1024 * 1024 + 256 * 1024;

/// Default memory all request bodies in flight may hold together: room for about forty of the
/// largest bodies at once, far more than a test suite sends.
pub const DEFAULT_MAX_BODY_MEMORY: usize = 256 << 20;

/// Default slowest rate a body may arrive at, in bytes per second.
pub const DEFAULT_MIN_BODY_RATE: u64 = 1024;

/// How the server meets HTTP clients (each field has a flag and an environment variable in the
/// binary).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to listen on.
    pub host: String,
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
    /// If set, queue URLs use this `host[:port]` instead of the request's Host header.
    pub queue_host: Option<String>,
    /// Largest request body accepted.
    pub max_request_bytes: usize,
    /// Most bytes of request bodies held at once, across all connections (`--max-body-memory`).
    pub max_body_memory: usize,
    /// Slowest rate a body may arrive at, bytes per second, over windows of five seconds (one
    /// under connection pressure); 0 lifts it (`--min-body-rate`).
    pub min_body_rate: u64,
    /// Timeouts and the connection cap that bound what slow or idle clients can hold.
    pub limits: ConnectionLimits,
    /// Browser origins let in besides the server's own (`--cors-origin`).
    pub cors_origins: CorsOrigins,
    /// Host names browser requests may name besides loopback and this machine's addresses
    /// (`--allowed-host`; `--queue-host` is added at start).
    pub allowed_hosts: AllowedHosts,
    /// With this token, admin endpoints require `Authorization: Bearer <token>` (or, with
    /// `--auth sigv4`, a signature); the console asks for it once (`--admin-token`).
    pub admin_token: Option<String>,
    /// Whether `/metrics` stays open when authentication is required (`--metrics-open`).
    pub metrics_open: bool,
    /// Which other emulator's conventions to follow, if any (`--compat`).
    pub compat: Compat,
    /// Verify SigV4 signatures against these credentials (`--auth sigv4`); `None` accepts any.
    pub sigv4: Option<Credentials>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 9324,
            queue_host: None,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_body_memory: DEFAULT_MAX_BODY_MEMORY,
            min_body_rate: DEFAULT_MIN_BODY_RATE,
            limits: ConnectionLimits::default(),
            cors_origins: CorsOrigins::default(),
            allowed_hosts: AllowedHosts::default(),
            admin_token: None,
            metrics_open: false,
            compat: Compat::None,
            sigv4: None,
        }
    }
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
