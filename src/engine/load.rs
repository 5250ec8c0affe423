//! Engine layer, top: building the in-memory registry from the store's rows, at start-up and again
//! after the store recovers from a failing disk.

use super::model::queue::Queue;
use super::model::registry::Registry;
use super::model::task::Task;
use super::model::topics::Topics;
use super::options::EngineOptions;
use super::store::scan::Loaded;
use super::store::schema::{Row, StoreError};
use crate::command::Scope;

/// A registry filled by `load`, which streams rows into the sink it is given and returns the
/// small tables; `now` is the clock's time (epoch ms).
pub(super) fn registry_from(
    cfg: &EngineOptions,
    now: u64,
    load: impl FnOnce(&mut dyn FnMut(Row) -> Result<(), StoreError>) -> Result<Loaded, StoreError>,
) -> Result<Registry, StoreError> {
    let mut reg = Registry::new(cfg.body_cache_bytes);
    let default_scope = Scope {
        account: cfg.account_id.clone(),
        region: cfg.region.clone(),
    };
    let mut sink = |row: Row| {
        match row {
            Row::Queue(id, rec) => {
                let q = Queue::from_record(id, rec, &default_scope);
                reg.add(q.map_err(StoreError::Decode)?);
            }
            Row::Purge(qid, below) => match reg.get_mut(qid) {
                Some(q) => q.reserve_seqs_below(below),
                None => reg.reserve_id(qid),
            },
            Row::Sequence(qid, n) => {
                if let Some(q) = reg.get_mut(qid) {
                    q.fifo_state().saw_sequence(n);
                }
            }
            Row::Message(qid, seq, fields, state) => {
                if let Some(q) = reg.get_mut(qid) {
                    q.restore(seq, &fields, state, now);
                }
            }
        }
        Ok(())
    };
    let loaded = load(&mut sink)?;
    for (key, at) in loaded.tombstones {
        // Schema 2 keyed tombstones by bare name, in the configured scope.
        let arn = if key.starts_with("arn:") {
            key
        } else {
            default_scope.arn(&key)
        };
        reg.tombstone(arn, at);
    }
    for q in reg.queues_mut().filter(|q| q.is_fifo()) {
        // FIFO queues apply the current DelaySeconds to messages not yet received (§6.6).
        q.redelay(now);
    }
    for (qid, key, rec) in loaded.dedup {
        if let Some(q) = reg.get_mut(qid) {
            q.fifo_state().restore(key, rec);
        }
    }
    let mut tasks = loaded
        .tasks
        .into_iter()
        .map(Task::from_record)
        .collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::Decode)?;
    // Start order: ids of tasks started in the same millisecond sort in start order.
    tasks.sort_by(|a, b| (a.started_ms, &a.id).cmp(&(b.started_ms, &b.id)));
    *reg.tasks_mut() = tasks;
    *reg.topics_mut() = Topics::from_loaded(loaded.sns);
    Ok(reg)
}
