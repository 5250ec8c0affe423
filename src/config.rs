//! The options of a whole server, as one tree: how it meets HTTP clients ([`HttpOptions`]),
//! how its engine keeps state ([`EngineOptions`], the one home of the account, region and data
//! directory), the `--config` file and the `--init-dir` hooks. A new option is one field in the
//! part it belongs to and one flag in the binary.

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
    /// A directory of LocalStack-style init hooks (`boot.d`, `start.d`, `ready.d`,
    /// `shutdown.d`), run at those stages (`--init-dir`).
    pub init_dir: Option<PathBuf>,
    /// Which engine settings the caller chose (a flag, an environment variable, a builder
    /// method), so that a config file's own defaults (ElasticMQ's `aws { region, accountId }`
    /// and its region-blind lookups) override only the others.
    pub pinned: Pinned,
}

/// Engine settings the caller chose explicitly (see [`ServerOptions::pinned`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pinned {
    /// `EngineOptions::account_id` was chosen.
    pub account_id: bool,
    /// `EngineOptions::region` was chosen.
    pub region: bool,
    /// `EngineOptions::regions` was chosen.
    pub regions: bool,
}
