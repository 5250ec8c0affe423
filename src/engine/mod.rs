//! Engine layer: queues and messages, in memory and persisted to redb with group commit.
//!
//! Imports `command` and `error` only; never `wire`, `server`, `hyper` or `quick_xml`.
//! Every public entry point takes a [`Command`] and returns a [`Reply`] or an [`SqsError`].
//!
//! Inside, one mutex guards the `Registry` of queues (`registry.rs`); each `Queue`
//! (`queue_state.rs`) keeps its messages in a `MessageIndex` (`index.rs`). The action modules
//! (`queue`, `message`, `batch`, `metadata`, `redrive`, `movetask`, `poll`, `peek`) add
//! `impl Engine` blocks; every change they make produces `Op`s that the store commits in the
//! background (`store.rs`; the on-disk records are in `record.rs` and docs/storage.md).

mod batch;
pub mod clock;
mod fifo;
mod index;
mod message;
mod metadata;
pub mod metrics;
mod movetask;
pub mod peek;
mod poll;
mod queue;
mod queue_state;
mod receipt;
mod record;
mod redrive;
mod registry;
pub mod store;
mod task;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::command::{Command, Reply, RequestContext};
use crate::error::{SqsError, SqsResult};

pub use clock::{Clock, IdGen, ManualClock, RandomIds, SeededIds, SystemClock};
use queue_state::Queue;
use registry::Registry;
use store::{Commit, Store, StoreError};
use task::Task;

/// Settings the engine needs.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Account id in queue URLs and ARNs.
    pub account_id: String,
    /// Region in ARNs.
    pub region: String,
    /// `None` keeps state in memory only, for the life of the process.
    pub data_dir: Option<PathBuf>,
    /// redb page-cache size.
    pub cache_bytes: usize,
    /// Enforce AWS's two 60-second cool-offs: PurgeQueueInProgress and QueueDeletedRecently
    /// (docs/protocol.md §6.13). Off by default, as in LocalStack, because they break test suites that purge
    /// between tests or reuse queue names.
    pub enforce_cooloffs: bool,
    /// Most messages in flight per queue, AWS's 120,000 by default (docs/protocol.md §6.8):
    /// past it a short-poll receive on a standard queue fails with OverLimit and a FIFO receive
    /// returns nothing more; FIFO receives also look for available groups only among a queue's
    /// first this-many messages (§6.9). `None` lifts both.
    pub max_inflight: Option<usize>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            account_id: "000000000000".into(),
            region: "us-east-1".into(),
            data_dir: None,
            cache_bytes: 16 << 20,
            enforce_cooloffs: false,
            max_inflight: Some(120_000),
        }
    }
}

struct Inner {
    registry: Mutex<Registry>,
    store: Store,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    cfg: EngineOptions,
    closing: AtomicBool,
    /// Wakes background move tasks (cancel, clock moves, shutdown).
    tasks_notify: Arc<tokio::sync::Notify>,
    /// Counters for `/metrics`.
    metrics: Arc<metrics::EngineMetrics>,
}

/// The SQS engine. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("cfg", &self.inner.cfg)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Opens the engine, loading any persisted state.
    pub fn open(
        cfg: EngineOptions,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
    ) -> Result<Engine, StoreError> {
        let metrics = Arc::new(metrics::EngineMetrics::default());
        let now = clock.now_ms();
        let mut reg = Registry::new();
        let mut sink = |row: store::Row| {
            match row {
                store::Row::Queue(id, rec) => {
                    reg.add(Queue::from_record(id, rec).map_err(StoreError::Decode)?);
                }
                store::Row::Message(qid, seq, rec, state) => {
                    if let Some(q) = reg.get_mut(qid) {
                        q.restore(seq, rec, state, now);
                    }
                }
            }
            Ok(())
        };
        let (store, loaded) = Store::open(
            cfg.data_dir.as_deref(),
            cfg.cache_bytes,
            metrics.clone(),
            &mut sink,
        )?;
        for (name, at) in loaded.tombstones {
            reg.tombstone(name, at);
        }
        for q in reg.queues_mut().filter(|q| q.is_fifo()) {
            // FIFO queues apply the current DelaySeconds to messages not yet received (§6.6).
            q.redelay(now);
        }
        for (qid, key, rec) in loaded.dedup {
            if let Some(q) = reg.get_mut(qid) {
                q.fifo_state().restore(key, rec);
            }
        }
        let mut tasks = loaded
            .tasks
            .into_iter()
            .map(Task::from_record)
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::Decode)?;
        tasks.sort_by_key(|t| t.started_ms);
        *reg.tasks_mut() = tasks;
        let engine = Engine {
            inner: Arc::new(Inner {
                registry: Mutex::new(reg),
                store,
                clock,
                ids,
                cfg,
                closing: AtomicBool::new(false),
                tasks_notify: Arc::new(tokio::sync::Notify::new()),
                metrics,
            }),
        };
        let running: Vec<String> = engine
            .lock()
            .tasks()
            .iter()
            .filter(|t| t.running())
            .map(|t| t.id.clone())
            .collect();
        for id in running {
            engine.spawn_mover(id);
        }
        engine.spawn_sweeper();
        Ok(engine)
    }

    /// The configuration this engine runs with.
    #[must_use]
    pub fn config(&self) -> &EngineOptions {
        &self.inner.cfg
    }

    /// The engine's counters.
    #[must_use]
    pub fn metrics(&self) -> &Arc<metrics::EngineMetrics> {
        &self.inner.metrics
    }

    /// Whether replies wait for a durable commit.
    #[must_use]
    pub fn durable(&self) -> bool {
        self.inner.store.durable()
    }

    /// A fresh UUID from the injected generator (request ids use it too).
    #[must_use]
    pub fn new_uuid(&self) -> String {
        self.inner.ids.uuid()
    }

    /// Wakes every parked long poll so it re-reads the clock; call after moving a
    /// [`ManualClock`].
    pub fn wake_all(&self) {
        for q in self.lock().queues() {
            q.wake();
        }
        self.inner.tasks_notify.notify_waiters();
    }

    /// Starts the background sweep that drops expired messages (retention) and expired FIFO
    /// deduplication entries from queues nobody is reading, so their space is reclaimed.
    fn spawn_sweeper(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Hold only a weak reference so the sweeper never keeps a dropped engine alive.
        let weak = Arc::downgrade(&self.inner);
        rt.spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                if engine.closing() {
                    return;
                }
                engine.sweep();
            }
        });
    }

    /// One sweep over every queue.
    pub fn sweep(&self) {
        let now = self.now();
        let mut reg = self.lock();
        let mut ops = Vec::new();
        for q in reg.queues_mut() {
            q.expire(now, &mut ops);
            if q.is_fifo() {
                let id = q.id();
                q.fifo_state().prune(id, now, &mut ops);
            }
        }
        if !ops.is_empty() {
            // Nothing waits on this commit; it only reclaims space.
            drop(self.inner.store.submit(ops));
        }
    }

    /// Makes parked long polls answer now (with no messages) and every later poll return at once.
    pub fn shutdown(&self) {
        self.inner.closing.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// Finishes pending commits and closes the database file. Call after [`Engine::shutdown`]
    /// once no more requests arrive; later writes fail with `InternalError`.
    pub async fn close(&self) {
        if let Err(e) = self.inner.store.close().wait().await {
            tracing::warn!(error = %e, "closing the store");
        }
    }

    fn closing(&self) -> bool {
        self.inner.closing.load(Ordering::SeqCst)
    }

    /// Runs one command.
    pub async fn execute(&self, ctx: &RequestContext, cmd: Command) -> SqsResult<Reply> {
        match cmd {
            Command::CreateQueue(c) => self.create_queue(ctx, c).await.map(Reply::CreateQueue),
            Command::GetQueueUrl(c) => self.get_queue_url(ctx, &c).map(Reply::GetQueueUrl),
            Command::ListQueues(c) => self.list_queues(ctx, &c).map(Reply::ListQueues),
            Command::DeleteQueue(c) => self.delete_queue(&c).await.map(Reply::DeleteQueue),
            Command::GetQueueAttributes(c) => self
                .get_queue_attributes(&c)
                .await
                .map(Reply::GetQueueAttributes),
            Command::SetQueueAttributes(c) => self
                .set_queue_attributes(&c)
                .await
                .map(Reply::SetQueueAttributes),
            Command::SendMessage(c) => self.send_message(ctx, c).await.map(Reply::SendMessage),
            Command::ReceiveMessage(c) => self
                .receive_message(&c, ctx.random_order)
                .await
                .map(Reply::ReceiveMessage),
            Command::DeleteMessage(c) => self.delete_message(&c).await.map(Reply::DeleteMessage),
            Command::ChangeMessageVisibility(c) => self
                .change_message_visibility(&c)
                .await
                .map(Reply::ChangeMessageVisibility),
            Command::SendMessageBatch(c) => self
                .send_message_batch(ctx, c)
                .await
                .map(Reply::SendMessageBatch),
            Command::DeleteMessageBatch(c) => self
                .delete_message_batch(&c)
                .await
                .map(Reply::DeleteMessageBatch),
            Command::ChangeMessageVisibilityBatch(c) => self
                .change_message_visibility_batch(&c)
                .await
                .map(Reply::ChangeMessageVisibilityBatch),
            Command::PurgeQueue(c) => self.purge_queue(&c).await.map(Reply::PurgeQueue),
            Command::TagQueue(c) => self.tag_queue(&c).await.map(Reply::TagQueue),
            Command::UntagQueue(c) => self.untag_queue(&c).await.map(Reply::UntagQueue),
            Command::ListQueueTags(c) => self.list_queue_tags(&c).map(Reply::ListQueueTags),
            Command::AddPermission(c) => self.add_permission(&c).await.map(Reply::AddPermission),
            Command::RemovePermission(c) => self
                .remove_permission(&c)
                .await
                .map(Reply::RemovePermission),
            Command::ListDeadLetterSourceQueues(c) => self
                .list_dead_letter_source_queues(ctx, &c)
                .map(Reply::ListDeadLetterSourceQueues),
            Command::StartMessageMoveTask(c) => self
                .start_message_move_task(&c)
                .await
                .map(Reply::StartMessageMoveTask),
            Command::CancelMessageMoveTask(c) => self
                .cancel_message_move_task(&c)
                .await
                .map(Reply::CancelMessageMoveTask),
            Command::ListMessageMoveTasks(c) => self
                .list_message_move_tasks(&c)
                .map(Reply::ListMessageMoveTasks),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock cannot leave the maps half-updated in a way that
        // matters more than refusing all service, so keep serving.
        self.inner
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        self.inner.clock.now_ms()
    }

    fn queue_url(&self, ctx: &RequestContext, name: &str) -> String {
        format!("{}/{}/{}", ctx.base_url, self.inner.cfg.account_id, name)
    }

    /// The ARN of queue `name` in this account and region.
    #[must_use]
    pub fn queue_arn(&self, name: &str) -> String {
        format!(
            "arn:aws:sqs:{}:{}:{}",
            self.inner.cfg.region, self.inner.cfg.account_id, name
        )
    }

    /// Resolves a `QueueUrl` (a full URL, a path or a bare name, §2.3) to a queue id.
    fn resolve(&self, reg: &Registry, url: &str) -> SqsResult<u64> {
        let name = queue_name_from_url(url, &self.inner.cfg.account_id)
            .ok_or_else(SqsError::queue_does_not_exist)?;
        reg.id_of(name).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names.
    fn queue<'a>(&self, reg: &'a Registry, url: &str) -> SqsResult<&'a Queue> {
        let id = self.resolve(reg, url)?;
        reg.get(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names, for changing it under the lock.
    fn queue_mut<'a>(&self, reg: &'a mut Registry, url: &str) -> SqsResult<&'a mut Queue> {
        let id = self.resolve(reg, url)?;
        reg.get_mut(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The id of the queue an ARN names, in this account and region.
    fn queue_by_arn(&self, reg: &Registry, arn: &str) -> Option<u64> {
        let name = crate::command::arn_name(arn)?;
        let id = reg.id_of(name)?;
        (self.queue_arn(name) == arn).then_some(id)
    }

    async fn commit(&self, commit: Commit) -> SqsResult<()> {
        commit.wait().await.map_err(SqsError::internal)
    }
}

/// Extracts the queue name from a queue URL, path or bare name; `None` when the URL names
/// another account or has no queue in it.
fn queue_name_from_url<'a>(url: &'a str, account: &str) -> Option<&'a str> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, p)| p),
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut parts = path.split('/').filter(|s| !s.is_empty()).rev();
    let name = parts.next()?;
    match parts.next() {
        Some(acct) if acct != account => None,
        _ => Some(name),
    }
}

#[cfg(test)]
mod tests {
    use super::queue_name_from_url as n;

    #[test]
    fn queue_urls_paths_and_names() {
        let a = "000000000000";
        assert_eq!(
            n("http://localhost:9324/000000000000/jobs", a),
            Some("jobs")
        );
        assert_eq!(
            n("https://sqs.us-east-1.amazonaws.com/000000000000/q.fifo", a),
            Some("q.fifo")
        );
        assert_eq!(n("/000000000000/jobs", a), Some("jobs"));
        assert_eq!(n("jobs", a), Some("jobs"));
        assert_eq!(n("http://whatever-incorrect-queue-address", a), None);
        assert_eq!(n("http://localhost:9324/123456789012/jobs", a), None);
        assert_eq!(n("", a), None);
    }
}
