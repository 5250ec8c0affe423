//! Tools layer: push delivery, localsqs playing Lambda's SQS event source mapping. A push
//! target reads a queue and hands batches of messages to a handler, as an SQS-triggered Lambda
//! function gets them: an HTTP endpoint (a Lambda container image behind its Runtime Interface
//! Emulator, or any server) or a local program reading the event on standard input.
//!
//! Targets come from the config file (`[[queue.push]]`), the embedding API
//! ([`crate::Server::push`], [`crate::RunningServer::push_targets`]) and `/_localsqs/push`.
//! Each runs `max_concurrency` pollers (`worker.rs`); the event's shape and the reading of
//! answers are in `event.rs`, filter patterns in `filter.rs`, the calls in `invoke.rs`.
//! Invocations and failures are counted in `/metrics` and listed, with the last few
//! invocations, by `GET /_localsqs/push`.

pub mod event;
pub mod filter;
pub mod invoke;
mod stats;
mod target;
mod targets;
mod worker;

pub use stats::{Invocation, Outcome, TargetStats, TargetStatus};
pub use target::PushTarget;
pub use targets::{MAX_TARGETS, PushTargets};
