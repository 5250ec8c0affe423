//! Engine layer, store: the group-commit writer thread, and its recovery from a failing disk.
//!
//! One thread owns the database. It drains every pending job into one write transaction,
//! commits once, then acknowledges each job (docs/architecture.md, "The group-commit writer").
//!
//! When a commit fails (a full disk, say), redb refuses further writes until the file is
//! reopened, and memory now holds changes the disk does not. So the writer fails that batch,
//! records the failure (the engine then answers SQS requests with 503 and `/health` reports not
//! ready), and enters recovery: it fails queued jobs at once and, every half second, reopens
//! the file and proves it writable. Once it is, the engine rebuilds its memory from the file,
//! so memory equals disk again (nothing acknowledged lost, nothing unacknowledged kept), and
//! the failure is cleared. No restart is needed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, mpsc};
use std::time::{Duration, Instant};

use redb::{Database, Durability, ReadableTable};

use super::disk::{self, DiskFaults};
use super::record::encode;
use super::schema::{
    DEDUP, Job, MAX_BATCH, MESSAGE_STATE, MESSAGES, META, Op, PURGE_KEY, QUEUES, SEQUENCE_KEY,
    StoreError, TASKS, TOMBSTONES, redb_err,
};
use crate::engine::metrics::EngineMetrics;

/// How often a failed store tries to reopen its file.
const RETRY_EVERY: Duration = Duration::from_millis(500);

/// The store's current failure, shared by the writer and the engine.
#[derive(Debug, Default)]
pub(crate) struct StoreHealth {
    failure: Mutex<Option<String>>,
}

impl StoreHealth {
    /// Why the store cannot write, if it cannot.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, reason: Option<String>) {
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = reason;
    }
}

/// What the writer thread shares with the engine: the open database, for reading message
/// records that are not in memory, and the number of the latest job committed.
#[derive(Default)]
pub(crate) struct Shared {
    db: RwLock<Option<Arc<Database>>>,
    committed: AtomicU64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("committed", &self.committed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Publishes the database the writer now uses (`None` while it has none).
    pub fn set_db(&self, db: Option<Arc<Database>>) {
        *self.db.write().unwrap_or_else(PoisonError::into_inner) = db;
    }

    /// Notes that every job up to number `no` is committed.
    pub fn set_committed(&self, no: u64) {
        self.committed.fetch_max(no, Ordering::Release);
    }

    /// The number of the latest job known to be committed.
    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    /// The database the writer now uses, for reading.
    pub fn db(&self) -> Option<Arc<Database>> {
        self.db
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Rebuilds the engine's memory from a reopened database.
pub(crate) type Reload = Box<dyn Fn(&Database) -> Result<(), StoreError> + Send + Sync>;

/// What the writer needs besides its database.
pub(crate) struct WriterCtx {
    /// The database for readers, and how far commits have got.
    pub shared: Arc<Shared>,
    /// Purges to carry out in the background, oldest first: (queue id, first seq kept).
    pub purging: Mutex<Vec<(u64, u64)>>,
    pub path: PathBuf,
    pub cache_bytes: usize,
    pub faults: Option<Arc<DiskFaults>>,
    pub health: Arc<StoreHealth>,
    pub reload: Arc<std::sync::OnceLock<Reload>>,
    pub metrics: Arc<EngineMetrics>,
}

/// Most message rows one background purge step removes: small enough that a commit waiting
/// behind it is not held up for long.
const PURGE_STEP: usize = 2000;

/// The next job: at once when one is waiting; otherwise, while purges are pending, one purge
/// step first (requests always go before background work).
fn next_job(db: &Database, rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) -> Option<Job> {
    loop {
        match rx.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) => {}
        }
        let pending = ctx
            .purging
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first()
            .copied();
        let Some((id, below)) = pending else {
            return rx.recv().ok();
        };
        match purge_step(db, id, below) {
            Ok(true) => {
                ctx.purging
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|&p| p != (id, below));
            }
            Ok(false) => {}
            Err(e) => {
                // Leave it for later (it is recorded in meta); serve requests meanwhile.
                tracing::warn!(error = %e, "background purge step failed");
                return rx.recv().ok();
            }
        }
    }
}

/// Removes up to [`PURGE_STEP`] messages of queue `id` below `below`; when none are left,
/// also the purge's record. Answers whether the purge is done.
fn purge_step(db: &Database, id: u64, below: u64) -> Result<bool, StoreError> {
    let mut txn = db.begin_write().map_err(redb_err)?;
    txn.set_durability(Durability::Immediate)
        .map_err(redb_err)?;
    let done = {
        let mut messages = txn.open_table(MESSAGES).map_err(redb_err)?;
        let mut states = txn.open_table(MESSAGE_STATE).map_err(redb_err)?;
        let keys: Vec<(u64, u64)> = messages
            .range((id, 0)..(id, below))
            .map_err(redb_err)?
            .take(PURGE_STEP)
            .map(|r| r.map(|(k, _)| k.value()).map_err(redb_err))
            .collect::<Result<_, _>>()?;
        for k in &keys {
            messages.remove(k).map_err(redb_err)?;
            states.remove(k).map_err(redb_err)?;
        }
        let done = keys.len() < PURGE_STEP;
        if done {
            // The record goes only if it still names this purge. A later purge of the same
            // queue raises it, and then it must stay until that purge is carried out: removing
            // it here let a restart bring back rows the later purge had not removed yet.
            let key = format!("{PURGE_KEY}{id}");
            let mut meta = txn.open_table(META).map_err(redb_err)?;
            if recorded_purge(&meta, &key)?.is_some_and(|r| r <= below) {
                meta.remove(key.as_str()).map_err(redb_err)?;
            }
        }
        done
    };
    txn.commit().map_err(redb_err)?;
    Ok(done)
}

/// The writer thread's loop.
pub(super) fn run(mut db: Arc<Database>, rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) {
    while let Some(first) = next_job(&db, rx, ctx) {
        let mut closing = first.close;
        let mut jobs = vec![first];
        while jobs.len() < MAX_BATCH && !closing {
            match rx.try_recv() {
                Ok(j) => {
                    closing = j.close;
                    jobs.push(j);
                }
                Err(_) => break,
            }
        }
        let result = if jobs.iter().all(|j| j.ops.is_empty()) {
            Ok(())
        } else {
            ctx.metrics.commits.inc();
            #[allow(clippy::cast_precision_loss)]
            ctx.metrics.commit_batch.observe(jobs.len() as f64);
            apply(&db, &jobs, ctx).map_err(|e| {
                tracing::error!(error = %e, "commit failed; storage is unavailable until it recovers");
                e.to_string()
            })
        };
        if result.is_ok()
            && let Some(last) = jobs.last()
        {
            ctx.shared.set_committed(last.no);
        }
        if closing {
            // Release the file (and its lock) before anyone hears that we are closed.
            release(db, ctx);
            for job in jobs {
                let _ = job.ack.send(result.clone());
            }
            return;
        }
        let failed = result.as_ref().err().cloned();
        // Record the failure before anyone hears of it, so that a client told of the failed
        // commit already finds the store unavailable.
        if let Some(reason) = &failed {
            ctx.health.set(Some(reason.clone()));
        }
        for job in jobs {
            let _ = job.ack.send(result.clone());
        }
        if failed.is_some() {
            release(db, ctx);
            match recover(rx, ctx) {
                Some(reopened) => db = reopened,
                None => return,
            }
        }
    }
}

/// Withdraws the database from readers and closes it once the last reader is done with it.
fn release(mut db: Arc<Database>, ctx: &WriterCtx) {
    ctx.shared.set_db(None);
    loop {
        match Arc::try_unwrap(db) {
            Ok(db) => {
                drop(db);
                return;
            }
            Err(still_shared) => {
                db = still_shared;
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
}

/// Fails jobs until the file can be reopened and written, then reloads the engine from it.
/// `None` when the store is closed meanwhile.
fn recover(rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) -> Option<Arc<Database>> {
    loop {
        let deadline = Instant::now() + RETRY_EVERY;
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(job) if job.close => {
                    let _ = job.ack.send(Ok(()));
                    return None;
                }
                Ok(job) => {
                    let reason = ctx.health.failure().unwrap_or_default();
                    let _ = job
                        .ack
                        .send(Err(format!("storage is unavailable: {reason}")));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
        let reopened = disk::open(&ctx.path, ctx.cache_bytes, ctx.faults.clone())
            .map_err(redb_err)
            .and_then(|db| probe(&db).map(|()| db));
        let db = match reopened {
            Ok(db) => db,
            Err(e) => {
                ctx.health.set(Some(e.to_string()));
                continue;
            }
        };
        let reloaded = ctx.reload.get().map_or(Ok(()), |reload| reload(&db));
        match reloaded {
            Ok(()) => {
                tracing::info!("storage recovered; state reloaded from the data file");
                let db = Arc::new(db);
                ctx.shared.set_db(Some(Arc::clone(&db)));
                ctx.health.set(None);
                return Some(db);
            }
            Err(e) => ctx.health.set(Some(e.to_string())),
        }
    }
}

/// Proves the database writable with a durable commit.
fn probe(db: &Database) -> Result<(), StoreError> {
    let mut txn = db.begin_write().map_err(redb_err)?;
    txn.set_durability(Durability::Immediate)
        .map_err(redb_err)?;
    {
        let mut meta = txn.open_table(META).map_err(redb_err)?;
        meta.insert("write_probe", [1u8].as_slice())
            .map_err(redb_err)?;
    }
    txn.commit().map_err(redb_err)
}

/// The first sequence number kept by the purge recorded under `key` (`purge/<id>`), if any.
fn recorded_purge(
    meta: &redb::Table<'_, &'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<u64>, StoreError> {
    Ok(meta
        .get(key)
        .map_err(redb_err)?
        .and_then(|v| v.value().try_into().ok().map(u64::from_be_bytes)))
}

/// Records a purge of queue `id` below `below` in `meta`, merged with one already pending.
fn record_purge(
    txn: &redb::WriteTransaction,
    id: u64,
    below: u64,
    purges: &mut Vec<(u64, u64)>,
) -> Result<(), StoreError> {
    let key = format!("{PURGE_KEY}{id}");
    let mut meta = txn.open_table(META).map_err(redb_err)?;
    let below = below.max(recorded_purge(&meta, &key)?.unwrap_or(0));
    meta.insert(key.as_str(), below.to_be_bytes().as_slice())
        .map_err(redb_err)?;
    purges.retain(|&(q, _)| q != id);
    purges.push((id, below));
    Ok(())
}

/// Opens a table the first time an op of this commit needs it (opening all six tables for
/// every commit was a fifth of the writer's time in the profile).
macro_rules! table {
    ($slot:ident, $txn:ident, $def:expr) => {
        match $slot {
            Some(ref mut t) => t,
            None => $slot.insert($txn.open_table($def).map_err(redb_err)?),
        }
    };
}

fn apply(db: &Database, jobs: &[Job], ctx: &WriterCtx) -> Result<(), StoreError> {
    let mut purges = Vec::new();
    let result = apply_ops(db, jobs, &mut purges);
    if result.is_ok() {
        let mut pending = ctx.purging.lock().unwrap_or_else(PoisonError::into_inner);
        for (id, below) in purges {
            // A newer purge of a queue covers an older one still pending.
            pending.retain(|&(q, _)| q != id);
            pending.push((id, below));
        }
    }
    result
}

/// Writes the jobs' ops in one transaction. Deleting or purging a queue writes a purge record
/// (`meta`, `purge/<id>` → the first sequence number kept) instead of removing every message
/// row at once: a queue of 200,000 messages would hold every other commit for a second. The
/// rows go in the background, a step at a time ([`purge_step`]); until then the loader skips
/// them and keeps their ids and sequence numbers from being reused.
fn apply_ops(db: &Database, jobs: &[Job], purges: &mut Vec<(u64, u64)>) -> Result<(), StoreError> {
    let mut txn = db.begin_write().map_err(redb_err)?;
    txn.set_durability(Durability::Immediate)
        .map_err(redb_err)?;
    {
        let (mut queues, mut messages, mut states) = (None, None, None);
        let (mut tombstones, mut dedup, mut tasks) = (None, None, None);
        for op in jobs.iter().flat_map(|j| &j.ops) {
            match op {
                Op::PutQueue(id, rec) => {
                    table!(queues, txn, QUEUES)
                        .insert(*id, encode(rec).as_slice())
                        .map_err(redb_err)?;
                }
                Op::DeleteQueue(id) => {
                    table!(queues, txn, QUEUES).remove(*id).map_err(redb_err)?;
                    table!(dedup, txn, DEDUP)
                        .retain_in((*id, "")..(*id + 1, ""), |_, _| false)
                        .map_err(redb_err)?;
                    record_purge(&txn, *id, u64::MAX, purges)?;
                    let mut meta = txn.open_table(META).map_err(redb_err)?;
                    meta.remove(format!("{SEQUENCE_KEY}{id}").as_str())
                        .map_err(redb_err)?;
                }
                Op::ClearQueue(id) => {
                    // Everything written so far goes; messages sent after the purge get
                    // higher sequence numbers and stay.
                    let below = table!(messages, txn, MESSAGES)
                        .range((*id, 0)..=(*id, u64::MAX))
                        .map_err(redb_err)?
                        .next_back()
                        .transpose()
                        .map_err(redb_err)?
                        .map_or(0, |(k, _)| k.value().1 + 1);
                    record_purge(&txn, *id, below, purges)?;
                }
                Op::PutMessage(q, s, rec) => {
                    table!(messages, txn, MESSAGES)
                        .insert((*q, *s), rec.bytes())
                        .map_err(redb_err)?;
                }
                Op::PutState(q, s, rec) => {
                    table!(states, txn, MESSAGE_STATE)
                        .insert((*q, *s), encode(rec).as_slice())
                        .map_err(redb_err)?;
                }
                Op::DeleteMessage(q, s) => {
                    table!(messages, txn, MESSAGES)
                        .remove((*q, *s))
                        .map_err(redb_err)?;
                    table!(states, txn, MESSAGE_STATE)
                        .remove((*q, *s))
                        .map_err(redb_err)?;
                }
                Op::PutTombstone(name, at) => {
                    table!(tombstones, txn, TOMBSTONES)
                        .insert(name.as_str(), *at)
                        .map_err(redb_err)?;
                }
                Op::DeleteTombstone(name) => {
                    table!(tombstones, txn, TOMBSTONES)
                        .remove(name.as_str())
                        .map_err(redb_err)?;
                }
                Op::PutDedup(q, key, rec) => {
                    table!(dedup, txn, DEDUP)
                        .insert((*q, key.as_str()), encode(rec).as_slice())
                        .map_err(redb_err)?;
                }
                Op::DeleteDedup(q, key) => {
                    table!(dedup, txn, DEDUP)
                        .remove((*q, key.as_str()))
                        .map_err(redb_err)?;
                }
                Op::Sns(op) => super::sns::apply(&txn, op)?,
                Op::ResetAll => {
                    super::sns::clear(&txn)?;
                    table!(queues, txn, QUEUES)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    table!(messages, txn, MESSAGES)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    table!(states, txn, MESSAGE_STATE)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    table!(tombstones, txn, TOMBSTONES)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    table!(dedup, txn, DEDUP)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    table!(tasks, txn, TASKS)
                        .retain(|_, _| false)
                        .map_err(redb_err)?;
                    // The numbers go with the queues they belong to.
                    txn.open_table(META)
                        .map_err(redb_err)?
                        .retain_in(SEQUENCE_KEY.."seq0", |_, _| false)
                        .map_err(redb_err)?;
                }
                Op::PutSequence(id, n) => {
                    let mut meta = txn.open_table(META).map_err(redb_err)?;
                    meta.insert(
                        format!("{SEQUENCE_KEY}{id}").as_str(),
                        n.to_be_bytes().as_slice(),
                    )
                    .map_err(redb_err)?;
                }
                Op::DeleteTask(id) => {
                    table!(tasks, txn, TASKS)
                        .remove(id.as_str())
                        .map_err(redb_err)?;
                }
                Op::PutTask(rec) => {
                    table!(tasks, txn, TASKS)
                        .insert(rec.id.as_str(), encode(rec).as_slice())
                        .map_err(redb_err)?;
                }
                Op::ClearDedup(q) => {
                    table!(dedup, txn, DEDUP)
                        .retain_in((*q, "")..(*q + 1, ""), |_, _| false)
                        .map_err(redb_err)?;
                }
            }
        }
    }
    txn.commit().map_err(redb_err)
}

#[cfg(test)]
mod tests;
