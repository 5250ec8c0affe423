//! Engine layer: the group-commit writer thread, and its recovery from a failing disk.
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
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use redb::{Database, Durability};

use super::disk::{self, DiskFaults};
use super::metrics::EngineMetrics;
use super::record::encode;
use super::store::{
    DEDUP, Job, MAX_BATCH, MESSAGE_STATE, MESSAGES, META, Op, QUEUES, StoreError, TASKS,
    TOMBSTONES, redb_err,
};

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

/// Rebuilds the engine's memory from a reopened database.
pub(crate) type Reload = Box<dyn Fn(&Database) -> Result<(), StoreError> + Send + Sync>;

/// What the writer needs besides its database.
pub(crate) struct WriterCtx {
    pub path: PathBuf,
    pub cache_bytes: usize,
    pub faults: Option<Arc<DiskFaults>>,
    pub health: Arc<StoreHealth>,
    pub reload: Arc<std::sync::OnceLock<Reload>>,
    pub metrics: Arc<EngineMetrics>,
}

/// The writer thread's loop.
pub(crate) fn run(mut db: Database, rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) {
    while let Ok(first) = rx.recv() {
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
            apply(&db, &jobs).map_err(|e| {
                tracing::error!(error = %e, "commit failed; storage is unavailable until it recovers");
                e.to_string()
            })
        };
        if closing {
            // Release the file (and its lock) before anyone hears that we are closed.
            drop(db);
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
            drop(db);
            match recover(rx, ctx) {
                Some(reopened) => db = reopened,
                None => return,
            }
        }
    }
}

/// Fails jobs until the file can be reopened and written, then reloads the engine from it.
/// `None` when the store is closed meanwhile.
fn recover(rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) -> Option<Database> {
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

/// Removes every message and message state of one queue.
fn clear_messages(
    messages: &mut redb::Table<(u64, u64), &[u8]>,
    states: &mut redb::Table<(u64, u64), &[u8]>,
    id: u64,
) -> Result<(), StoreError> {
    messages
        .retain_in((id, 0)..=(id, u64::MAX), |_, _| false)
        .map_err(redb_err)?;
    states
        .retain_in((id, 0)..=(id, u64::MAX), |_, _| false)
        .map_err(redb_err)
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

fn apply(db: &Database, jobs: &[Job]) -> Result<(), StoreError> {
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
                    clear_messages(
                        table!(messages, txn, MESSAGES),
                        table!(states, txn, MESSAGE_STATE),
                        *id,
                    )?;
                }
                Op::ClearQueue(id) => {
                    clear_messages(
                        table!(messages, txn, MESSAGES),
                        table!(states, txn, MESSAGE_STATE),
                        *id,
                    )?;
                }
                Op::PutMessage(q, s, rec) => {
                    table!(messages, txn, MESSAGES)
                        .insert((*q, *s), encode(rec.as_ref()).as_slice())
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
                Op::ResetAll => {
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
