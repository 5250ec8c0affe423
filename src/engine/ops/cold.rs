//! Engine layer, ops: message records that are not in memory: noting the records a change puts
//! in the body cache (`store/cache.rs`), and reading records back from the store.
//!
//! A durable engine drops a record from memory once its put is committed and the cache's
//! budget is spent; every reader of records (receive, peek and inspect, moves to a dead-letter
//! queue, move tasks, delete by id) asks [`Engine::records`], which answers from memory when it
//! can and reads the rest from the file in one read transaction. A record whose message is
//! gone, or whose id does not match the index's fingerprint, is answered as `None`: the caller
//! leaves that message out, and never shows one message with another's record.

use super::message::render;
use crate::command::{Message, ReceiveMessage};
use crate::engine::handle::Engine;
use crate::engine::model::queue::Queue;
use crate::engine::model::receipt::fingerprint;
use crate::engine::model::registry::Registry;
use crate::engine::store::packed::PackedRecord;
use crate::engine::store::record::{MessageRecord, StateRecord};
use crate::engine::store::schema::{Commit, Op};

/// A message a receive took under the lock, before it is rendered.
#[derive(Debug)]
pub(super) struct Taken {
    pub seq: u64,
    /// Fingerprint of its id, to check the record read back.
    pub fp: u64,
    pub handle: String,
    /// Its state as of the receive.
    pub state: StateRecord,
    /// Its record, when it was in memory.
    pub rec: Option<PackedRecord>,
}

/// What a receive took under the lock.
#[derive(Debug)]
pub(super) enum Picked {
    /// Rendered already (FIFO queues, retried attempts).
    Done(Vec<Message>),
    /// To render once the records not in memory are read (standard queues).
    Fetch { queue_id: u64, taken: Vec<Taken> },
}

impl Picked {
    /// How many messages the receive took.
    pub fn len(&self) -> usize {
        match self {
            Picked::Done(m) => m.len(),
            Picked::Fetch { taken, .. } => taken.len(),
        }
    }

    /// Whether the receive took nothing.
    pub fn is_empty(&self) -> bool {
        match self {
            Picked::Done(m) => m.is_empty(),
            Picked::Fetch { taken, .. } => taken.is_empty(),
        }
    }
}

impl Engine {
    /// Renders what a receive took, reading the records that were not in memory first, in
    /// one read transaction and without the engine lock. A message changed in between is
    /// still the same message under the same key: sequence numbers are not reused within a
    /// run, and an evicted record's put is committed. A message whose record is gone by then
    /// (deleted by id, purged and removed, its queue deleted), or does not match its
    /// fingerprint, is left out of the answer; its receive is then moot.
    pub(super) fn complete(&self, picked: Picked, c: &ReceiveMessage) -> Vec<Message> {
        let (queue_id, taken) = match picked {
            Picked::Done(messages) => return messages,
            Picked::Fetch { queue_id, taken } => (queue_id, taken),
        };
        let cold: Vec<(u64, u64)> = taken
            .iter()
            .filter(|t| t.rec.is_none())
            .map(|t| (queue_id, t.seq))
            .collect();
        let read = if cold.is_empty() {
            Vec::new()
        } else {
            self.inner.store.read_messages(&cold).unwrap_or_else(|e| {
                tracing::error!(error = %e, "reading message records failed");
                Vec::new()
            })
        };
        let mut read = read.into_iter();
        let sender = &self.inner.cfg.account_id;
        taken
            .into_iter()
            .filter_map(|t| {
                let mut rec = match t.rec {
                    Some(packed) => unpack(&packed)?,
                    None => read.next().flatten()?,
                };
                (fingerprint(rec.id.as_bytes()) == t.fp).then(|| {
                    // The record is this answer's own: its body moves in rather than being
                    // copied.
                    let body = std::mem::take(&mut rec.body);
                    let mut m = render(&rec, &t.state, t.handle, c, sender);
                    m.body = body.into_string();
                    m
                })
            })
            .collect()
    }

    /// Submits ops that may put messages: in durable mode their records are noted in the body
    /// cache, and the oldest committed records over its budget leave memory. Call under the
    /// lock, like [`crate::engine::store::schema::Store::submit`].
    pub(super) fn submit_puts(&self, reg: &mut Registry, ops: Vec<Op>) -> Commit {
        let store = &self.inner.store;
        if store.durable() {
            let job = store.next_job();
            for op in &ops {
                if let Op::PutMessage(q, seq, rec) = op {
                    reg.cache_record(*q, *seq, job, rec);
                }
            }
            reg.evict_records(store.committed());
        }
        store.submit(ops)
    }

    /// The records of messages `seqs` of queue `q`, in order: from memory when held there,
    /// otherwise read from the store. `None` for a message that is not in the queue, or
    /// whose record cannot be read.
    pub(super) fn records(&self, q: &Queue, seqs: &[u64]) -> Vec<Option<MessageRecord>> {
        let mut out = Vec::with_capacity(seqs.len());
        // (position in `out`, key, id fingerprint) of the records to read from the store.
        let mut cold = Vec::new();
        for (i, &seq) in seqs.iter().enumerate() {
            let Some(m) = q.messages().get(seq) else {
                out.push(None);
                continue;
            };
            let held = m.record().and_then(unpack);
            if held.is_none() {
                cold.push((i, (q.id(), seq), m.fp()));
            }
            out.push(held);
        }
        if cold.is_empty() {
            return out;
        }
        let keys: Vec<(u64, u64)> = cold.iter().map(|&(_, key, _)| key).collect();
        match self.inner.store.read_messages(&keys) {
            Ok(read) => {
                for ((i, _, fp), rec) in cold.into_iter().zip(read) {
                    out[i] = rec.filter(|r| fingerprint(r.id.as_bytes()) == fp);
                }
            }
            Err(e) => tracing::error!(error = %e, "reading message records failed"),
        }
        out
    }

    /// The record of one message of queue `q` (see [`Engine::records`]).
    pub(super) fn record(&self, q: &Queue, seq: u64) -> Option<MessageRecord> {
        self.records(q, &[seq]).pop().flatten()
    }

    /// Bytes of message records the body cache counts as held in memory (durable mode; an
    /// upper bound). For tests and diagnostics.
    #[must_use]
    pub fn cached_record_bytes(&self) -> usize {
        self.lock().cached_bytes()
    }
}

/// Unpacks a record held in memory; `None` (logged) if its bytes do not decode, which only a
/// bug can cause: the caller leaves the message out as if its record were gone.
fn unpack(packed: &PackedRecord) -> Option<MessageRecord> {
    packed
        .unpack()
        .map_err(|e| tracing::error!(error = %e, "an in-memory message record does not decode"))
        .ok()
}

#[cfg(test)]
mod tests;
