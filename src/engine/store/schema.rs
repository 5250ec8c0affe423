//! Engine layer, store: the schema, and the types the store's files share: the redb tables
//! and `meta` keys, the schema version, the ops a change persists ([`Op`]), a job for the
//! writer and its acknowledgement ([`Job`], [`Commit`]), the rows read back at start-up
//! ([`Row`]), and [`StoreError`].
//!
//! The tables and record layouts are described in docs/storage.md; the records themselves are
//! in `record.rs`.

use std::path::PathBuf;

use redb::TableDefinition;
use serde::Deserialize;
use tokio::sync::oneshot;

use super::packed::PackedRecord;
use super::record::{self, DedupRecord, IndexFields, QueueRecord, StateRecord, TaskRecord};
use super::sns_record::SnsOp;

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
pub const SCHEMA_VERSION: u32 = 4;
/// The older versions this build still opens. Schema 2 lacks queue scopes (their records end
/// before the field, and `record::decode_queue` reads them) and keys tombstones by bare name;
/// schemas 2 and 3 lack SNS's tables (`sns.rs`), which opening creates empty. Opening such a
/// file marks it version 4; its records are rewritten as they change.
pub(super) const UPGRADABLE_FROM: &[u32] = &[2, 3];
pub(super) const SCHEMA_KEY: &str = "schema_version";
/// Most jobs folded into one commit.
pub(super) const MAX_BATCH: usize = 4096;

/// The prefix of the `meta` keys that record purges still being carried out.
pub(super) const PURGE_KEY: &str = "purge/";
/// The prefix of the `meta` keys that remember a FIFO queue's highest sequence number.
pub(super) const SEQUENCE_KEY: &str = "seq/";

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
    /// A change to SNS's tables (`sns.rs`).
    Sns(SnsOp),
    /// Drop everything (the reset endpoint).
    ResetAll,
}

/// Errors opening or using the store. Shown to the operator, never to clients.
#[derive(Debug)]
pub enum StoreError {
    /// The data directory could not be created or written.
    Dir(PathBuf, std::io::Error),
    /// The data directory, or a directory on its path, is a file.
    NotADirectory {
        /// The data directory asked for.
        dir: PathBuf,
        /// The file in its way (the directory itself, or one above it).
        file: PathBuf,
    },
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
            StoreError::Dir(p, e) => write!(
                f,
                "--data-dir {}: the directory cannot be created or written: {e}",
                p.display()
            ),
            StoreError::NotADirectory { dir, file } if dir == file => write!(
                f,
                "--data-dir {} is a file, not a directory: give a directory (localsqs creates it if it is missing)",
                dir.display()
            ),
            StoreError::NotADirectory { dir, file } => write!(
                f,
                "--data-dir {}: {} is a file, not a directory, so the data directory cannot be made under it",
                dir.display(),
                file.display()
            ),
            StoreError::Busy(p) => write!(
                f,
                "data file {} is already in use by another localsqs process (stop it, or give this one another --data-dir)",
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

pub(super) struct Job {
    /// Submission number, from 1: jobs are committed in this order.
    pub no: u64,
    pub ops: Vec<Op>,
    pub ack: oneshot::Sender<Result<(), String>>,
    /// Stop after this job and close the database file.
    pub close: bool,
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

    /// A commit acknowledged through `rx` once the writer has committed the job.
    pub(super) fn pending(rx: oneshot::Receiver<Result<(), String>>) -> Self {
        Self(Some(rx))
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
