//! Engine layer, store: redb tables, the schema version, and the group-commit writer.
//!
//! All writes go through one writer thread. It drains every pending job into one write
//! transaction and commits once, then acknowledges each job; a durable reply is sent only after
//! that acknowledgement (docs/architecture.md, "Durable means group commit"). Ops carry typed
//! records (`record.rs`); the writer encodes them, outside the engine lock. A message record
//! comes encoded already: memory holds it in that form (`packed.rs`). With a data
//! directory the commits are `Durability::Immediate`. Without one there is nothing to persist:
//! the engine code is the same and still produces its ops, but the store drops them unencoded.
//! The benchmark showed that a redb file with `Durability::None` for memory mode cost a third
//! of the CPU per SendMessage on two cores, for data that could never be read back.
//!
//! The tables and record layouts are described in docs/storage.md.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock, mpsc};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::Deserialize;
use tokio::sync::oneshot;

use super::disk::DiskFaults;
use super::packed::PackedRecord;
use super::record::{
    self, DedupRecord, IndexFields, MessageRecord, QueueRecord, StateRecord, TaskRecord,
};
use super::writer::{self, Reload, StoreHealth, WriterCtx};
use crate::engine::metrics::EngineMetrics;

/// Schema version and other small settings, by name.
pub(super) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// Queue id → [`QueueRecord`].
pub(super) const QUEUES: TableDefinition<u64, &[u8]> = TableDefinition::new("queues");
/// (queue id, seq) → [`MessageRecord`]: what never changes after the send.
pub(super) const MESSAGES: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("messages");
/// (queue id, seq) → [`StateRecord`]: visibility and receive counters, rewritten on receive.
pub(super) const MESSAGE_STATE: TableDefinition<(u64, u64), &[u8]> =
    TableDefinition::new("message_state");

/// Queue name → when it was deleted (epoch ms), for the 60-second re-create rule (§6.13).
pub(super) const TOMBSTONES: TableDefinition<&str, u64> = TableDefinition::new("tombstones");

/// (queue id, deduplication key) → [`DedupRecord`]: FIFO deduplication windows.
pub(super) const DEDUP: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("dedup");

/// Task id → [`TaskRecord`]: message move tasks.
pub(super) const TASKS: TableDefinition<&str, &[u8]> = TableDefinition::new("move_tasks");

/// The on-disk format version, stored big-endian under `schema_version` in `meta`.
///
/// Bump it in the same commit as any change that makes an existing file read differently: a
/// table added, removed, renamed or re-keyed; a field added, removed, reordered or retyped in a
/// record of `record.rs` (postcard writes fields by position); a change in what a stored
/// text means (the attribute map's names or value forms). Renaming a Rust field or type is not
/// a change. Then update docs/storage.md and the bytes in `record::tests::pinned_encodings`.
/// A file of [`UPGRADABLE_FROM`] is upgraded in place; one of any other version is refused at
/// start-up with [`StoreError::Schema`], which names the file and both versions, so the
/// operator keeps the matching localsqs or starts with another `--data-dir`.
pub const SCHEMA_VERSION: u32 = 3;
/// The older version this build still opens: schema 2 lacks queue scopes (their records end
/// before the field, and `record::decode_queue` reads them) and keys tombstones by bare name.
/// Opening such a file marks it version 3; its records are rewritten as they change.
const UPGRADABLE_FROM: u32 = 2;
const SCHEMA_KEY: &str = "schema_version";
/// Most jobs folded into one commit.
pub(super) const MAX_BATCH: usize = 4096;

/// One change to persist.
#[derive(Debug)]
pub(crate) enum Op {
    /// Insert or replace a queue record.
    PutQueue(u64, QueueRecord),
    /// Remove a queue and all its messages.
    DeleteQueue(u64),
    /// Remove all messages of a queue, keeping the queue.
    ClearQueue(u64),
    /// Insert a message record, packed as the table stores it (a copy of the index's).
    PutMessage(u64, u64, PackedRecord),
    /// Insert or replace a message state.
    PutState(u64, u64, StateRecord),
    /// Remove a message.
    DeleteMessage(u64, u64),
    /// Remember when a queue name was deleted.
    PutTombstone(String, u64),
    /// Forget a tombstone whose 60 seconds have passed.
    DeleteTombstone(String),
    /// Insert or replace a deduplication entry.
    PutDedup(u64, String, DedupRecord),
    /// Remove a deduplication entry.
    DeleteDedup(u64, String),
    /// Remove every deduplication entry of a queue.
    ClearDedup(u64),
    /// Insert or replace a move task (keyed by its id).
    PutTask(TaskRecord),
    /// Forget a move task.
    DeleteTask(String),
    /// Remember a FIFO queue's highest sequence number (`meta`, `seq/<id>`), when PurgeQueue
    /// removes the messages and deduplication entries it would otherwise be restored from.
    PutSequence(u64, u128),
    /// Drop everything (the reset endpoint).
    ResetAll,
}

/// Errors opening or using the store. Shown to the operator, never to clients.
#[derive(Debug)]
pub enum StoreError {
    /// The data directory could not be created or written.
    Dir(PathBuf, std::io::Error),
    /// Another process holds the database.
    Busy(PathBuf),
    /// The file was written by another schema version.
    Schema {
        /// Path of the database file.
        path: PathBuf,
        /// Version found.
        found: u32,
    },
    /// redb reported an error (corrupt file and the like).
    Redb(String),
    /// A record could not be decoded.
    Decode(String),
    /// The file is damaged beyond what redb can repair.
    Corrupt(PathBuf),
    /// The file exists but holds nothing: a truncated copy, or a disk that filled up while it
    /// was created. Opening it would silently start an empty store over it.
    Empty(PathBuf),
    /// The writer thread has stopped.
    Closed,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Dir(p, e) => write!(f, "data directory {} is not usable: {e}", p.display()),
            StoreError::Busy(p) => write!(
                f,
                "data file {} is already in use by another localsqs process",
                p.display()
            ),
            StoreError::Schema { path, found } => write!(
                f,
                "data file {} has schema version {found}, but this localsqs reads version {SCHEMA_VERSION}; use a matching localsqs or another --data-dir",
                path.display()
            ),
            StoreError::Redb(e) => write!(f, "storage error: {e}"),
            StoreError::Decode(e) => write!(f, "stored record is unreadable: {e}"),
            StoreError::Corrupt(p) => write!(
                f,
                "data file {} is corrupt and cannot be opened; move it away to start afresh",
                p.display()
            ),
            StoreError::Empty(p) => write!(
                f,
                "data file {} is empty (0 bytes), so it holds no state; if that is expected, delete it, otherwise restore it from a copy",
                p.display()
            ),
            StoreError::Closed => write!(f, "storage writer has stopped"),
        }
    }
}

impl std::error::Error for StoreError {}

pub(super) fn redb_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Redb(e.to_string())
}

/// Decodes a stored record.
pub(super) fn decode<'a, T: Deserialize<'a>>(b: &'a [u8]) -> Result<T, StoreError> {
    record::decode(b).map_err(StoreError::Decode)
}

/// A queue or message read back at start-up, handed to the caller as it is read so that a
/// large backlog is never held twice in memory.
#[derive(Debug)]
pub(crate) enum Row {
    /// A purge still being carried out: queue id, and every message below this sequence
    /// number is gone (`u64::MAX`: the queue was deleted). Comes after the queues and before
    /// any message.
    Purge(u64, u64),
    /// A FIFO queue's highest sequence number, remembered at its last purge. Comes after the
    /// queues and before any message.
    Sequence(u64, u128),
    /// Queue id and record (all queues come before any message).
    Queue(u64, QueueRecord),
    /// Queue id, sequence number, what the index needs of the record (its body stays on disk),
    /// and state.
    Message(u64, u64, IndexFields, StateRecord),
}

/// The small tables read back at start-up.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// Deleted queue names and when.
    pub tombstones: Vec<(String, u64)>,
    /// (queue id, key, record) of FIFO deduplication entries.
    pub dedup: Vec<(u64, String, DedupRecord)>,
    /// Move tasks.
    pub tasks: Vec<TaskRecord>,
    /// Purges still being carried out: (queue id, first sequence number kept).
    pub purges: Vec<(u64, u64)>,
}

/// The prefix of the `meta` keys that record purges still being carried out.
pub(super) const PURGE_KEY: &str = "purge/";
/// The prefix of the `meta` keys that remember a FIFO queue's highest sequence number.
pub(super) const SEQUENCE_KEY: &str = "seq/";

/// The `meta` entries `<prefix><queue id>` → a big-endian number of `N` bytes: purges still
/// being carried out (`purge/`, the first sequence number kept, 8 bytes) and remembered FIFO
/// sequence numbers (`seq/`, 16 bytes).
fn queue_entries<const N: usize>(
    meta: &impl redb::ReadableTable<&'static str, &'static [u8]>,
    prefix: &str,
) -> Result<Vec<(u64, [u8; N])>, StoreError> {
    let mut out = Vec::new();
    for row in meta.range(prefix..).map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        let Some(id) = k.value().strip_prefix(prefix) else {
            break;
        };
        let bad = || StoreError::Decode(format!("meta entry {}", k.value()));
        let id = id.parse().map_err(|_| bad())?;
        out.push((id, v.value().try_into().map_err(|_| bad())?));
    }
    Ok(out)
}

pub(super) struct Job {
    /// Submission number, from 1: jobs are committed in this order.
    pub no: u64,
    pub ops: Vec<Op>,
    pub ack: oneshot::Sender<Result<(), String>>,
    /// Stop after this job and close the database file.
    pub close: bool,
}

/// Handle to the writer thread; `None` in memory mode, where ops are dropped.
#[derive(Debug)]
pub(crate) struct Store {
    tx: Option<mpsc::Sender<Job>>,
    health: Arc<StoreHealth>,
    /// Jobs submitted so far (the number of the latest).
    submitted: AtomicU64,
    shared: Arc<Shared>,
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

    fn db(&self) -> Option<Arc<Database>> {
        self.db
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Job({} ops)", self.ops.len())
    }
}

/// A pending acknowledgement of submitted ops.
#[derive(Debug)]
pub(crate) struct Commit(Option<oneshot::Receiver<Result<(), String>>>);

impl Commit {
    /// A commit that is already done (nothing was written).
    #[must_use]
    pub fn done() -> Self {
        Self(None)
    }

    /// Waits until the ops are committed (durably, in durable mode).
    pub async fn wait(self) -> Result<(), StoreError> {
        match self.0 {
            None => Ok(()),
            Some(rx) => match rx.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(StoreError::Redb(e)),
                Err(_) => Err(StoreError::Closed),
            },
        }
    }
}

impl Store {
    /// Opens (or creates) the store in `dir`; `None` is memory mode, which persists nothing.
    /// `reload` is called on the writer thread after a recovery from a failing disk.
    pub fn open(
        dir: Option<&Path>,
        cache_bytes: usize,
        metrics: Arc<EngineMetrics>,
        faults: Option<Arc<DiskFaults>>,
        reload: Arc<OnceLock<Reload>>,
        sink: &mut dyn FnMut(Row) -> Result<(), StoreError>,
    ) -> Result<(Store, Loaded), StoreError> {
        let health = Arc::new(StoreHealth::default());
        let shared = Arc::new(Shared::default());
        let Some(d) = dir else {
            let store = Store {
                tx: None,
                health,
                submitted: AtomicU64::new(0),
                shared,
            };
            return Ok((store, Loaded::default()));
        };
        std::fs::create_dir_all(d).map_err(|e| StoreError::Dir(d.to_owned(), e))?;
        probe_writable(d)?;
        let path = d.join("localsqs.redb");
        let (db, loaded) = open_and_load(&path, cache_bytes, faults.clone(), sink)?;
        let (tx, rx) = mpsc::channel::<Job>();
        let db = Arc::new(db);
        shared.set_db(Some(Arc::clone(&db)));
        let ctx = WriterCtx {
            shared: Arc::clone(&shared),
            purging: std::sync::Mutex::new(loaded.purges.clone()),
            path,
            cache_bytes,
            faults,
            health: Arc::clone(&health),
            reload,
            metrics,
        };
        std::thread::Builder::new()
            .name("localsqs-writer".into())
            .spawn(move || writer::run(db, &rx, &ctx))
            .map_err(|e| StoreError::Redb(e.to_string()))?;
        Ok((
            Store {
                tx: Some(tx),
                health,
                submitted: AtomicU64::new(0),
                shared,
            },
            loaded,
        ))
    }

    /// Why the store cannot write right now, if it cannot (it is recovering).
    #[must_use]
    pub fn failure(&self) -> Option<String> {
        self.health.failure()
    }

    /// Whether commits reach the disk before they are acknowledged.
    #[must_use]
    pub fn durable(&self) -> bool {
        self.tx.is_some()
    }

    /// Queues ops for the next group commit. Call while holding the engine lock, so that the
    /// writer sees changes in the order they were made. In durable mode even a request that
    /// changes nothing (a FIFO duplicate, a second delete) must not be answered before the
    /// commits submitted before it: an empty job is acknowledged only after them, in order.
    pub fn submit(&self, ops: Vec<Op>) -> Commit {
        self.send(ops, false)
    }

    /// Finishes every submitted job, then closes the database file so another process (or
    /// another server in this one) can open it. Later submits fail with `Closed`.
    pub fn close(&self) -> Commit {
        self.send(Vec::new(), true)
    }

    fn send(&self, ops: Vec<Op>, close: bool) -> Commit {
        let Some(tx) = &self.tx else {
            return Commit::done();
        };
        let (ack, rx) = oneshot::channel();
        let no = self.submitted.fetch_add(1, Ordering::AcqRel) + 1;
        // If the writer is gone the job (and its sender) is dropped and `wait` reports Closed.
        let _ = tx.send(Job {
            no,
            ops,
            ack,
            close,
        });
        Commit(Some(rx))
    }

    /// The number the next submitted job gets: ops pushed now, under the engine lock, are
    /// committed once [`Store::committed`] reaches it.
    #[must_use]
    pub fn next_job(&self) -> u64 {
        self.submitted.load(Ordering::Acquire) + 1
    }

    /// The number of the latest job known to be committed (durably).
    #[must_use]
    pub fn committed(&self) -> u64 {
        self.shared.committed.load(Ordering::Acquire)
    }

    /// Reads message records back from the file, in the order of `keys`: `None` for a message
    /// that is not there (deleted or purged since it was looked up). Sees every committed
    /// change; call it for messages whose put is committed.
    pub fn read_messages(
        &self,
        keys: &[(u64, u64)],
    ) -> Result<Vec<Option<MessageRecord>>, StoreError> {
        let db = self.shared.db().ok_or(StoreError::Closed)?;
        let txn = db.begin_read().map_err(redb_err)?;
        let messages = txn.open_table(MESSAGES).map_err(redb_err)?;
        keys.iter()
            .map(|&k| match messages.get(k).map_err(redb_err)? {
                Some(v) => decode(v.value()).map(Some),
                None => Ok(None),
            })
            .collect()
    }
}

/// Opens the file, checks the schema and reads everything back. redb can panic on some kinds of
/// page corruption; that is turned into a clean `Corrupt` error instead of a crash.
fn open_and_load(
    path: &Path,
    cache_bytes: usize,
    faults: Option<Arc<DiskFaults>>,
    sink: &mut dyn FnMut(Row) -> Result<(), StoreError>,
) -> Result<(Database, Loaded), StoreError> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Err(StoreError::Empty(path.to_owned()));
    }
    let attempt = || -> Result<(Database, Loaded), StoreError> {
        let db = super::disk::open(path, cache_bytes, faults).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Busy(path.to_owned()),
            other => StoreError::Redb(format!("{}: {other}", path.display())),
        })?;
        init_schema(&db, path)?;
        let loaded = load(&db, sink)?;
        Ok((db, loaded))
    };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(attempt));
    std::panic::set_hook(hook);
    result.unwrap_or_else(|_| Err(StoreError::Corrupt(path.to_owned())))
}

fn probe_writable(dir: &Path) -> Result<(), StoreError> {
    let probe = dir.join(".localsqs-write-probe");
    std::fs::write(&probe, b"ok").map_err(|e| StoreError::Dir(dir.to_owned(), e))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

fn init_schema(db: &Database, path: &Path) -> Result<(), StoreError> {
    let txn = db.begin_write().map_err(redb_err)?;
    {
        let mut meta = txn.open_table(META).map_err(redb_err)?;
        let found = meta
            .get(SCHEMA_KEY)
            .map_err(redb_err)?
            .map(|v| v.value().try_into().map(u32::from_be_bytes));
        match found {
            Some(Ok(SCHEMA_VERSION)) => {}
            Some(Ok(UPGRADABLE_FROM)) => {
                meta.insert(SCHEMA_KEY, SCHEMA_VERSION.to_be_bytes().as_slice())
                    .map_err(redb_err)?;
            }
            Some(Ok(found)) => {
                return Err(StoreError::Schema {
                    path: path.to_owned(),
                    found,
                });
            }
            Some(Err(_)) => {
                return Err(StoreError::Schema {
                    path: path.to_owned(),
                    found: 0,
                });
            }
            None => {
                meta.insert(SCHEMA_KEY, SCHEMA_VERSION.to_be_bytes().as_slice())
                    .map_err(redb_err)?;
            }
        }
        txn.open_table(QUEUES).map_err(redb_err)?;
        txn.open_table(MESSAGES).map_err(redb_err)?;
        txn.open_table(MESSAGE_STATE).map_err(redb_err)?;
        txn.open_table(TOMBSTONES).map_err(redb_err)?;
        txn.open_table(DEDUP).map_err(redb_err)?;
        txn.open_table(TASKS).map_err(redb_err)?;
    }
    txn.commit().map_err(redb_err)
}

pub(crate) fn load(
    db: &Database,
    sink: &mut dyn FnMut(Row) -> Result<(), StoreError>,
) -> Result<Loaded, StoreError> {
    let txn = db.begin_read().map_err(redb_err)?;
    let mut out = Loaded::default();
    let queues = txn.open_table(QUEUES).map_err(redb_err)?;
    for row in queues.iter().map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        sink(Row::Queue(
            k.value(),
            super::record::decode_queue(v.value()).map_err(StoreError::Decode)?,
        ))?;
    }
    let meta = txn.open_table(META).map_err(redb_err)?;
    let purges: Vec<(u64, u64)> = queue_entries(&meta, PURGE_KEY)?
        .into_iter()
        .map(|(id, below)| (id, u64::from_be_bytes(below)))
        .collect();
    for &(id, below) in &purges {
        sink(Row::Purge(id, below))?;
    }
    for (id, n) in queue_entries(&meta, SEQUENCE_KEY)? {
        sink(Row::Sequence(id, u128::from_be_bytes(n)))?;
    }
    out.purges.clone_from(&purges);
    super::scan::messages(db, &purges, sink)?;
    let tombstones = txn.open_table(TOMBSTONES).map_err(redb_err)?;
    for row in tombstones.iter().map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        out.tombstones.push((k.value().to_owned(), v.value()));
    }
    let dedup = txn.open_table(DEDUP).map_err(redb_err)?;
    for row in dedup.iter().map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        let (q, key) = k.value();
        out.dedup.push((q, key.to_owned(), decode(v.value())?));
    }
    let tasks = txn.open_table(TASKS).map_err(redb_err)?;
    for row in tasks.iter().map_err(redb_err)? {
        let (_, v) = row.map_err(redb_err)?;
        out.tasks.push(decode(v.value())?);
    }
    Ok(out)
}
