//! Engine layer, top: the `Engine` handle. Opening (loading the store into the model, restarting
//! move tasks, starting the sweeper), reloading after a recovered disk, the sweep, shutdown
//! and close; and what every action shares: the lock, the clock, the request scope
//! ([`Engine::scope_for`]) and waiting for a commit (queue resolution is in `resolve.rs`). The
//! actions themselves are `impl Engine` blocks in `ops/`; the match over `Command` is
//! [`Engine::execute`] in `ops/execute.rs`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::clock::{Clock, IdGen, MAX_TIME_MS};
use super::load;
use super::metrics::EngineMetrics;
use super::model::registry::{COOLOFF_MS, Registry};
use super::options::{EngineOptions, Regions};
use super::store::handle::Store;
use super::store::health::Mode;
use super::store::scan;
use super::store::schema::{Commit, Op, StoreError};
use super::store::writer::Reload;
use crate::command::{RequestContext, Scope, is_account_id};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// How many queues [`Engine::sweep`] visits per hold of the engine lock: a few milliseconds
/// at most on a 2-core virtual machine.
pub const SWEEP_CHUNK: usize = 256;

/// How many queues the background sweep visits each second: with more queues than this, a
/// pass over all of them takes several seconds (13 at 50,000 queues), so an idle server does
/// not spend a core walking them.
pub const SWEEP_PER_TICK: usize = 4096;

/// What every clone of an [`Engine`] shares.
pub(super) struct Inner {
    pub(super) registry: Mutex<Registry>,
    pub(super) store: Store,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) ids: Arc<dyn IdGen>,
    pub(super) cfg: EngineOptions,
    pub(super) closing: AtomicBool,
    /// Wakes background move tasks (cancel, clock moves, shutdown).
    pub(super) tasks_notify: Arc<tokio::sync::Notify>,
    /// Counters for `/metrics`.
    pub(super) metrics: Arc<EngineMetrics>,
    /// The configured account and region, shared by every request that names no other.
    pub(super) default_scope: Arc<Scope>,
    /// How many long polls are parked (the registry's `Polls` keeps it; kept across reloads).
    pub(super) parked: Arc<AtomicUsize>,
}

/// What storage can do now ([`Engine::storage_state`]); each state but `Ready` carries the
/// reason and how to recover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageState {
    /// Commits succeed (or nothing is stored: memory mode).
    Ready,
    /// The data file is writable again after a failure, and requests are served; not yet
    /// ready until a commit (or a test write of 1 MiB) has succeeded.
    Recovering(String),
    /// The disk is full and localsqs spent the reserve it keeps beside its data file: reads,
    /// receives and deletes are served (a queue can be drained, purged or deleted), sends and
    /// other writes refused with 503, until the disk has space again.
    DeletesOnly(String),
    /// The data file cannot be written: reads are served from it, writes refused with 503.
    ReadOnly(String),
    /// A write failed just now: every request is refused with 503 until memory is rebuilt
    /// from the file (a moment).
    Failed(String),
}

/// What a request does to storage, for refusing it while storage cannot serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Reads only.
    Read,
    /// Consumes or removes messages, adding no data: receives, visibility changes, deletes,
    /// purges, DeleteQueue, reset and the sweep of expired messages. They are what drains a
    /// queue, and they fit in the reserve kept for a full disk.
    Consume,
    /// Anything else.
    Write,
}

/// The SQS engine. Cheap to clone; all clones share one state.
#[derive(Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
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
        let metrics = Arc::new(EngineMetrics::default());
        let now = clock.now_ms().min(MAX_TIME_MS);
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
        let parked = reg.polls.counter();
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
                parked,
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
        let fresh = load::registry_from(&self.inner.cfg, now, |sink| scan::load(db, sink))?;
        let running: Vec<String> = fresh
            .tasks()
            .iter()
            .filter(|t| t.running())
            .map(|t| t.id.clone())
            .collect();
        let old = {
            let mut reg = self.lock();
            let mut old = std::mem::replace(&mut *reg, fresh);
            // Parked polls keep their places (they look again below, at the new queues).
            reg.polls = std::mem::take(&mut old.polls);
            old
        };
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

    /// Why no SQS request can be served right now, if none can: a commit failed and memory,
    /// which may hold changes the disk refused, is being rebuilt from the file. One atomic
    /// load while storage is fine. The text says how to recover.
    #[must_use]
    pub fn storage_failure(&self) -> Option<String> {
        match self.inner.store.mode() {
            Mode::Failed => Some(self.storage_advice()),
            Mode::Ready | Mode::Unproven | Mode::Reserve | Mode::ReadOnly => None,
        }
    }

    /// What storage can do now, for `/health` (docs/operations.md, "A full disk").
    #[must_use]
    pub fn storage_state(&self) -> StorageState {
        match self.inner.store.mode() {
            Mode::Ready => StorageState::Ready,
            Mode::Unproven => StorageState::Recovering(self.storage_advice()),
            Mode::Reserve => StorageState::DeletesOnly(self.storage_advice()),
            Mode::ReadOnly => StorageState::ReadOnly(self.storage_advice()),
            Mode::Failed => StorageState::Failed(self.storage_advice()),
        }
    }

    /// The latest storage failure and how to recover from it.
    fn storage_advice(&self) -> String {
        let reason = self.inner.store.reason();
        let reason = if reason.is_empty() {
            "a write to the data file failed".to_owned()
        } else {
            reason
        };
        let dir = self
            .inner
            .cfg
            .data_dir
            .as_deref()
            .map_or_else(String::new, |d| format!(" ({})", d.display()));
        format!(
            "{reason}. Free space on the disk that holds the data directory{dir}, or make it writable; localsqs resumes by itself, with no restart (docs/operations.md)"
        )
    }

    /// The error of a request that storage refuses: 503, with the reason and the way out.
    pub(super) fn storage_unavailable(&self) -> SqsError {
        let what = match self.inner.store.mode() {
            Mode::Reserve => {
                "The disk is full: localsqs serves reads, receives and deletes only, from the space it keeps in reserve"
            }
            Mode::ReadOnly => "Storage cannot be written: localsqs serves reads only",
            Mode::Ready | Mode::Unproven | Mode::Failed => "Storage cannot be written",
        };
        SqsError::new(
            ErrorCode::ServiceUnavailable,
            format!("{what}: {}.", self.storage_advice()),
        )
    }

    /// Refuses a request that storage cannot serve now, before memory is touched (so that
    /// memory keeps equal to the file): on a full disk only reads and [`Access::Consume`]
    /// (receives and deletes), while the file
    /// can be read only reads, after a failed commit nothing. One atomic load while storage is
    /// fine.
    pub(super) fn refuse_unwritable(&self, access: Access) -> SqsResult<()> {
        match (self.inner.store.mode(), access) {
            (Mode::Ready | Mode::Unproven, _)
            | (Mode::Reserve, Access::Read | Access::Consume)
            | (Mode::ReadOnly, Access::Read) => Ok(()),
            (Mode::Reserve | Mode::ReadOnly | Mode::Failed, _) => Err(self.storage_unavailable()),
        }
    }

    /// Whether changes of this kind can be written now (background work waits while they
    /// cannot).
    pub(super) fn writable(&self, access: Access) -> bool {
        self.refuse_unwritable(access).is_ok()
    }

    /// The configuration this engine runs with.
    #[must_use]
    pub fn config(&self) -> &EngineOptions {
        &self.inner.cfg
    }

    /// The engine's counters.
    #[must_use]
    pub fn metrics(&self) -> &Arc<EngineMetrics> {
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
    /// [`ManualClock`](crate::engine::clock::ManualClock).
    pub fn wake_all(&self) {
        for q in self.lock().queues() {
            q.wake();
        }
        self.inner.tasks_notify.notify_waiters();
    }

    /// Starts the background sweep that drops expired messages (retention) and expired FIFO
    /// deduplication entries from queues nobody is reading, so their space is reclaimed. Each
    /// second it visits up to [`SWEEP_PER_TICK`] queues, going on from where it stopped.
    fn spawn_sweeper(&self) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Hold only a weak reference so the sweeper never keeps a dropped engine alive.
        let weak = Arc::downgrade(&self.inner);
        rt.spawn(async move {
            let mut cursor = 0;
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                if engine.closing() {
                    return;
                }
                // Off the runtime's workers, which would leave their connections unpolled.
                let from = cursor;
                let swept =
                    tokio::task::spawn_blocking(move || engine.sweep_some(from, SWEEP_PER_TICK));
                let Ok(next) = swept.await else { return };
                cursor = next.unwrap_or(0);
            }
        });
    }

    /// One sweep over every queue; see [`Engine::sweep_some`].
    pub fn sweep(&self) {
        self.sweep_some(0, usize::MAX);
    }

    /// Sweeps up to `budget` queues, in id order from id `from` on, and prunes the tombstones
    /// whose 60 seconds have passed. Answers the id to go on from, or `None` once the last
    /// queue was swept. Nothing is swept while storage cannot be written: memory must keep
    /// equal to the file.
    ///
    /// Only space depends on it: receives and GetQueueAttributes drop a queue's expired
    /// messages themselves, and a deduplication entry past its window is ignored before it is
    /// pruned. It holds the engine lock for [`SWEEP_CHUNK`] queues at a time, so requests run
    /// between the chunks: one hold over 50,000 idle queues stalled every request for about
    /// 200 ms each second. A queue created behind the cursor waits for the next pass; a queue
    /// deleted meanwhile is skipped.
    #[doc(hidden)]
    pub fn sweep_some(&self, from: u64, budget: usize) -> Option<u64> {
        let mut next = Some(from);
        let mut left = budget;
        let mut ops = Vec::new();
        while let Some(start) = next.filter(|_| left > 0) {
            if !self.writable(Access::Consume) {
                return Some(start);
            }
            let now = self.now();
            let reg = &mut *self.lock();
            let chunk = reg.ids_from(start, SWEEP_CHUNK.min(left)).to_vec();
            next = chunk.last().map(|&last| last + 1);
            left -= chunk.len();
            for id in chunk {
                let Some(q) = reg.get_mut(id) else { continue };
                q.expire(now, &mut ops);
                if q.is_fifo() {
                    q.fifo_state().prune(id, now, &mut ops);
                }
            }
            if !ops.is_empty() {
                // Submitted under the same hold, so the file sees these deletes in the order
                // memory made them. Nothing waits on this commit; it only reclaims space.
                drop(self.inner.store.submit(std::mem::take(&mut ops)));
            }
        }
        if !self.writable(Access::Consume) {
            return next;
        }
        let now = self.now();
        let mut reg = self.lock();
        // A tombstone only serves the 60-second re-create rule (§6.13).
        for arn in reg.prune_tombstones(now.saturating_sub(COOLOFF_MS)) {
            ops.push(Op::DeleteTombstone(arn));
        }
        if !ops.is_empty() {
            drop(self.inner.store.submit(ops));
        }
        next
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

    pub(super) fn closing(&self) -> bool {
        self.inner.closing.load(Ordering::SeqCst)
    }

    /// The account and region a request acts in: the region of its credential scope, else the
    /// configured one; the account of its access key id when that is 12 digits, else the
    /// configured one (docs/protocol.md §1.1); with [`Regions::Any`], always the configured
    /// region. When that is the configured scope (the usual case) the configured `Arc` is
    /// shared, so a request allocates nothing for it.
    #[must_use]
    pub fn scope_for(&self, access_key: Option<&str>, region: Option<&str>) -> Arc<Scope> {
        let default = &self.inner.default_scope;
        let account = access_key.filter(|k| is_account_id(k) && *k != default.account);
        // `--regions any`: the region a client signs for changes nothing, as in ElasticMQ.
        let region =
            region.filter(|r| *r != default.region && self.inner.cfg.regions == Regions::Scoped);
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
    // Hidden: only tests read it, to check that the sweep prunes tombstones.
    #[doc(hidden)]
    #[must_use]
    pub fn tombstone_count(&self) -> usize {
        self.lock().tombstone_count()
    }

    /// How many message move tasks the engine keeps (at most ten per source queue).
    // Hidden: only tests read it, to check that finished tasks are forgotten.
    #[doc(hidden)]
    #[must_use]
    pub fn task_count(&self) -> usize {
        self.lock().tasks().len()
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock cannot leave the maps half-updated in a way that
        // matters more than refusing all service, so keep serving.
        self.inner
            .registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The engine's time: the clock's, but never past [`MAX_TIME_MS`], so that no time the
    /// engine computes from it can wrap or leave the range its index stores.
    pub(super) fn now(&self) -> u64 {
        self.inner.clock.now_ms().min(MAX_TIME_MS)
    }

    /// The time of a send, which must be a real one: past [`MAX_TIME_MS`] a message could not
    /// be stored as sent then (it would be kept with an earlier send time and expire at once),
    /// so the send is refused rather than acknowledged.
    pub(super) fn send_now(&self) -> SqsResult<u64> {
        let now = self.inner.clock.now_ms();
        if now > MAX_TIME_MS {
            return Err(SqsError::new(
                ErrorCode::InternalError,
                format!(
                    "The server's clock ({now} ms since the epoch) is past the latest time localsqs can store, {MAX_TIME_MS} ms (October 4199); messages cannot be sent. Reset the clock: POST /_localsqs/clock {{\"reset\": true}}."
                ),
            ));
        }
        Ok(now)
    }

    /// The URL of queue `name` in `scope`, on the request's base URL.
    pub(super) fn queue_url(&self, ctx: &RequestContext, scope: &Scope, name: &str) -> String {
        format!("{}/{}/{}", ctx.base_url, scope.account, name)
    }

    /// The ARN of queue `name` in the configured account and region.
    #[must_use]
    pub fn queue_arn(&self, name: &str) -> String {
        self.default_scope().arn(name)
    }

    /// Waits for a commit. One the disk refused is answered 503 ServiceUnavailable, with the
    /// reason and the way out: the request may be retried once storage is back.
    pub(super) async fn commit(&self, commit: Commit) -> SqsResult<()> {
        match commit.wait().await {
            Ok(()) => Ok(()),
            Err(StoreError::Redb(reason)) => {
                if self.inner.store.reason().is_empty() {
                    self.inner.store.note_reason(&reason);
                }
                Err(self.storage_unavailable())
            }
            Err(e) => Err(SqsError::internal(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::engine::clock::{ManualClock, SeededIds};
    use crate::engine::handle::Engine;
    use crate::engine::options::EngineOptions;

    #[test]
    fn a_request_shares_the_configured_scope_unless_it_names_another() {
        let e = Engine::open(
            EngineOptions::default(),
            Arc::new(ManualClock::new(0)),
            Arc::new(SeededIds::new(1)),
        )
        .expect("opens");
        let configured = e.default_scope();
        for (key, region) in [
            (None, None),
            (Some("test"), Some("us-east-1")),
            (Some("000000000000"), None),
            (Some("12345678901x"), None),
        ] {
            let s = e.scope_for(key, region);
            assert!(Arc::ptr_eq(&s, &configured), "{key:?} {region:?}: shared");
        }
        let s = e.scope_for(Some("123456789012"), Some("eu-west-1"));
        assert_eq!(
            (s.account.as_str(), s.region.as_str()),
            ("123456789012", "eu-west-1")
        );
        let s = e.scope_for(Some("AKIDEXAMPLE"), Some("eu-west-1"));
        assert_eq!(
            (s.account.as_str(), s.region.as_str()),
            ("000000000000", "eu-west-1"),
            "a key that is no account id keeps the configured account"
        );
    }
}
