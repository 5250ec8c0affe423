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
mod cold;
mod load;
mod message;
mod metadata;
pub mod metrics;
mod model;
mod movetask;
pub mod peek;
mod poll;
mod prepare;
mod queue;
mod redrive;
mod store;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::command::{Command, Reply, RequestContext};
use crate::error::{SqsError, SqsResult};

pub use crate::command::{Scope, is_account_id};
pub use clock::{Clock, IdGen, ManualClock, RandomIds, SeededIds, SystemClock};
use model::queue::Queue;
use model::registry::Registry;
pub use store::disk::DiskFaults;
use store::handle::Store;
use store::schema::Commit;
pub use store::schema::StoreError;
use store::writer::Reload;

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
    /// Durable mode: about how many bytes of message records (bodies, attributes, ids) stay in
    /// memory after their write is committed, newest first; older ones are read back from the
    /// data file when needed (`engine/cache.rs`). Memory mode keeps every record.
    pub body_cache_bytes: usize,
    /// Enforce AWS's two 60-second cool-offs: PurgeQueueInProgress and QueueDeletedRecently
    /// (docs/protocol.md §6.13). Off by default, as in LocalStack, because they break test suites that purge
    /// between tests or reuse queue names.
    pub enforce_cooloffs: bool,
    /// For tests: a switch that makes the data file's writes fail as on a full disk.
    pub disk_faults: Option<Arc<DiskFaults>>,
    /// The order a standard queue's receive takes messages in, when not oldest first (the
    /// server installs its fault rules here, for `reorder`). `None`: always oldest first.
    pub receive_order: Option<Arc<dyn ReceiveOrder>>,
    /// Most messages in flight per queue, AWS's 120,000 by default (docs/protocol.md §6.8):
    /// past it a short-poll receive on a standard queue fails with OverLimit and a FIFO receive
    /// returns nothing more; FIFO receives also look for available groups only among a queue's
    /// first this-many messages (§6.9). `None` lifts both.
    pub max_inflight: Option<usize>,
    /// Most queues the server holds, across accounts and regions (100,000 by default, about
    /// 6 KiB of memory each when empty): past it CreateQueue fails with OverLimit. AWS sets no
    /// such limit; an emulator must not let clients grow its memory without bound. `None`
    /// lifts it.
    pub max_queues: Option<usize>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            account_id: "000000000000".into(),
            region: "us-east-1".into(),
            data_dir: None,
            cache_bytes: 16 << 20,
            body_cache_bytes: 32 << 20,
            enforce_cooloffs: false,
            disk_faults: None,
            receive_order: None,
            max_inflight: Some(120_000),
            max_queues: Some(100_000),
        }
    }
}

/// An extension point for the order in which a ReceiveMessage on a standard queue takes the
/// messages it may receive: oldest first unless [`ReceiveOrder::seed`] gives a seed, from
/// which the order is then drawn. Installed with [`EngineOptions::receive_order`].
pub trait ReceiveOrder: Send + Sync + std::fmt::Debug {
    /// For one ReceiveMessage on the standard queue named `queue_name` (the name its queue
    /// URL gives): a seed to take receivable messages in random order from, or `None` for
    /// oldest first. Asked once per request, before the request is checked; never for FIFO
    /// queues, whose order is their guarantee.
    fn seed(&self, queue_name: &str) -> Option<u64>;
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
    /// The configured account and region, shared by every request that names no other.
    default_scope: Arc<Scope>,
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
        let reload_slot: Arc<OnceLock<Reload>> = Arc::new(OnceLock::new());
        let mut opened = None;
        let reg = load::registry_from(&cfg, now, |sink| {
            let (store, loaded) = Store::open(
                cfg.data_dir.as_deref(),
                cfg.cache_bytes,
                metrics.clone(),
                cfg.disk_faults.clone(),
                Arc::clone(&reload_slot),
                sink,
            )?;
            opened = Some(store);
            Ok(loaded)
        })?;
        let store = opened.ok_or(StoreError::Closed)?;
        let (cfg_account, cfg_region) = (cfg.account_id.clone(), cfg.region.clone());
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
                default_scope: Arc::new(Scope {
                    account: cfg_account,
                    region: cfg_region,
                }),
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
        // After a recovery from a failing disk, memory is rebuilt from the file.
        let weak = Arc::downgrade(&engine.inner);
        let reload: Reload = Box::new(move |db| {
            let Some(inner) = weak.upgrade() else {
                return Ok(());
            };
            Engine { inner }.reload_from(db)
        });
        let _ = reload_slot.set(reload);
        engine.spawn_sweeper();
        Ok(engine)
    }

    /// Replaces every queue, message, tombstone and task in memory with what the data file
    /// holds (called on the writer thread once the store has recovered).
    fn reload_from(&self, db: &redb::Database) -> Result<(), StoreError> {
        let now = self.now();
        let fresh = load::registry_from(&self.inner.cfg, now, |sink| store::scan::load(db, sink))?;
        let running: Vec<String> = fresh
            .tasks()
            .iter()
            .filter(|t| t.running())
            .map(|t| t.id.clone())
            .collect();
        let old = std::mem::replace(&mut *self.lock(), fresh);
        // Parked long polls of the old queues look again, now at the reloaded ones.
        for q in old.queues() {
            q.wake();
        }
        drop(old);
        self.inner.tasks_notify.notify_waiters();
        for id in running {
            self.spawn_mover(id);
        }
        Ok(())
    }

    /// Why storage cannot write right now, if it cannot: the disk failed and the store is
    /// recovering. SQS requests should not be served meanwhile.
    #[must_use]
    pub fn storage_failure(&self) -> Option<String> {
        self.inner.store.failure()
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
        // A tombstone only serves the 60-second re-create rule (§6.13).
        for arn in reg.prune_tombstones(now.saturating_sub(queue::COOLOFF_MS)) {
            ops.push(store::schema::Op::DeleteTombstone(arn));
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

    /// The account and region a request acts in: the region of its credential scope, else the
    /// configured one; the account of its access key id when that is 12 digits, else the
    /// configured one (docs/protocol.md §1.1). When that is the configured scope (the usual
    /// case) the configured `Arc` is shared, so a request allocates nothing for it.
    #[must_use]
    pub fn scope_for(&self, access_key: Option<&str>, region: Option<&str>) -> Arc<Scope> {
        let default = &self.inner.default_scope;
        let account = access_key.filter(|k| is_account_id(k) && *k != default.account);
        let region = region.filter(|r| *r != default.region);
        if account.is_none() && region.is_none() {
            return Arc::clone(default);
        }
        Arc::new(Scope {
            account: account.unwrap_or(&default.account).to_owned(),
            region: region.unwrap_or(&default.region).to_owned(),
        })
    }

    /// The configured account and region.
    #[must_use]
    pub fn default_scope(&self) -> Arc<Scope> {
        Arc::clone(&self.inner.default_scope)
    }

    /// How many deleted-queue tombstones the engine keeps (they are pruned after 60 s).
    #[must_use]
    pub fn tombstone_count(&self) -> usize {
        self.lock().tombstone_count()
    }

    /// How many message move tasks the engine keeps (at most ten per source queue).
    #[must_use]
    pub fn task_count(&self) -> usize {
        self.lock().tasks().len()
    }

    /// Runs one command in the scope (account and region) of its request context.
    pub async fn execute(&self, ctx: &RequestContext, cmd: Command) -> SqsResult<Reply> {
        match cmd {
            Command::CreateQueue(c) => self.create_queue(ctx, c).await.map(Reply::CreateQueue),
            Command::GetQueueUrl(c) => self.get_queue_url(ctx, &c).map(Reply::GetQueueUrl),
            Command::ListQueues(c) => self.list_queues(ctx, &c).map(Reply::ListQueues),
            Command::DeleteQueue(c) => self
                .delete_queue(&ctx.scope, &c)
                .await
                .map(Reply::DeleteQueue),
            Command::GetQueueAttributes(c) => self
                .get_queue_attributes(&ctx.scope, &c)
                .await
                .map(Reply::GetQueueAttributes),
            Command::SetQueueAttributes(c) => self
                .set_queue_attributes(&ctx.scope, &c)
                .await
                .map(Reply::SetQueueAttributes),
            Command::SendMessage(c) => self.send_message(ctx, c).await.map(Reply::SendMessage),
            Command::ReceiveMessage(c) => self
                .receive_message(&ctx.scope, &c)
                .await
                .map(Reply::ReceiveMessage),
            Command::DeleteMessage(c) => self
                .delete_message(&ctx.scope, &c)
                .await
                .map(Reply::DeleteMessage),
            Command::ChangeMessageVisibility(c) => self
                .change_message_visibility(&ctx.scope, &c)
                .await
                .map(Reply::ChangeMessageVisibility),
            Command::SendMessageBatch(c) => self
                .send_message_batch(ctx, c)
                .await
                .map(Reply::SendMessageBatch),
            Command::DeleteMessageBatch(c) => self
                .delete_message_batch(&ctx.scope, &c)
                .await
                .map(Reply::DeleteMessageBatch),
            Command::ChangeMessageVisibilityBatch(c) => self
                .change_message_visibility_batch(&ctx.scope, &c)
                .await
                .map(Reply::ChangeMessageVisibilityBatch),
            Command::PurgeQueue(c) => self
                .purge_queue(&ctx.scope, &c)
                .await
                .map(Reply::PurgeQueue),
            Command::TagQueue(c) => self.tag_queue(&ctx.scope, &c).await.map(Reply::TagQueue),
            Command::UntagQueue(c) => self
                .untag_queue(&ctx.scope, &c)
                .await
                .map(Reply::UntagQueue),
            Command::ListQueueTags(c) => self
                .list_queue_tags(&ctx.scope, &c)
                .map(Reply::ListQueueTags),
            Command::AddPermission(c) => self
                .add_permission(&ctx.scope, &c)
                .await
                .map(Reply::AddPermission),
            Command::RemovePermission(c) => self
                .remove_permission(&ctx.scope, &c)
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

    /// The URL of queue `name` in `scope`, on the request's base URL.
    fn queue_url(&self, ctx: &RequestContext, scope: &Scope, name: &str) -> String {
        format!("{}/{}/{}", ctx.base_url, scope.account, name)
    }

    /// The ARN of queue `name` in the configured account and region.
    #[must_use]
    pub fn queue_arn(&self, name: &str) -> String {
        self.default_scope().arn(name)
    }

    /// Resolves a `QueueUrl` (a full URL, a path or a bare name, §2.3) to a queue id: the
    /// account and region the URL names, else those of `scope` (the request's).
    fn resolve(&self, reg: &Registry, scope: &Scope, url: &str) -> SqsResult<u64> {
        let parts = model::address::parse_url(url).ok_or_else(SqsError::queue_does_not_exist)?;
        let account = parts.account.unwrap_or(&scope.account);
        let region = parts.region.unwrap_or(&scope.region);
        reg.id_in(account, region, parts.name)
            .ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names.
    fn queue<'a>(&self, reg: &'a Registry, scope: &Scope, url: &str) -> SqsResult<&'a Queue> {
        let id = self.resolve(reg, scope, url)?;
        reg.get(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The queue a `QueueUrl` names, for changing it under the lock.
    fn queue_mut<'a>(
        &self,
        reg: &'a mut Registry,
        scope: &Scope,
        url: &str,
    ) -> SqsResult<&'a mut Queue> {
        let id = self.resolve(reg, scope, url)?;
        reg.get_mut(id).ok_or_else(SqsError::queue_does_not_exist)
    }

    /// The id of the queue an ARN names (in the ARN's account and region).
    fn queue_by_arn(&self, reg: &Registry, arn: &str) -> Option<u64> {
        let (scope, name) = model::address::parse_arn(arn)?;
        reg.id_of(&scope, name)
    }

    async fn commit(&self, commit: Commit) -> SqsResult<()> {
        commit.wait().await.map_err(SqsError::internal)
    }
}
