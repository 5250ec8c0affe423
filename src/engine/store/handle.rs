//! Engine layer, store: the `Store` handle: opening the data file (schema check, start-up
//! load), submitting ops to the group-commit writer, closing, and reading records back.
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
//! The tables (`schema.rs`) and record layouts (`record.rs`) are described in docs/storage.md.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, mpsc};

use redb::{Database, ReadableDatabase, ReadableTable};
use tokio::sync::oneshot;

use super::disk::{self, DiskFaults};
use super::health::{self, Mode, StoreHealth};
use super::record::MessageRecord;
use super::scan::{self, Loaded};
use super::schema::{
    Commit, DEDUP, Job, MESSAGE_STATE, MESSAGES, META, Op, QUEUES, Row, SCHEMA_KEY, SCHEMA_VERSION,
    StoreError, TASKS, TOMBSTONES, UPGRADABLE_FROM, decode, redb_err,
};
use super::writer::{self, Reload, Shared, Start, WriterCtx};
use crate::engine::metrics::EngineMetrics;

/// Handle to the writer thread; `None` in memory mode, where ops are dropped.
#[derive(Debug)]
pub(crate) struct Store {
    tx: Option<mpsc::Sender<Job>>,
    health: Arc<StoreHealth>,
    /// Jobs submitted so far (the number of the latest).
    submitted: AtomicU64,
    shared: Arc<Shared>,
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
        std::fs::create_dir_all(d).map_err(|e| dir_error(d, e))?;
        let probed = probe_writable(d);
        let path = d.join("localsqs.redb");
        let (start, loaded) = match guarded(&path, || {
            open_checked(&path, cache_bytes, faults.clone())
        }) {
            Ok(db) => {
                let loaded = guarded(&path, || scan::load(&db, sink))?;
                if health.mode() == Mode::Ready {
                    // The file opened and took its start-up commit, but the directory refused a
                    // test write, or the disk has no room for the reserve: a full disk. Keep
                    // what room there is for receives and deletes until it has space.
                    let full = match &probed {
                        Err(p) => {
                            health::spend_reserve(&path);
                            Some(p.to_string())
                        }
                        Ok(()) => health::make_reserve(&path, faults.as_deref())
                            .err()
                            .map(|e| {
                                format!(
                                    "no room for the {} MiB reserve beside the data file: {e}",
                                    health::RESERVE >> 20
                                )
                            }),
                    };
                    if let Some(why) = full {
                        tracing::warn!(reason = %why, "the disk is full: serving reads, receives and deletes only");
                        health.set(Mode::Reserve, Some(why));
                    }
                }
                (Start::Writable(Arc::new(db)), loaded)
            }
            Err(StoreError::Redb(why)) if std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) => {
                // The file cannot be written (a full disk, a read-only mount): serve what it
                // holds, refuse writes, and keep trying (writer.rs).
                let view = guarded(&path, || {
                    let db = disk::open_read_only(&path, cache_bytes)
                        .map_err(|e| StoreError::Redb(format!("{}: {e}", path.display())))?;
                    init_schema(&db, &path)?;
                    Ok(db)
                })
                .map_err(|_| StoreError::Redb(why.clone()))?;
                let loaded = guarded(&path, || scan::load(&view, sink))?;
                let reason = match probed {
                    Err(p) => format!("{p}; storage error: {why}"),
                    Ok(()) => format!("storage error: {why}"),
                };
                tracing::warn!(
                    reason = %reason,
                    "the data file cannot be written; serving reads, refusing writes until it can"
                );
                health.set(Mode::ReadOnly, Some(reason));
                (Start::ReadOnly(Arc::new(view)), loaded)
            }
            Err(e) => return Err(probed.err().unwrap_or(e)),
        };
        let (tx, rx) = mpsc::channel::<Job>();
        shared.set_db(Some(match &start {
            Start::Writable(db) | Start::ReadOnly(db) => Arc::clone(db),
        }));
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
            .spawn(move || writer::run(start, &rx, &ctx))
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

    /// What the store can do now: one atomic load.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.health.mode()
    }

    /// Why the store is failing (the latest failure; empty once a commit succeeded).
    #[must_use]
    pub fn reason(&self) -> String {
        self.health.reason()
    }

    /// Records a failure reported by a commit, when none is recorded yet.
    pub fn note_reason(&self, reason: &str) {
        self.health.set_reason(reason);
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
        Commit::pending(rx)
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
        self.shared.committed()
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

/// Runs `attempt`, turning a panic into a clean `Corrupt` error: redb can panic on some kinds of
/// page corruption.
fn guarded<T>(
    path: &Path,
    attempt: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(attempt));
    std::panic::set_hook(hook);
    result.unwrap_or_else(|_| Err(StoreError::Corrupt(path.to_owned())))
}

/// Opens the file for writing and checks (or writes) the schema; nothing is read yet, so a
/// failure here leaves the start-up load untouched.
fn open_checked(
    path: &Path,
    cache_bytes: usize,
    faults: Option<Arc<DiskFaults>>,
) -> Result<Database, StoreError> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Err(StoreError::Empty(path.to_owned()));
    }
    let db = disk::open(path, cache_bytes, faults).map_err(|e| match e {
        redb::DatabaseError::DatabaseAlreadyOpen => StoreError::Busy(path.to_owned()),
        other => StoreError::Redb(format!("{}: {other}", path.display())),
    })?;
    init_schema(&db, path)?;
    Ok(db)
}

/// Why the data directory could not be made: a file in the way (the directory itself, or one
/// above it) is named as such, other errors as they are.
fn dir_error(dir: &Path, e: std::io::Error) -> StoreError {
    let file = dir
        .ancestors()
        .find(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()));
    match file {
        Some(file) => StoreError::NotADirectory {
            dir: dir.to_owned(),
            file: file.to_owned(),
        },
        None => StoreError::Dir(dir.to_owned(), e),
    }
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
            Some(Ok(v)) if UPGRADABLE_FROM.contains(&v) => {
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
        super::sns::create_tables(&txn)?;
    }
    txn.commit().map_err(redb_err)
}
