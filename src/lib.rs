//! localsqs: a single-binary, wire-compatible Amazon SQS emulator.
//!
//! This crate's API is what an embedding test needs: start a [`Server`] in-process (in memory
//! or durable, on a free port, with an injected clock), point an SDK at
//! [`RunningServer::endpoint`], move time, add fault rules and push targets, and shut it down.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let server = localsqs::Server::builder().start().await?;
//! println!("SQS at {}", server.endpoint());
//! server.advance(std::time::Duration::from_secs(30));
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! Layers point one way (docs/architecture.md; `tests/layers.rs` checks it):
//!
//! ```text
//! server.rs ──→ http ──→ admin ──→ tools ──┐
//!   (wiring)     │         │         │       ├──→ engine ──┐
//!                └─────────┴─────────┴──→ wire ───────────┴──→ command ──→ error
//! ```
//!
//! - `http`: the front door: sockets, limits, origins, SigV4, one request's journey; it calls
//!   the hooks of `command::hooks` and the admin routes, and never names a tool.
//! - `admin`: every endpoint that is not the SQS API, one handler shape.
//! - `tools`: fault injection, the movable clock, metrics, push delivery, the config file.
//! - `wire`: the AWS Query and AWS JSON 1.0 protocols. Pure.
//! - `engine`: queues and messages in memory, persisted to redb with group commit; in three
//!   floors: `ops` (the actions), `model` (queues, indexes), `store` (redb).
//! - `command`: protocol-neutral requests, results, the action table, validation.
//! - `error`: the one error type and code table.

mod admin;
mod config;
mod http;
mod server;
mod tools;
mod urls;

// The inner layers are public only for the crate's own tests (fixtures, fuzzing, the reference
// model); they are not a stable API.
#[doc(hidden)]
pub mod command;
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod error;
#[doc(hidden)]
pub mod wire;

pub use config::{Pinned, ServerOptions};
pub use engine::{
    Clock, DiskFaults, EngineOptions, IdGen, ManualClock, RandomIds, Regions, SeededIds,
    SystemClock,
};
pub use http::conn::ConnectionLimits;
pub use http::guard::hosts::AllowedHosts;
pub use http::guard::origin::CorsOrigins;
pub use http::guard::sigv4::Credentials;
pub use http::options::{
    Compat, DEFAULT_MAX_BODY_MEMORY, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_MIN_BODY_RATE, HttpOptions,
};
pub use server::{RunningServer, Server};
pub use tools::clock::{ClockState, PastTimeRange};
pub use tools::metrics_queues::{DEFAULT_QUEUE_LIMIT, MetricsOptions, OTHER_QUEUES};
pub use urls::ServerUrl;

/// Fault injection: rules that make chosen requests fail, wait, repeat or reorder messages.
pub mod faults {
    pub use crate::tools::faults::{FaultRule, Faults, InjectedError, Latency, MAX_RULES};
}

/// Push delivery: localsqs playing Lambda's SQS event source mapping.
pub mod push {
    pub use crate::tools::push::invoke::RIE_PATH;
    pub use crate::tools::push::{
        Invocation, MAX_TARGETS, Outcome, PushTarget, PushTargets, TargetStats, TargetStatus,
    };
}

/// The `--config` file's declarations.
pub mod setup {
    pub use crate::tools::setup::{
        ClockDecl, DeadLetter, QueueDecl, RedriveAllow, ServerDefaults, Setup, parse,
    };
}
