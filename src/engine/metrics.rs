//! Engine layer, top: counters the engine keeps for `/metrics` (rendered by the server layer).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

/// Message and commit counters. Cheap atomics; shared by every engine clone.
#[derive(Debug)]
pub struct EngineMetrics {
    /// Messages enqueued (duplicates of a FIFO deduplication window excluded).
    pub sent: Counter,
    /// Messages handed out by ReceiveMessage.
    pub received: Counter,
    /// Messages deleted by DeleteMessage(Batch).
    pub deleted: Counter,
    /// Messages moved to a dead-letter queue.
    pub dlq_moved: Counter,
    /// redb write transactions committed.
    pub commits: Counter,
    /// Requests (jobs) folded into each commit: the group-commit batch size.
    pub commit_batch: Histogram,
}

impl Default for EngineMetrics {
    fn default() -> Self {
        Self {
            sent: Counter::default(),
            received: Counter::default(),
            deleted: Counter::default(),
            dlq_moved: Counter::default(),
            commits: Counter::default(),
            commit_batch: Histogram::new(exponential_buckets(1.0, 2.0, 13)),
        }
    }
}
