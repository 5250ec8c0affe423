//! The options of a whole server, as one tree: how it meets HTTP clients ([`HttpOptions`]),
//! how its engine keeps state ([`EngineOptions`], the one home of the account, region and data
//! directory), and the `--config` file. A new option is one field in the part it belongs to and
//! one flag in the binary.

use std::path::PathBuf;

use crate::engine::EngineOptions;
use crate::http::options::HttpOptions;
use crate::tools::metrics_queues::MetricsOptions;

/// Server options (each has a flag and an environment variable in the binary).
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Listening address, limits, origins, signatures, compat.
    pub http: HttpOptions,
    /// Account, region, data directory, quotas and caches.
    pub engine: EngineOptions,
    /// A TOML file (or ElasticMQ's `elasticmq.conf`) declaring queues, fault rules, the clock
    /// and push targets to start with.
    pub config_file: Option<PathBuf>,
    /// Which per-queue series `/metrics` shows.
    pub metrics: MetricsOptions,
}
