//! localsqs: a single-binary, wire-compatible Amazon SQS emulator.
//!
//! # Layout
//!
//! Layers point one way: the server calls wire and engine, which both depend on command; none
//! of them calls back up (docs/architecture.md).
//!
//! ```text
//!           ┌──→  wire  (decode, encode) ──┐
//! server ───┤                              ├──→  command  ──→  error
//!           └──→  engine (state, redb) ────┘
//! ```
//!
//! - [`server`]: hyper accept loop, connection limits, request ids, graceful shutdown;
//!   dispatch (decode → execute → encode); the admin route table (health, metrics, peek,
//!   reset, clock, faults, push, console); and the server-level features: the controllable
//!   clock, fault injection, origin checks, SigV4 verification, push delivery, the web console,
//!   the `--config` file (TOML or ElasticMQ's).
//! - [`wire`]: the AWS Query and AWS JSON 1.0 protocols: decoding requests into
//!   [`command::Command`]s and encoding [`command::Reply`]s and [`error::SqsError`]s. Pure.
//! - [`command`]: protocol-neutral request/result types, the action table, validation, checksums.
//! - [`engine`]: queues and messages by account, region and name, kept in memory and persisted
//!   to redb with group commit (recovering by itself from a failing disk).
//! - [`error`]: the one error type and code table, shared by all layers.

pub mod command;
pub mod engine;
pub mod error;
pub mod server;
pub mod wire;

pub use server::{RunningServer, Server, ServerOptions};
