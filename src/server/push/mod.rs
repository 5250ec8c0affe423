//! Server layer: push delivery, localsqs playing Lambda's SQS event source mapping. A push
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
mod target;
mod worker;

pub use target::PushTarget;
use target::{Compiled, Handler};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use serde::Serialize;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::command::{Command, GetQueueUrl, RequestContext};
use crate::engine::{Clock, Engine};
use crate::wire::WireResponse;

/// Most push targets at once: each runs up to 1,000 pollers, so an unbounded list would let a
/// client spawn tasks without limit.
pub const MAX_TARGETS: usize = 100;

/// Path of the push-target endpoints.
pub const PUSH_PATH: &str = "/_localsqs/push";

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
struct QueueLabels {
    queue: String,
}

/// The push counters of `/metrics`, by queue.
#[derive(Debug, Clone, Default)]
struct Counters {
    invocations: Family<QueueLabels, Counter>,
    failures: Family<QueueLabels, Counter>,
    item_failures: Family<QueueLabels, Counter>,
    filtered: Family<QueueLabels, Counter>,
}

impl Counters {
    fn labels(queue: &str) -> QueueLabels {
        QueueLabels {
            queue: queue.to_owned(),
        }
    }

    fn invoked(&self, queue: &str, outcome: Outcome, item_failures: u64) {
        let l = Self::labels(queue);
        self.invocations.get_or_create(&l).inc();
        if matches!(outcome, Outcome::Failure | Outcome::Timeout) {
            self.failures.get_or_create(&l).inc();
        }
        if item_failures > 0 {
            self.item_failures.get_or_create(&l).inc_by(item_failures);
        }
    }

    fn filtered(&self, queue: &str, n: u64) {
        if n > 0 {
            self.filtered.get_or_create(&Self::labels(queue)).inc_by(n);
        }
    }
}

struct Active {
    id: String,
    target: Arc<Compiled>,
    stats: Arc<Mutex<TargetStats>>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

#[derive(Default)]
struct State {
    /// Whether pollers run (after the server has started, until it shuts down).
    running: bool,
    targets: Vec<Active>,
}

/// The push targets of one server: add, list and remove them while it runs.
pub struct PushTargets {
    engine: Engine,
    clock: Arc<dyn Clock>,
    /// Targets given to the builder, restored with the config file's by a reset.
    initial: Vec<PushTarget>,
    state: Mutex<State>,
    next_id: AtomicU64,
    counters: Counters,
    /// The runtime pollers run on, so that targets can be added from any thread.
    runtime: Option<tokio::runtime::Handle>,
}

impl std::fmt::Debug for PushTargets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushTargets").finish_non_exhaustive()
    }
}

impl PushTargets {
    /// No targets yet; `initial` (the builder's) are added by every [`PushTargets::restore`].
    /// Pollers start with [`PushTargets::start`], on the runtime this is created in.
    #[must_use]
    pub fn new(engine: Engine, clock: Arc<dyn Clock>, initial: Vec<PushTarget>) -> Self {
        Self {
            engine,
            clock,
            initial,
            state: Mutex::new(State::default()),
            next_id: AtomicU64::new(1),
            counters: Counters::default(),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the push counters in `/metrics`.
    pub fn register_metrics(&self, registry: &mut Registry) {
        let c = &self.counters;
        registry.register(
            "localsqs_push_invocations",
            "Push-target invocations, by queue",
            c.invocations.clone(),
        );
        registry.register(
            "localsqs_push_failures",
            "Push-target invocations that failed or timed out, by queue",
            c.failures.clone(),
        );
        registry.register(
            "localsqs_push_item_failures",
            "Messages a push target reported in batchItemFailures, by queue",
            c.item_failures.clone(),
        );
        registry.register(
            "localsqs_push_messages_filtered",
            "Messages deleted without invoking because a push filter rejected them, by queue",
            c.filtered.clone(),
        );
    }

    fn spawn(&self, a: &mut Active) {
        for _ in 0..a.target.target.max_concurrency {
            let w = worker::Worker {
                engine: self.engine.clone(),
                clock: Arc::clone(&self.clock),
                id: a.id.clone(),
                target: Arc::clone(&a.target),
                stats: Arc::clone(&a.stats),
                counters: self.counters.clone(),
                stop: a.stop.subscribe(),
            };
            a.tasks.push(match &self.runtime {
                Some(rt) => rt.spawn(w.run()),
                None => tokio::spawn(w.run()),
            });
        }
    }

    /// Adds a target and returns its id; its pollers start at once on a running server.
    /// Refused past [`MAX_TARGETS`].
    pub fn add(&self, target: PushTarget) -> Result<String, String> {
        let target = Arc::new(target.compile()?);
        if self.lock().targets.len() >= MAX_TARGETS {
            return Err(format!(
                "at most {MAX_TARGETS} push targets can be active; remove some first"
            ));
        }
        let id = format!("push-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let mut active = Active {
            id: id.clone(),
            target,
            stats: Arc::default(),
            stop: watch::channel(false).0,
            tasks: Vec::new(),
        };
        let mut state = self.lock();
        if state.running {
            self.spawn(&mut active);
        }
        tracing::info!(target_id = %id, queue = %active.target.target.queue, "push target added");
        state.targets.push(active);
        Ok(id)
    }

    /// Every target with its counters and last invocations, oldest first.
    #[must_use]
    pub fn list(&self) -> Vec<TargetStatus> {
        self.lock()
            .targets
            .iter()
            .map(|a| TargetStatus {
                id: a.id.clone(),
                target: a.target.target.clone(),
                stats: a
                    .stats
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            })
            .collect()
    }

    /// Stops and removes one target; whether it existed. An invocation in flight is abandoned:
    /// its messages become visible again when their visibility timeout ends.
    pub fn remove(&self, id: &str) -> bool {
        let mut state = self.lock();
        let Some(i) = state.targets.iter().position(|a| a.id == id) else {
            return false;
        };
        let a = state.targets.remove(i);
        let _ = a.stop.send(true);
        tracing::info!(target_id = %id, queue = %a.target.target.queue, "push target removed");
        true
    }

    /// Stops and removes every target.
    pub fn clear(&self) {
        for a in std::mem::take(&mut self.lock().targets) {
            let _ = a.stop.send(true);
        }
    }

    /// Replaces every target by the builder's and `declared` (queue name, target as written
    /// under it). Nothing changes when one of them is invalid.
    pub fn restore<'a>(
        &self,
        declared: impl IntoIterator<Item = (&'a str, &'a PushTarget)>,
    ) -> Result<(), String> {
        let mut all = self.initial.clone();
        for (queue, t) in declared {
            if !t.queue.is_empty() && t.queue != queue {
                return Err(format!(
                    "queue {queue}: push target names another queue ({})",
                    t.queue
                ));
            }
            all.push(PushTarget {
                queue: queue.to_owned(),
                ..t.clone()
            });
        }
        for t in &all {
            t.validate()
                .map_err(|e| format!("queue {}: push target: {e}", t.queue))?;
        }
        self.clear();
        for t in all {
            self.add(t)?;
        }
        Ok(())
    }

    /// Starts the pollers of every target (the server calls this once it listens).
    pub fn start(&self) {
        let mut state = self.lock();
        state.running = true;
        let mut targets = std::mem::take(&mut state.targets);
        for a in targets.iter_mut().filter(|a| a.tasks.is_empty()) {
            self.spawn(a);
        }
        state.targets = targets;
    }

    /// Stops every poller and waits for them to finish (server shutdown). Targets stay listed.
    pub async fn shutdown(&self) {
        let tasks: Vec<JoinHandle<()>> = {
            let mut state = self.lock();
            state.running = false;
            state
                .targets
                .iter_mut()
                .flat_map(|a| {
                    let _ = a.stop.send(true);
                    std::mem::take(&mut a.tasks)
                })
                .collect()
        };
        for t in tasks {
            let _ = t.await;
        }
    }

    /// `GET /_localsqs/push`.
    #[must_use]
    pub fn http_list(&self) -> WireResponse {
        WireResponse::json(200, &json!({ "targets": self.list() }))
    }

    /// `POST /_localsqs/push`: the queue must exist.
    pub async fn http_add(&self, body: &[u8]) -> WireResponse {
        let bad = |e: String| WireResponse::json(400, &json!({ "error": e }));
        let target: PushTarget = match serde_json::from_slice(body) {
            Ok(t) => t,
            Err(e) => return bad(format!("not a push target: {e}")),
        };
        if let Err(e) = target.validate() {
            return bad(e);
        }
        let lookup = Command::GetQueueUrl(GetQueueUrl {
            queue_name: target.queue.clone(),
            ..GetQueueUrl::default()
        });
        if self
            .engine
            .execute(
                &RequestContext::new(String::new(), self.engine.default_scope()),
                lookup,
            )
            .await
            .is_err()
        {
            return bad(format!("queue {} does not exist", target.queue));
        }
        match self.add(target) {
            Ok(id) => WireResponse::json(200, &json!({ "id": id })),
            Err(e) => bad(e),
        }
    }

    /// `DELETE /_localsqs/push/<id>`.
    #[must_use]
    pub fn http_remove(&self, path: &str) -> WireResponse {
        let id = path.rsplit('/').next().unwrap_or_default();
        if self.remove(id) {
            WireResponse::json(200, &json!({ "removed": id }))
        } else {
            WireResponse::json(404, &json!({ "error": format!("no push target {id}") }))
        }
    }

    /// `DELETE /_localsqs/push`.
    #[must_use]
    pub fn http_clear(&self) -> WireResponse {
        self.clear();
        WireResponse::json(200, &json!({ "removed": "all" }))
    }
}
