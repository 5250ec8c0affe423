//! Engine layer, model: the state the engine lock guards, as types with no I/O: the
//! `Registry` of every queue, tombstone and move task (`registry.rs`); one `Queue`
//! (`queue.rs`) with its FIFO bookkeeping (`fifo.rs`) and its message indexes (`index/`);
//! a move task (`task.rs`); the receipt-handle codec (`receipt.rs`); and what a queue URL or
//! ARN names (`address.rs`); the long polls parked now (`polls.rs`); SNS's topics and
//! subscriptions (`topic.rs`, `topics.rs`). Every change produces the store's `Op`s; the actions that make
//! changes are in `ops/`.

pub(crate) mod address;
pub(crate) mod fifo;
pub(crate) mod index;
pub(crate) mod outbox;
pub(crate) mod polls;
pub(crate) mod queue;
pub(crate) mod receipt;
pub(crate) mod registry;
pub(crate) mod task;
pub(crate) mod topic;
pub(crate) mod topics;
