//! Engine layer, store: reading the store back at start-up ([`load`]): the queues, purges and
//! small tables, and the scan of the message tables. A thread of its own reads and decodes
//! redb's pages while the caller builds the in-memory index from what it hands over, so a
//! restart with a deep backlog uses both cores instead of one.

use std::sync::mpsc;

use redb::{Database, ReadableDatabase, ReadableTable};

use super::record::{self, DedupRecord, IndexFields, StateRecord, TaskRecord};
use super::schema::{
    DEDUP, MESSAGE_STATE, MESSAGES, META, PURGE_KEY, QUEUES, Row, SEQUENCE_KEY, StoreError, TASKS,
    TOMBSTONES, decode, redb_err,
};
use super::sns::LoadedSns;

/// Rows handed over at a time: large enough that the channel costs nothing per message, small
/// enough that at most a few hold memory at once.
pub(crate) const BATCH: usize = 4096;
/// Batches the reader may run ahead of the index builder.
const AHEAD: usize = 4;

type Batch = Vec<(u64, u64, IndexFields, StateRecord)>;

/// Feeds every message row not covered by a pending purge (`(queue id, seq below)`) to `sink`,
/// in key order, as [`Row::Message`]. An error from either side stops both.
pub(super) fn messages(
    db: &Database,
    purges: &[(u64, u64)],
    sink: &mut dyn FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<Result<Batch, StoreError>>(AHEAD);
        s.spawn(move || {
            if let Err(e) = read(db, purges, &tx) {
                let _ = tx.send(Err(e));
            }
        });
        // Returning early drops the receiver, which stops the reader at its next batch.
        for batch in rx {
            for (q, seq, fields, state) in batch? {
                sink(Row::Message(q, seq, fields, state))?;
            }
        }
        Ok(())
    })
}

/// The reader's side: walks the two message tables side by side (they share their keys) in a
/// read transaction of its own, sending full batches until done or the receiver is gone.
fn read(
    db: &Database,
    purges: &[(u64, u64)],
    tx: &mpsc::SyncSender<Result<Batch, StoreError>>,
) -> Result<(), StoreError> {
    let gone = |q: u64, s: u64| purges.iter().any(|&(id, below)| id == q && s < below);
    let txn = db.begin_read().map_err(redb_err)?;
    let messages = txn.open_table(MESSAGES).map_err(redb_err)?;
    let states = txn.open_table(MESSAGE_STATE).map_err(redb_err)?;
    let mut state_rows = states.iter().map_err(redb_err)?.peekable();
    let mut batch = Vec::with_capacity(BATCH);
    for row in messages.iter().map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        let key = k.value();
        let mut state = None;
        while let Some(next) = state_rows.peek() {
            let (sk, sv) = match next {
                Ok(pair) => pair,
                Err(e) => return Err(redb_err(e)),
            };
            let skey = sk.value();
            if skey < key {
                state_rows.next();
                continue;
            }
            if skey == key {
                state = Some(decode(sv.value())?);
                state_rows.next();
            }
            break;
        }
        if gone(key.0, key.1) {
            continue;
        }
        let fields = record::decode_index_fields(v.value()).map_err(StoreError::Decode)?;
        // A message that was never received has no state row: it is due at send + delay.
        let state = state.unwrap_or_else(|| fields.initial_state());
        batch.push((key.0, key.1, fields, state));
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if tx.send(Ok(full)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Ok(batch));
    }
    Ok(())
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
    /// SNS's topics, subscriptions and deduplication entries.
    pub sns: LoadedSns,
}

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

/// Reads the whole store back at start-up (and after a recovery): queues, purges still being
/// carried out and remembered sequence numbers, then every message (streamed to `sink`), then
/// the small tables, which it returns.
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
            record::decode_queue(v.value()).map_err(StoreError::Decode)?,
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
    messages(db, &purges, sink)?;
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
    out.sns = super::sns::load(db)?;
    Ok(out)
}
