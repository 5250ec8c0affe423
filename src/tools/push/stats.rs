//! Tools layer: what push targets have done: the outcome of each invocation, a target's
//! counters and last invocations as `GET /_localsqs/push` lists them, and the `/metrics`
//! counters by queue.

use std::collections::VecDeque;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use serde::Serialize;

use super::target::PushTarget;

/// How an invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every record succeeded; all were deleted.
    Success,
    /// `batchItemFailures` named some records; the others were deleted.
    Partial,
    /// The handler failed (error status, function error, non-zero exit, invalid answer).
    Failure,
    /// No answer within the queue's VisibilityTimeout.
    Timeout,
}

impl Outcome {
    /// The lower-case name used in logs, metrics and the listing.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Partial => "partial",
            Self::Failure => "failure",
            Self::Timeout => "timeout",
        }
    }
}

/// One invocation, as the listing shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Invocation {
    /// When it started, on the server's clock (epoch milliseconds).
    pub at_ms: u64,
    /// Records in the event.
    pub batch_size: usize,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Message ids the handler reported failed (`partial`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_items: Vec<String>,
    /// Real time it took.
    pub duration_ms: u64,
}

/// What a target has done so far.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TargetStats {
    /// Invocations.
    pub invocations: u64,
    /// Invocations that failed as a whole (`failure` and `timeout`).
    pub failures: u64,
    /// Messages deleted after their invocation succeeded.
    pub messages_deleted: u64,
    /// Messages left on the queue by a failed invocation or a `batchItemFailures` entry.
    pub messages_failed: u64,
    /// Messages deleted without invoking because the filter rejected them.
    pub messages_filtered: u64,
    /// Why the queue cannot be read right now (it does not exist, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The last invocations, oldest first.
    pub last_invocations: VecDeque<Invocation>,
}

/// A target with its id and what it has done, as `GET /_localsqs/push` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct TargetStatus {
    /// Its id, for `DELETE /_localsqs/push/<id>`.
    pub id: String,
    /// The target as added.
    #[serde(flatten)]
    pub target: PushTarget,
    /// Its counters and last invocations.
    #[serde(flatten)]
    pub stats: TargetStats,
}

/// Labels of the push counters.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct QueueLabels {
    queue: String,
}

/// The push counters of `/metrics`, by queue.
#[derive(Debug, Clone, Default)]
pub(super) struct Counters {
    pub(super) invocations: Family<QueueLabels, Counter>,
    pub(super) failures: Family<QueueLabels, Counter>,
    pub(super) item_failures: Family<QueueLabels, Counter>,
    pub(super) filtered: Family<QueueLabels, Counter>,
}

impl Counters {
    fn labels(queue: &str) -> QueueLabels {
        QueueLabels {
            queue: queue.to_owned(),
        }
    }

    pub(super) fn invoked(&self, queue: &str, outcome: Outcome, item_failures: u64) {
        let l = Self::labels(queue);
        self.invocations.get_or_create(&l).inc();
        if matches!(outcome, Outcome::Failure | Outcome::Timeout) {
            self.failures.get_or_create(&l).inc();
        }
        if item_failures > 0 {
            self.item_failures.get_or_create(&l).inc_by(item_failures);
        }
    }

    pub(super) fn filtered(&self, queue: &str, n: u64) {
        if n > 0 {
            self.filtered.get_or_create(&Self::labels(queue)).inc_by(n);
        }
    }
}
