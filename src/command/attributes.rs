//! Command layer: queue attributes: names, ranges, normalisation and AWS's errors
//! (docs/protocol.md §6.1).
//!
//! A request's attributes are checked and normalised as text by [`validate`] (`check.rs`), then
//! turned into typed [`Setting`]s once (the engine checks the two redrive policies against other
//! queues in between) and applied to a queue's typed [`QueueAttributes`] (`settings.rs`).
//! [`QueueAttributes::to_map`] renders them back to the name → text map that GetQueueAttributes
//! returns and the store keeps. Imports neither `wire` nor `engine`.

mod check;
mod settings;

pub use check::{MAX_POLICY_BYTES, READ_ONLY, WRITABLE, requests_fifo, validate, validate_names};
pub use settings::{
    AttributeMap, DeduplicationScope, FifoAttributes, FifoThroughputLimit, Kms, QueueAttributes,
    Setting,
};
