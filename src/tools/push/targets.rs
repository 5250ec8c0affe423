//! Tools layer: the push targets of one server: adding, listing and removing them while it
//! runs, and starting and stopping their pollers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus_client::registry::Registry;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::stats::{Counters, TargetStats, TargetStatus};
use super::target::{Compiled, PushTarget};
use super::worker;
use crate::engine::{Clock, Engine};

/// Most push targets at once: each runs up to 1,000 pollers, so an unbounded list would let a
/// client spawn tasks without limit.
pub const MAX_TARGETS: usize = 100;

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
}
