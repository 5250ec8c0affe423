//! Engine layer: queues and messages, in memory and persisted to redb with group commit.
//!
//! Imports `command` and `error` only; never `wire`, `server`, `hyper` or `quick_xml`.
//! Every public entry point takes a [`Command`] and returns a [`Reply`] or an [`SqsError`].

mod batch;
pub mod clock;
mod fifo;
mod message;
mod metadata;
pub mod metrics;
mod movetask;
pub mod peek;
mod poll;
mod queue;
pub mod receipt;
pub mod record;
mod redrive;
pub mod state;
pub mod store;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::command::{Command, Reply, RequestContext};
use crate::error::{SqsError, SqsResult};

pub use clock::{Clock, IdGen, ManualClock, RandomIds, SeededIds, SystemClock};
use state::Queue;
use store::{Commit, Store, StoreError};

/// Settings the engine needs.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Account id in queue URLs and ARNs.
    pub account_id: String,
    /// Region in ARNs.
    pub region: String,
    /// `None` keeps state in memory only, for the life of the process.
    pub data_dir: Option<PathBuf>,
    /// redb page-cache size.
    pub cache_bytes: usize,
    /// Enforce AWS's two 60-second cool-offs: PurgeQueueInProgress and QueueDeletedRecently
    /// (§6.13). Off by default, as in LocalStack, because they break test suites that purge
    /// between tests or reuse queue names.
    pub enforce_cooloffs: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            account_id: "000000000000".into(),
            region: "us-east-1".into(),
            data_dir: None,
            cache_bytes: 16 << 20,
            enforce_cooloffs: false,
        }
    }
}

/// All queues.
#[derive(Debug, Default)]
pub(crate) struct State {
    by_name: HashMap<String, u64>,
    queues: HashMap<u64, Queue>,
    next_queue_id: u64,
    /// Deleted queue names → deletion time (epoch ms).
    tombstones: HashMap<String, u64>,
    /// Message move tasks, oldest first.
    tasks: Vec<movetask::TaskRecord>,
}

struct Inner {
    state: Mutex<State>,
    store: Store,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    cfg: EngineConfig,
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
        cfg: EngineConfig,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
    ) -> Result<Engine, StoreError> {
        let metrics = Arc::new(metrics::EngineMetrics::default());
        let now = clock.now_ms();
        let mut st = State {
            next_queue_id: 1,
            ..State::default()
        };
        let mut sink = |row: store::Row| match row {
            store::Row::Queue(id, rec) => {
                st.by_name.insert(rec.name.clone(), id);
                st.next_queue_id = st.next_queue_id.max(id + 1);
                st.queues.insert(id, Queue::new(id, rec));
            }
            store::Row::Message(qid, seq, rec, state) => {
                if let Some(q) = st.queues.get_mut(&qid) {
                    if let Some(n) = rec.extra().sequence_number {
                        q.fifo.saw_sequence(n);
                    }
                    q.insert(seq, Arc::new(rec), state, now);
                }
            }
        };
        let (store, loaded) = Store::open(
            cfg.data_dir.as_deref(),
            cfg.cache_bytes,
            metrics.clone(),
            &mut sink,
        )?;
        st.tombstones.extend(loaded.tombstones);
        for q in st.queues.values_mut().filter(|q| q.rec.fifo) {
            // FIFO queues apply the current DelaySeconds to messages not yet received (§6.6).
            q.redelay(now);
        }
        for (qid, key, bytes) in loaded.dedup {
            if let Some(q) = st.queues.get_mut(&qid) {
                q.fifo.restore(key, store::decode(&bytes)?);
            }
        }
        let mut tasks = loaded
            .tasks
            .iter()
            .map(|b| store::decode::<movetask::TaskRecord>(b))
            .collect::<Result<Vec<_>, _>>()?;
        tasks.sort_by_key(|t| t.started_ms);
        st.tasks = tasks;
        let engine = Engine {
            inner: Arc::new(Inner {
                state: Mutex::new(st),
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
            .tasks
            .iter()
            .filter(|t| t.status == "RUNNING")
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
    pub fn config(&self) -> &EngineConfig {
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
        for q in self.lock().queues.values() {
            q.notify.notify_waiters();
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
        let mut st = self.lock();
        let mut ops = Vec::new();
        for q in st.queues.values_mut() {
            q.expire(now, &mut ops);
            if q.rec.fifo {
                q.fifo.prune(q.id, now, &mut ops);
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
            Command::ReceiveMessage(c) => self.receive_message(&c).await.map(Reply::ReceiveMessage),
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

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-updated in a way that
        // matters more than refusing all service, so keep serving.
        self.inner
            .state
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
    fn resolve(&self, st: &State, url: &str) -> SqsResult<u64> {
        let name = queue_name_from_url(url, &self.inner.cfg.account_id)
            .ok_or_else(SqsError::queue_does_not_exist)?;
        st.by_name
            .get(name)
            .copied()
            .ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names, for changing it under the lock.
    fn queue_mut<'a>(&self, st: &'a mut State, url: &str) -> SqsResult<&'a mut Queue> {
        let id = self.resolve(st, url)?;
        st.queues
            .get_mut(&id)
            .ok_or_else(SqsError::queue_does_not_exist)
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
