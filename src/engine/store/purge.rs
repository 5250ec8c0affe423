//! Engine layer, store: background purges. PurgeQueue and DeleteQueue commit a record of the
//! first sequence number kept (`purge/<id>` in `meta`), and the writer removes the rows below it
//! a step at a time between requests (`writer.rs`, `next_job`).

use redb::{Database, Durability, ReadableTable};

use super::schema::{MESSAGE_STATE, MESSAGES, META, PURGE_KEY, StoreError, redb_err};

/// Most message rows one background purge step removes: small enough that a commit waiting
/// behind it is not held up for long.
pub(super) const PURGE_STEP: usize = 2000;

/// Removes up to [`PURGE_STEP`] messages of queue `id` below `below`; when none are left,
/// also the purge's record. Answers whether the purge is done.
pub(super) fn purge_step(db: &Database, id: u64, below: u64) -> Result<bool, StoreError> {
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

/// The first sequence number kept by the purge recorded under `key` (`purge/<id>`), if any.
pub(super) fn recorded_purge(
    meta: &redb::Table<'_, &'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<u64>, StoreError> {
    Ok(meta
        .get(key)
        .map_err(redb_err)?
        .and_then(|v| v.value().try_into().ok().map(u64::from_be_bytes)))
}

/// Records a purge of queue `id` below `below` in `meta`, merged with one already pending.
pub(super) fn record_purge(
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
