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
//! - [`server`]: hyper accept loop, body limit, request ids, graceful shutdown; dispatch
//!   (decode → execute → encode) and the admin route table (health, metrics, peek, reset).
//! - [`wire`]: the AWS Query and AWS JSON 1.0 protocols: decoding requests into
//!   [`command::Command`]s and encoding [`command::Reply`]s and [`error::SqsError`]s. Pure.
//! - [`command`]: protocol-neutral request/result types, the action table, validation, checksums.
//! - [`engine`]: queues and messages, kept in memory and persisted to redb with group commit.
//! - [`error`]: the one error type and code table, shared by all layers.

pub mod command;
pub mod engine;
pub mod error;
pub mod server;
pub mod wire;

pub use server::{RunningServer, Server, ServerOptions};
