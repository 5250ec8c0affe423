//! Tools layer: `/metrics` in the Prometheus text format, through the prometheus-client crate.
//!
//! Request latency histograms by action and errors by action and code
//! (`metrics_errors.rs`) are recorded here, as a front-door [`Hook`] that sees every finished
//! request; message and commit counters come from the engine; the per-queue series
//! (`metrics_queues.rs`, bounded in number) are read from the engine at each scrape.

use std::fmt::Write as _;

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::metrics_errors::{ErrorCounts, ErrorSeries};
use super::metrics_queues::{MetricsOptions, QueueSeries};
use crate::command::Action;
use crate::command::hooks::{Finished, Hook};
use crate::engine::Engine;
use crate::tools::faults::Faults;
use crate::tools::push::PushTargets;

/// Labels of the request histogram.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    action: String,
}

fn latency_histogram() -> Histogram {
    // 50 µs to ~26 s.
    Histogram::new(exponential_buckets(0.000_05, 2.0, 20))
}

/// The metrics registry of one server.
pub struct Metrics {
    registry: Registry,
    /// One latency histogram per action, indexed by `Action as usize`, created up front so a
    /// request records without allocating a label or locking the family.
    requests: Vec<Histogram>,
    /// Errors answered, by action and code.
    errors: Arc<ErrorCounts>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// Most topics given a series of their own in the per-topic counters; the others are summed
/// under `topic="_other"`, so a client creating topics cannot grow `/metrics` without bound.
const MAX_TOPIC_SERIES: usize = 500;

/// Per-topic SNS counters, read from the engine at each scrape.
#[derive(Debug)]
struct TopicCounters(Engine);

/// Labels of the per-topic counters.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TopicLabels {
    topic: String,
    account: String,
    region: String,
}

impl Collector for TopicCounters {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        use prometheus_client::metrics::counter::ConstCounter;
        let topics = self.0.topic_summaries();
        type Count = (
            &'static str,
            &'static str,
            fn(&crate::engine::TopicSummary) -> u64,
        );
        let counters: [Count; 2] = [
            (
                "localsqs_sns_published",
                "Messages published to an SNS topic since the server started.",
                |t| t.published,
            ),
            (
                "localsqs_sns_deliveries",
                "Deliveries of SNS messages to subscriptions since the server started.",
                |t| t.delivered,
            ),
        ];
        for (name, help, get) in counters {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                ConstCounter::new(0u64).metric_type(),
            )?;
            let (shown, rest) = topics.split_at(topics.len().min(MAX_TOPIC_SERIES));
            for t in shown {
                let labels = TopicLabels {
                    topic: t.name.clone(),
                    account: t.scope.account.clone(),
                    region: t.scope.region.clone(),
                };
                ConstCounter::new(get(t)).encode(family.encode_family(&labels)?)?;
            }
            if !rest.is_empty() {
                let labels = TopicLabels {
                    topic: "_other".into(),
                    account: String::new(),
                    region: String::new(),
                };
                let sum = rest.iter().map(get).sum::<u64>();
                ConstCounter::new(sum).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// Bytes the durable body cache holds (`--body-cache-mib`); always 0 in memory mode.
#[derive(Debug)]
struct BodyCacheGauge(Engine);

impl Collector for BodyCacheGauge {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let gauge =
            ConstGauge::new(i64::try_from(self.0.cached_record_bytes()).unwrap_or(i64::MAX));
        let metric = encoder.encode_descriptor(
            "localsqs_body_cache_bytes",
            "Bytes of recently sent message records a durable server keeps in memory.",
            None,
            gauge.metric_type(),
        )?;
        gauge.encode(metric)
    }
}

impl Metrics {
    /// A registry wired to the engine's counters, with the per-queue series `options` asks for.
    #[must_use]
    pub fn new(engine: &Engine, faults: &Faults, options: MetricsOptions) -> Self {
        let mut registry = Registry::default();
        let m = engine.metrics();
        registry.register(
            "localsqs_messages_sent",
            "Messages enqueued",
            m.sent.clone(),
        );
        registry.register(
            "localsqs_messages_received",
            "Messages handed out by ReceiveMessage",
            m.received.clone(),
        );
        registry.register(
            "localsqs_messages_deleted",
            "Messages deleted",
            m.deleted.clone(),
        );
        registry.register(
            "localsqs_messages_dead_lettered",
            "Messages moved to a dead-letter queue",
            m.dlq_moved.clone(),
        );
        registry.register("localsqs_commits", "Storage commits", m.commits.clone());
        registry.register(
            "localsqs_commit_batch_size",
            "Requests folded into one storage commit (group commit)",
            m.commit_batch.clone(),
        );
        let requests: Family<RequestLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "localsqs_request_duration_seconds",
            "Request latency by SQS action",
            requests.clone(),
        );
        registry.register(
            "localsqs_faults_injected",
            "Faults injected by fault-injection rules, by kind",
            faults.counter(),
        );
        registry.register_collector(Box::new(QueueSeries::new(engine.clone(), options)));
        let errors = Arc::new(ErrorCounts::new());
        registry.register_collector(Box::new(ErrorSeries(Arc::clone(&errors))));
        registry.register_collector(Box::new(BodyCacheGauge(engine.clone())));
        registry.register_collector(Box::new(TopicCounters(engine.clone())));
        let requests = Action::ALL
            .iter()
            .map(|a| {
                requests
                    .get_or_create(&RequestLabels {
                        action: a.name().to_owned(),
                    })
                    .clone()
            })
            .collect();
        Self {
            registry,
            requests,
            errors,
        }
    }

    /// Registers the push-delivery counters (see [`crate::tools::push`]).
    pub fn register_push(&mut self, push: &PushTargets) {
        push.register_metrics(&mut self.registry);
    }

    /// Records one request's latency.
    pub fn observe(&self, action: Action, seconds: f64) {
        if let Some(h) = self.requests.get(action as usize) {
            h.observe(seconds);
        }
    }

    /// Renders the Prometheus text exposition.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry).is_err() {
            let _ = writeln!(out, "# encoding failed");
        }
        out
    }
}

impl Hook for Metrics {
    fn finished(&self, done: &Finished<'_>) {
        if let Some(action) = done.action {
            self.observe(action, done.elapsed.as_secs_f64());
        }
        if let Some(code) = done.error {
            self.errors.count(done.action, code);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::command::{Command, CreateQueue, RequestContext};
    use crate::engine::{EngineOptions, RandomIds, SystemClock};
    use crate::tools::metrics_queues::DEFAULT_QUEUE_LIMIT;

    #[tokio::test]
    async fn every_help_text_ends_with_one_period() {
        let engine = Engine::open(
            EngineOptions::default(),
            Arc::new(SystemClock),
            Arc::new(RandomIds),
        )
        .expect("opens");
        let text = Metrics::new(&engine, &Faults::new(), MetricsOptions::default()).render();
        let helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP")).collect();
        assert!(helps.len() >= 7, "{text}");
        for line in helps {
            assert!(line.ends_with('.') && !line.ends_with(".."), "{line}");
        }
        engine.close().await;
    }

    /// As many queues as the server holds by default: a scrape still writes the first
    /// thousand and one sum of the rest per family.
    #[tokio::test]
    async fn a_scrape_of_100_000_queues_stays_bounded() {
        let engine = Engine::open(
            EngineOptions::default(),
            Arc::new(SystemClock),
            Arc::new(RandomIds),
        )
        .expect("opens");
        let ctx = RequestContext::new("http://localhost:9324", engine.default_scope());
        for i in 0..100_000 {
            let c = CreateQueue {
                queue_name: format!("q-{i:06}"),
                ..CreateQueue::default()
            };
            engine
                .execute(&ctx, Command::CreateQueue(c))
                .await
                .expect("creates");
        }
        let text = Metrics::new(&engine, &Faults::new(), MetricsOptions::default()).render();
        let visible = text
            .lines()
            .filter(|l| l.starts_with("localsqs_queue_messages_visible{"))
            .count();
        assert_eq!(visible, DEFAULT_QUEUE_LIMIT + 1);
        assert!(text.contains("{queue=\"q-000999\","));
        assert!(!text.contains("q-001000"));
        assert!(
            text.lines()
                .any(|l| l == "localsqs_metrics_other_queues 99000"),
            "{}",
            &text[..2000]
        );
        let off = MetricsOptions {
            per_queue: false,
            ..MetricsOptions::default()
        };
        let text = Metrics::new(&engine, &Faults::new(), off).render();
        assert!(!text.contains("localsqs_queue_"));
        engine.close().await;
    }
}
