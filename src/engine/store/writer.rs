//! Engine layer, store: the group-commit writer thread, and its recovery from a failing disk.
//!
//! One thread owns the database. It drains every pending job into one write transaction,
//! commits once, then acknowledges each job (docs/architecture.md, "The group-commit writer").
//!
//! When a commit fails (a full disk, say), redb refuses further writes until the file is
//! reopened, and memory now holds changes the disk does not. So the writer fails that batch
//! (503 with the reason), records the failure (`Mode::Failed`: nothing is served for that
//! moment) and enters recovery: it rebuilds memory from the file's last commit, read through a
//! view that writes nothing (`Mode::ReadOnly`: reads are served), and every half second reopens
//! the file for writing, spending the reserve it keeps beside it when the disk is full
//! (`Mode::Reserve`: receives and deletes are served too, until the disk takes the reserve
//! again). Memory equals disk throughout (nothing acknowledged lost, nothing unacknowledged
//! kept), and `/health` says ready only once a commit, or a test write, has proved the disk
//! writable (`Mode::Unproven` until then). No restart is needed (docs/operations.md).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, mpsc};
use std::time::{Duration, Instant};

use redb::{Database, Durability, ReadableTable};

use super::disk::{self, DiskFaults};
use super::health::{Mode, SPACE_PROBE, StoreHealth, make_reserve, reserve_path, spend_reserve};
use super::purge::{purge_step, record_purge};
use super::record::encode;
use super::schema::{
    DEDUP, Job, MAX_BATCH, MESSAGE_STATE, MESSAGES, META, Op, QUEUES, SEQUENCE_KEY, StoreError,
    TASKS, TOMBSTONES, redb_err,
};
use crate::engine::metrics::EngineMetrics;

/// How often a failed store tries to reopen its file.
const RETRY_EVERY: Duration = Duration::from_millis(500);

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
            if !matches!(ctx.health.mode(), Mode::Unproven | Mode::Reserve) {
                return rx.recv().ok();
            }
            // Reopened after a failure, with no commit yet to prove the disk writable, or with
            // the reserve spent: look for space while idle, so that readiness returns with no
            // traffic to prove it.
            match rx.recv_timeout(RETRY_EVERY) {
                Ok(job) => return Some(job),
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let proved = make_reserve(&ctx.path, ctx.faults.as_deref())
                        .and_then(|()| space_probe(ctx));
                    match proved {
                        Ok(()) => {
                            tracing::info!("the disk has space again; storage is ready");
                            ctx.health.set(Mode::Ready, None);
                        }
                        Err(e) => ctx.health.set_reason(format!("storage error: {e}")),
                    }
                    continue;
                }
            }
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

/// How the writer starts: with the file open for writing, or with only a read-only view of it
/// (a start on a full disk).
pub(super) enum Start {
    Writable(Arc<Database>),
    ReadOnly(Arc<Database>),
}

/// The writer thread's loop.
pub(super) fn run(start: Start, rx: &mpsc::Receiver<Job>, ctx: &WriterCtx) {
    let mut db = match start {
        Start::Writable(db) => db,
        Start::ReadOnly(view) => match recover(rx, ctx, Some(view), false) {
            Some(db) => db,
            None => return,
        },
    };
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
            let applied = apply(&db, &jobs, ctx).map_err(|e| {
                tracing::error!(error = %e, "commit failed; storage is unavailable until it recovers");
                e.to_string()
            });
            if applied.is_ok() && ctx.health.mode() == Mode::Unproven {
                tracing::info!("a commit succeeded again; storage is ready");
                ctx.health.set(Mode::Ready, None);
            }
            applied
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
            ctx.health.set(Mode::Failed, Some(reason.clone()));
        }
        for job in jobs {
            let _ = job.ack.send(result.clone());
        }
        if failed.is_some() {
            release(db, ctx);
            match recover(rx, ctx, None, true) {
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

/// Until the file can be written again: tries to reopen it for writing at once and then every
/// [`RETRY_EVERY`]; meanwhile rebuilds memory from the file's last commit, read through a view
/// that writes nothing, so that reads are served (`ReadOnly`), and refuses writes. `view` is
/// such a view already open; `dirty`, whether memory may hold changes the file does not.
/// Answers the reopened database, with memory rebuilt from it (`Unproven`), or `None` when the
/// store is closed meanwhile.
fn recover(
    rx: &mpsc::Receiver<Job>,
    ctx: &WriterCtx,
    mut view: Option<Arc<Database>>,
    mut dirty: bool,
) -> Option<Arc<Database>> {
    let reload = |db: &Database| ctx.reload.get().map_or(Ok(()), |reload| reload(db));
    loop {
        if dirty {
            if view.is_none() {
                match disk::open_read_only(&ctx.path, ctx.cache_bytes) {
                    Ok(v) => view = Some(Arc::new(v)),
                    Err(e) => tracing::warn!(error = %e, "the data file cannot be read either"),
                }
            }
            if let Some(v) = &view {
                match reload(v) {
                    Ok(()) => {
                        dirty = false;
                        ctx.shared.set_db(Some(Arc::clone(v)));
                        ctx.health.set(Mode::ReadOnly, None);
                        tracing::warn!(
                            reason = %ctx.health.reason(),
                            "storage cannot be written; serving reads from the data file until it can"
                        );
                    }
                    Err(e) => tracing::warn!(error = %e, "reading the data file"),
                }
            }
        }
        if !refuse_jobs(rx, ctx, &mut dirty) {
            if let Some(v) = view.take() {
                release(v, ctx);
            }
            return None;
        }
        let reopen = || {
            disk::open(&ctx.path, ctx.cache_bytes, ctx.faults.clone())
                .map_err(redb_err)
                .and_then(|db| probe(&db).map(|()| db))
        };
        let (db, spent) = match reopen() {
            Ok(db) => (db, false),
            // A full disk: the reserve makes room for redb to open the file, and for deletes.
            Err(e) if spend_reserve(&ctx.path) => match reopen() {
                Ok(db) => (db, true),
                Err(again) => {
                    ctx.health
                        .set_reason(format!("{e}; with the reserve spent: {again}"));
                    continue;
                }
            },
            Err(e) => {
                ctx.health.set_reason(e.to_string());
                continue;
            }
        };
        if let Some(v) = view.take() {
            release(v, ctx);
        }
        // Memory equals the file unless a refused write changed it since it was rebuilt.
        match if dirty { reload(&db) } else { Ok(()) } {
            Ok(()) => {
                tracing::info!("the data file is open for writing again");
                let db = Arc::new(db);
                ctx.shared.set_db(Some(Arc::clone(&db)));
                // Without its reserve the store keeps it for deletes until the disk has space.
                let mode = if spent || !reserve_path(&ctx.path).exists() {
                    Mode::Reserve
                } else {
                    Mode::Unproven
                };
                ctx.health.set(mode, None);
                return Some(db);
            }
            Err(e) => {
                // Memory may be half rebuilt: nothing is served until it is rebuilt again.
                ctx.health.set(Mode::Failed, Some(e.to_string()));
                dirty = true;
            }
        }
    }
}

/// Answers the jobs that arrive within [`RETRY_EVERY`] while the file cannot be written: a job
/// with ops fails (and, as memory now holds its changes, `dirty` is set and nothing is served
/// until memory is rebuilt again); an empty one succeeds once memory equals the file, as there
/// is nothing to write. `false` when the store is closed meanwhile (a close is acknowledged).
fn refuse_jobs(rx: &mpsc::Receiver<Job>, ctx: &WriterCtx, dirty: &mut bool) -> bool {
    let deadline = Instant::now() + RETRY_EVERY;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(job) if job.close => {
                let _ = job.ack.send(Ok(()));
                return false;
            }
            Ok(job) if job.ops.is_empty() && !*dirty => {
                let _ = job.ack.send(Ok(()));
            }
            Ok(job) => {
                if !job.ops.is_empty() {
                    *dirty = true;
                    ctx.health.set(Mode::Failed, None);
                }
                let _ = job.ack.send(Err(ctx.health.reason()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => return true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        }
    }
}

/// Proves that the disk takes new data: writes [`SPACE_PROBE`] bytes to a file of their own
/// beside the data file, syncs and removes it.
fn space_probe(ctx: &WriterCtx) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(f) = &ctx.faults {
        f.check()?;
    }
    let dir = ctx.path.parent().unwrap_or(std::path::Path::new("."));
    let path = dir.join(".localsqs-space-probe");
    let written = std::fs::File::create(&path).and_then(|mut f| {
        f.write_all(&vec![0u8; SPACE_PROBE])?;
        f.sync_all()
    });
    let _ = std::fs::remove_file(&path);
    written
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
