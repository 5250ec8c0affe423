//! Tools layer: the per-queue series of `/metrics`, read from the engine at each scrape: the
//! messages visible, in flight and delayed, the age of the oldest message (CloudWatch's
//! `ApproximateAgeOfOldestMessage`), and counters of messages sent, received and deleted.
//!
//! Their number is bounded, so a server holding 100,000 queues does not answer a scrape with
//! 700,000 series: the first [`MetricsOptions::queue_limit`] queues by name (then account and
//! region) get series of their own, the rest are summed under `queue="(other)"` (for the age,
//! the oldest of them), and `localsqs_metrics_other_queues` says how many that is. With
//! [`MetricsOptions::per_queue`] off there are no per-queue series at all, and a scrape does not
//! walk the queues.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::engine::{Engine, QueueCounts};

/// Queues with series of their own unless `--metrics-queue-limit` says otherwise.
pub const DEFAULT_QUEUE_LIMIT: usize = 1000;

/// The `queue` label of the series that sums the queues past the limit. Parentheses are not
/// allowed in queue names, so no queue can be mistaken for it.
pub const OTHER_QUEUES: &str = "(other)";

/// Which per-queue series `/metrics` shows (`--metrics-per-queue`, `--metrics-queue-limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsOptions {
    /// Whether there are per-queue series at all.
    pub per_queue: bool,
    /// How many queues, first by name, get series of their own; the rest are summed under
    /// `queue="(other)"`.
    pub queue_limit: usize,
}

impl Default for MetricsOptions {
    fn default() -> Self {
        Self {
            per_queue: true,
            queue_limit: DEFAULT_QUEUE_LIMIT,
        }
    }
}

/// Labels of the per-queue series.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    queue: String,
    account: String,
    region: String,
}

/// The figures of one series: one queue's, or the sum of the queues past the limit.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    visible: u64,
    in_flight: u64,
    delayed: u64,
    oldest_age_s: u64,
    sent: u64,
    received: u64,
    deleted: u64,
}

impl Figures {
    fn of(c: &QueueCounts) -> Self {
        Self {
            visible: c.visible as u64,
            in_flight: c.in_flight as u64,
            delayed: c.delayed as u64,
            oldest_age_s: c.oldest_age_ms.unwrap_or(0) / 1000,
            sent: c.sent,
            received: c.received,
            deleted: c.deleted,
        }
    }

    /// Adds a queue to a sum of queues: counts and counters add up, the age is the oldest.
    fn add(&mut self, other: Figures) {
        self.visible += other.visible;
        self.in_flight += other.in_flight;
        self.delayed += other.delayed;
        self.oldest_age_s = self.oldest_age_s.max(other.oldest_age_s);
        self.sent += other.sent;
        self.received += other.received;
        self.deleted += other.deleted;
    }
}

/// The rows of one scrape: the queues within the limit, then the sum of the rest (if any), and
/// how many queues that sum holds.
fn rows(counts: Vec<QueueCounts>, limit: usize) -> (Vec<(QueueLabels, Figures)>, usize) {
    let mut rows = Vec::with_capacity(counts.len().min(limit) + 1);
    let mut other = Figures::default();
    let mut folded = 0;
    for (i, c) in counts.into_iter().enumerate() {
        let figures = Figures::of(&c);
        if i < limit {
            let labels = QueueLabels {
                queue: c.name,
                account: c.scope.account,
                region: c.scope.region,
            };
            rows.push((labels, figures));
        } else {
            other.add(figures);
            folded += 1;
        }
    }
    if folded > 0 {
        let labels = QueueLabels {
            queue: OTHER_QUEUES.to_owned(),
            account: String::new(),
            region: String::new(),
        };
        rows.push((labels, other));
    }
    (rows, folded)
}

/// Whether a family is a gauge or a counter.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Gauge,
    Counter,
}

type Family = (&'static str, &'static str, Kind, fn(&Figures) -> u64);

/// Every per-queue family: name (counters get `_total` when written), help, kind, value.
const FAMILIES: [Family; 7] = [
    (
        "localsqs_queue_messages_visible",
        "Messages receivable now.",
        Kind::Gauge,
        |f| f.visible,
    ),
    (
        "localsqs_queue_messages_in_flight",
        "Messages received and not yet visible again.",
        Kind::Gauge,
        |f| f.in_flight,
    ),
    (
        "localsqs_queue_messages_delayed",
        "Messages waiting out a delay.",
        Kind::Gauge,
        |f| f.delayed,
    ),
    (
        "localsqs_queue_approximate_age_of_oldest_message_seconds",
        "Seconds since the oldest message in the queue was sent, whatever its state (CloudWatch's ApproximateAgeOfOldestMessage); 0 when the queue is empty.",
        Kind::Gauge,
        |f| f.oldest_age_s,
    ),
    (
        "localsqs_queue_messages_sent",
        "Messages sent to the queue (since it was created or the server started).",
        Kind::Counter,
        |f| f.sent,
    ),
    (
        "localsqs_queue_messages_received",
        "Messages the queue handed out to ReceiveMessage.",
        Kind::Counter,
        |f| f.received,
    ),
    (
        "localsqs_queue_messages_deleted",
        "Messages deleted from the queue.",
        Kind::Counter,
        |f| f.deleted,
    ),
];

/// The per-queue series, collected at each scrape.
#[derive(Debug)]
pub(super) struct QueueSeries {
    engine: Engine,
    options: MetricsOptions,
}

impl QueueSeries {
    pub(super) fn new(engine: Engine, options: MetricsOptions) -> Self {
        Self { engine, options }
    }
}

impl Collector for QueueSeries {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if !self.options.per_queue {
            return Ok(());
        }
        let (rows, folded) = rows(self.engine.queue_counts(), self.options.queue_limit);
        for (name, help, kind, get) in FAMILIES {
            let metric_type = match kind {
                Kind::Gauge => ConstGauge::new(0i64).metric_type(),
                Kind::Counter => ConstCounter::new(0u64).metric_type(),
            };
            let mut family = encoder.encode_descriptor(name, help, None, metric_type)?;
            for (labels, figures) in &rows {
                let value = get(figures);
                let metric = family.encode_family(labels)?;
                match kind {
                    Kind::Gauge => {
                        ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX)).encode(metric)?
                    }
                    Kind::Counter => ConstCounter::new(value).encode(metric)?,
                }
            }
        }
        let gauge = ConstGauge::new(i64::try_from(folded).unwrap_or(i64::MAX));
        let metric = encoder.encode_descriptor(
            "localsqs_metrics_other_queues",
            "Queues past --metrics-queue-limit, whose series are summed under queue=\"(other)\".",
            None,
            gauge.metric_type(),
        )?;
        gauge.encode(metric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Scope;

    fn counts(name: &str, visible: usize, sent: u64, age_ms: Option<u64>) -> QueueCounts {
        QueueCounts {
            name: name.into(),
            scope: Scope {
                account: "000000000000".into(),
                region: "us-east-1".into(),
            },
            visible,
            in_flight: 1,
            delayed: 0,
            sent,
            received: 2,
            deleted: 3,
            oldest_age_ms: age_ms,
        }
    }

    #[test]
    fn queues_past_the_limit_are_summed_under_other() {
        let all = vec![
            counts("a", 1, 10, Some(1_500)),
            counts("b", 2, 20, None),
            counts("c", 3, 30, Some(90_000)),
            counts("d", 4, 40, Some(4_000)),
        ];
        let (rows, folded) = rows(all, 2);
        assert_eq!(folded, 2);
        let names: Vec<&str> = rows.iter().map(|(l, _)| l.queue.as_str()).collect();
        assert_eq!(names, ["a", "b", OTHER_QUEUES]);
        assert_eq!(rows[0].1.oldest_age_s, 1, "whole seconds");
        assert_eq!(rows[1].1.oldest_age_s, 0, "an empty queue is 0");
        let other = rows[2].1;
        assert_eq!(
            (other.visible, other.in_flight, other.sent, other.deleted),
            (7, 2, 70, 6)
        );
        assert_eq!(other.oldest_age_s, 90, "the oldest of the folded queues");
        assert!(rows[2].0.account.is_empty());
    }

    #[test]
    fn within_the_limit_there_is_no_other_series() {
        let (r, folded) = rows(vec![counts("a", 1, 1, None)], 1000);
        assert_eq!((r.len(), folded), (1, 0));
        let (r, folded) = rows(vec![counts("a", 1, 1, None)], 0);
        assert_eq!(
            (r.len(), folded, r[0].0.queue.as_str()),
            (1, 1, OTHER_QUEUES)
        );
    }
}
