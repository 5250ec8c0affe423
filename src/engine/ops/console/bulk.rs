//! Engine layer, ops: what the web console does to many messages at once, by message id and
//! without receiving them: delete them, or move them to another queue. A move is a send to the
//! target and a delete from the source, made under one lock and persisted in one commit, so a
//! message is never in both queues, nor in neither.

use std::collections::HashMap;

use crate::command::Scope;
use crate::engine::handle::Engine;
use crate::engine::model::queue::Queue;
use crate::engine::model::receipt::fingerprint;
use crate::engine::store::record::{MessageRecord, StateRecord};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Most message ids one bulk request may name: the queue is walked once under the lock, and
/// every named message's record is read, so the work per request stays bounded.
pub const BULK_MAX_IDS: usize = 1000;

/// What a bulk delete or move did, by message id (the ids as the request gave them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkOutcome {
    /// Deleted, or moved: for a move, `(source id, id in the target)`.
    pub done: Vec<(String, String)>,
    /// Not in the source queue (never there, or deleted meanwhile).
    pub missing: Vec<String>,
}

/// Where the console moves messages to, and with which group id when the target is a FIFO
/// queue and a message has none of its own.
#[derive(Debug, Clone, Copy)]
pub struct MoveTarget<'a> {
    /// The target queue: a name (in the source's account and region) or a queue URL.
    pub queue_url: &'a str,
    /// MessageGroupId for messages that carry none, when the target is a FIFO queue.
    pub group_id: Option<&'a str>,
}

fn too_many(n: usize) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidParameterValue,
        format!("At most {BULK_MAX_IDS} message ids per request; {n} were given."),
    )
}

/// The messages of `q` with these ids: `(index into ids, seq, record)`, each found once. One
/// pass over the queue's index (which holds a fingerprint of every id), then the candidates'
/// records confirm the ids.
fn find(
    engine: &Engine,
    q: &Queue,
    ids: &[String],
) -> (Vec<(usize, u64, MessageRecord)>, Vec<usize>) {
    let mut wanted: HashMap<u64, Vec<(usize, uuid::Uuid)>> = HashMap::new();
    for (i, id) in ids.iter().enumerate() {
        // An id that is no UUID names no message; one named twice is looked for once, and its
        // second mention is reported missing.
        if let Ok(u) = uuid::Uuid::parse_str(id) {
            let same = wanted.entry(fingerprint(u.as_bytes())).or_default();
            if !same.iter().any(|&(_, w)| w == u) {
                same.push((i, u));
            }
        }
    }
    let candidates: Vec<u64> = q
        .messages()
        .iter_from(0)
        .filter(|(_, m)| wanted.contains_key(&m.fp()))
        .map(|(seq, _)| seq)
        .collect();
    let records = engine.records(q, &candidates);
    let mut found = Vec::new();
    let mut seen = vec![false; ids.len()];
    for (seq, rec) in candidates.into_iter().zip(records) {
        let Some(rec) = rec else { continue };
        let fp = fingerprint(rec.id.as_bytes());
        for &(i, u) in wanted.get(&fp).into_iter().flatten() {
            if u == rec.id && !seen[i] {
                seen[i] = true;
                found.push((i, seq, rec.clone()));
            }
        }
    }
    let missing = (0..ids.len()).filter(|&i| !seen[i]).collect();
    (found, missing)
}

impl Engine {
    /// Deletes the messages with these ids from a queue, whatever their state, without
    /// receiving them (the web console). At most [`BULK_MAX_IDS`] ids.
    pub async fn delete_by_ids(
        &self,
        scope: &Scope,
        queue_url: &str,
        ids: &[String],
    ) -> SqsResult<BulkOutcome> {
        if ids.len() > BULK_MAX_IDS {
            return Err(too_many(ids.len()));
        }
        let (outcome, commit) = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, queue_url)?;
            let (found, missing) = find(self, q, ids);
            let mut ops = Vec::new();
            let mut outcome = BulkOutcome::default();
            for (i, seq, _) in found {
                if q.delete(seq, &mut ops).is_some() {
                    outcome.done.push((ids[i].clone(), ids[i].clone()));
                }
            }
            let n = outcome.done.len() as u64;
            self.inner.metrics.deleted.inc_by(n);
            q.traffic_mut().deleted += n;
            if n > 0 {
                q.wake();
            }
            outcome.missing = missing.into_iter().map(|i| ids[i].clone()).collect();
            (outcome, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(outcome)
    }

    /// Moves the messages with these ids to another queue (the web console): each becomes a
    /// new message of the target (a new id, sent now, visible at once, never received), with
    /// its body, message attributes, trace header and group id, and leaves the source, in one
    /// commit. A FIFO target needs a group id for every message: a message without one of its
    /// own gets `target.group_id`, and when that is absent too nothing is moved. In a FIFO
    /// target a moved message gets a sequence number and, unless it carries one, its new id as
    /// deduplication id; it is neither checked against nor entered in the target's
    /// deduplication window. As with a redrive, the target's MaximumMessageSize and
    /// DelaySeconds do not apply. At most [`BULK_MAX_IDS`] ids.
    pub async fn move_by_ids(
        &self,
        scope: &Scope,
        queue_url: &str,
        ids: &[String],
        target: MoveTarget<'_>,
    ) -> SqsResult<BulkOutcome> {
        if ids.len() > BULK_MAX_IDS {
            return Err(too_many(ids.len()));
        }
        let now = self.now();
        let (outcome, commit) = {
            let mut reg = self.lock();
            let source = self.resolve(&reg, scope, queue_url)?;
            let dest = self.resolve(&reg, scope, target.queue_url)?;
            if source == dest {
                return Err(SqsError::new(
                    ErrorCode::InvalidParameterValue,
                    "The target queue is the source queue.",
                ));
            }
            let dest_fifo = reg.get(dest).is_some_and(Queue::is_fifo);
            let (found, missing) = match reg.get(source) {
                Some(q) => find(self, q, ids),
                None => return Err(SqsError::queue_does_not_exist()),
            };
            let group = target.group_id.filter(|g| !g.is_empty());
            if dest_fifo && group.is_none() {
                let without = found
                    .iter()
                    .filter(|(_, _, r)| r.extra().group_id.is_none())
                    .count();
                if without > 0 {
                    return Err(SqsError::new(
                        ErrorCode::MissingParameter,
                        format!(
                            "The target is a FIFO queue and {without} of the messages have no MessageGroupId: give a group id for them."
                        ),
                    ));
                }
            }
            let mut ops = Vec::new();
            let mut outcome = BulkOutcome::default();
            let mut moved = Vec::new();
            if let Some(q) = reg.get_mut(source) {
                for (i, seq, rec) in found {
                    if q.delete(seq, &mut ops).is_some() {
                        moved.push((i, rec));
                    }
                }
                q.traffic_mut().deleted += moved.len() as u64;
                if !moved.is_empty() {
                    q.wake();
                }
            }
            if let Some(d) = reg.get_mut(dest) {
                for (i, mut rec) in moved {
                    let new_id = self.inner.ids.uuid();
                    renew(&mut rec, d, &new_id, group, now);
                    d.append(
                        rec,
                        StateRecord {
                            visible_at_ms: now,
                            ..StateRecord::default()
                        },
                        now,
                        &mut ops,
                    );
                    outcome.done.push((ids[i].clone(), new_id));
                }
                d.traffic_mut().sent += outcome.done.len() as u64;
                d.wake();
            }
            let n = outcome.done.len() as u64;
            self.inner.metrics.deleted.inc_by(n);
            self.inner.metrics.sent.inc_by(n);
            outcome.missing = missing.into_iter().map(|i| ids[i].clone()).collect();
            (outcome, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(outcome)
    }
}

/// Turns a record taken from its source into a new message of `dest`.
fn renew(rec: &mut MessageRecord, dest: &mut Queue, new_id: &str, group: Option<&str>, now: u64) {
    rec.id = crate::engine::ops::message::parse_id(new_id);
    rec.sent_ms = dest.send_time(now);
    rec.delay_s = 0;
    let extra = rec.extra_mut();
    extra.dead_letter_source_arn = None;
    if dest.is_fifo() {
        if extra.group_id.is_none() {
            extra.group_id = group.map(str::to_owned);
        }
        if extra.dedup_id.is_none() {
            extra.dedup_id = Some(new_id.to_owned());
        }
        let sent_ms = rec.sent_ms;
        rec.extra_mut().sequence_number = Some(dest.fifo_state().next_sequence(sent_ms));
    } else {
        // A standard queue has no deduplication or sequence numbers; a group id stays (fair
        // queues use it).
        extra.dedup_id = None;
        extra.sequence_number = None;
    }
    rec.compact();
}
