//! Engine layer: queues and messages, in memory and persisted to redb with group commit.
//!
//! Imports `command` and `error` only; never `wire`, `server`, `hyper` or `quick_xml`.
//! Every public entry point takes a `Command` and returns a `Reply` or an `SqsError`.
//!
//! A top floor and three folders, with no import loop between any two files:
//!
//! - the top: the [`Engine`] handle (`handle.rs`: open, close, the lock), queue resolution
//!   (`resolve.rs`), its [`EngineOptions`] (`options.rs`), the injected clock and ids (`clock.rs`), the
//!   counters (`metrics.rs`) and the building of the model from store rows (`load.rs`);
//! - `ops/`: the actions, as `impl Engine` blocks; the match over `Command` is
//!   [`Engine::execute`] in `ops/execute.rs`;
//! - `model/`: the state one mutex guards: the `Registry` of queues, each `Queue` with its
//!   messages in a `MessageIndex` (`model/index/`);
//! - `store/`: redb: the schema and ops (`store/schema.rs`), the group-commit writer, the
//!   start-up scan and the on-disk records (docs/storage.md). It never imports `model` or
//!   `ops` (of the top floor, only the counters).
//!
//! Inside the engine a file imports another by its own path, never through these re-exports.

pub mod clock;
mod handle;
mod load;
pub mod metrics;
mod model;
mod ops;
mod options;
mod resolve;
mod store;
#[cfg(test)]
mod tests;

pub use crate::command::{Scope, is_account_id};
pub use clock::{
    Clock, IdGen, MAX_TIME_MS, ManualClock, RandomIds, SeededIds, SystemClock, TIME_MARGIN_MS,
};
pub use handle::{Engine, SWEEP_CHUNK, SWEEP_PER_TICK, StorageState};
pub use model::outbox::{SnsDelivery, SnsTarget};
pub use ops::console::bulk::{BULK_MAX_IDS, BulkOutcome, MoveTarget};
pub use ops::peek::{
    InspectStep, Inspected, PEEK_RECEIPT_HANDLE, PeekFilter, PeekState, QueueCounts,
};
pub use ops::sns::execute::SnsCaller;
pub use ops::sns::inspect::{SubscriptionView, TopicSummary};
pub use options::{EngineOptions, ReceiveOrder, Regions};
pub use store::disk::DiskFaults;
pub use store::schema::StoreError;
