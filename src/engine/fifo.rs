//! Engine layer: FIFO queues: required ids, deduplication, sequence numbers, group-by-group
//! receives and receive-attempt retries (§6.9 of sqs-protocol.md).

use std::collections::{HashMap, HashSet, VecDeque};

use sha2::{Digest, Sha256};

use super::state::{Phase, Queue};
use super::store::{Op, encode};
use crate::command::checksum::hex;
use crate::command::validate;
use crate::command::{Message, SendMessage};
use crate::error::{SqsError, SqsResult};

/// How long a deduplication id or a receive attempt id is remembered.
pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

pub use super::record::DedupRecord;

/// A remembered receive, for ReceiveRequestAttemptId retries.
#[derive(Debug, Clone)]
struct Attempt {
    expires_ms: u64,
    handed_out: Vec<(u64, u64)>,
    messages: Vec<Message>,
}

/// Per-queue FIFO bookkeeping.
#[derive(Debug, Default)]
pub struct FifoState {
    dedup: HashMap<String, DedupRecord>,
    order: VecDeque<(u64, String)>,
    last_sequence: u128,
    attempts: HashMap<String, Attempt>,
}

/// Where AWS's FIFO sequence numbers start: 2^64 (§4, G-23).
const SEQUENCE_BASE: u128 = 1 << 64;

impl FifoState {
    /// Restores a persisted deduplication entry.
    pub fn restore(&mut self, key: String, rec: DedupRecord) {
        self.last_sequence = self.last_sequence.max(rec.sequence_number);
        self.order.push_back((rec.expires_ms, key.clone()));
        self.dedup.insert(key, rec);
    }

    /// Notes a sequence number seen at load time.
    pub fn saw_sequence(&mut self, n: u128) {
        self.last_sequence = self.last_sequence.max(n);
    }

    /// The next sequence number: `2^64 + ms × 256000 + counter`, strictly increasing (§4).
    pub fn next_sequence(&mut self, sent_ms: u64) -> u128 {
        let n = (SEQUENCE_BASE + u128::from(sent_ms) * 256_000).max(self.last_sequence + 1);
        self.last_sequence = n;
        n
    }

    /// Drops deduplication entries whose window has passed, pushing the ops that delete them.
    pub fn prune(&mut self, queue_id: u64, now: u64, ops: &mut Vec<Op>) {
        while let Some((at, _)) = self.order.front() {
            if *at > now {
                break;
            }
            if let Some((_, key)) = self.order.pop_front()
                && self.dedup.get(&key).is_some_and(|r| r.expires_ms <= now)
            {
                self.dedup.remove(&key);
                ops.push(Op::DeleteDedup(queue_id, key));
            }
        }
        self.attempts.retain(|_, a| a.expires_ms > now);
    }

    /// The original send of a duplicate, if `key` is inside its window.
    #[must_use]
    pub fn duplicate_of(&self, key: &str, now: u64) -> Option<&DedupRecord> {
        self.dedup.get(key).filter(|r| r.expires_ms > now)
    }

    /// Remembers a send for the deduplication window.
    pub fn remember(&mut self, queue_id: u64, key: String, rec: DedupRecord, ops: &mut Vec<Op>) {
        ops.push(Op::PutDedup(queue_id, key.clone(), encode(&rec)));
        self.order.push_back((rec.expires_ms, key.clone()));
        self.dedup.insert(key, rec);
    }

    /// Forgets all deduplication ids and attempts (PurgeQueue clears them, §6.9).
    pub fn clear(&mut self) {
        self.dedup.clear();
        self.order.clear();
        self.attempts.clear();
    }
}

/// SHA-256 hex of the body: the content-based deduplication id (§6.9).
#[must_use]
pub fn content_dedup_id(body: &str) -> String {
    hex(&Sha256::digest(body.as_bytes()))
}

/// The text AWS gives when no deduplication id can be had (§5.5).
pub const NO_DEDUP_ID: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

/// Whether the queue derives deduplication ids from bodies.
#[must_use]
pub fn content_based(q: &Queue) -> bool {
    q.rec
        .attributes
        .get("ContentBasedDeduplication")
        .is_some_and(|v| v == "true")
}

/// Checks the FIFO-only rules of one send (§5.5, §6.6, §6.9).
pub fn check_send(q: &Queue, c: &SendMessage) -> SqsResult<()> {
    let Some(group) = &c.message_group_id else {
        return Err(SqsError::missing("MessageGroupId"));
    };
    validate::fifo_param(group, "MessageGroupId")?;
    match &c.message_deduplication_id {
        Some(d) => validate::fifo_param(d, "MessageDeduplicationId")?,
        None if content_based(q) => {}
        None => return Err(SqsError::invalid_value(NO_DEDUP_ID)),
    }
    if let Some(d) = c.delay_seconds
        && d != 0
    {
        return Err(SqsError::invalid_param(
            &d.to_string(),
            "DelaySeconds",
            "The request include parameter that is not valid for this queue type.",
        ));
    }
    Ok(())
}

/// The key a deduplication id is remembered under: per queue, or per group when the queue was
/// created with `DeduplicationScope=messageGroup` (the scope at creation rules, §6.9).
#[must_use]
pub fn dedup_key(q: &Queue, group: &str, dedup_id: &str) -> String {
    if q.rec.dedup_per_group {
        format!("{group}\u{0}{dedup_id}")
    } else {
        dedup_id.to_owned()
    }
}

/// Picks up to `max` messages group by group: the oldest receivable group first, all of its
/// receivable messages in order, then the next. Groups with a message in flight are skipped,
/// including their messages not yet received (§6.9, G-27).
#[must_use]
pub fn pick(q: &Queue, max: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut done: HashSet<&str> = HashSet::new();
    for seq in &q.ready {
        if out.len() >= max {
            break;
        }
        let Some(g) = q
            .msgs
            .get(seq)
            .and_then(|m| m.rec.extra().group_id.as_deref())
        else {
            continue;
        };
        if done.contains(g) {
            continue;
        }
        done.insert(g);
        let Some(group) = q.groups.get(g) else {
            continue;
        };
        if group.inflight > 0 {
            continue;
        }
        for s in &group.seqs {
            if out.len() >= max || q.msgs.get(s).is_none_or(|m| m.phase != Phase::Ready) {
                break;
            }
            out.push(*s);
        }
    }
    out
}

/// A stored result for a retried ReceiveRequestAttemptId, if every message it handed out is
/// still in flight under the same receive (§6.7).
pub fn retry(q: &Queue, attempt_id: &str, now: u64) -> Option<Vec<Message>> {
    let a = q
        .fifo
        .attempts
        .get(attempt_id)
        .filter(|a| a.expires_ms > now)?;
    let intact = a.handed_out.iter().all(|(seq, nonce)| {
        q.msgs
            .get(seq)
            .is_some_and(|m| m.phase == Phase::InFlight && m.st.nonce == *nonce)
    });
    intact.then(|| a.messages.clone())
}

/// Remembers what a receive with an attempt id handed out.
pub fn remember_attempt(
    q: &mut Queue,
    attempt_id: &str,
    now: u64,
    handed_out: Vec<(u64, u64)>,
    messages: &[Message],
) {
    q.fifo.attempts.insert(
        attempt_id.to_owned(),
        Attempt {
            expires_ms: now + DEDUP_WINDOW_MS,
            handed_out,
            messages: messages.to_vec(),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_exceed_u64_and_grow() {
        let mut f = FifoState::default();
        let a = f.next_sequence(1_684_700_300_546);
        assert_eq!(a.to_string(), "18878027350649327616");
        let b = f.next_sequence(1_684_700_300_546);
        assert_eq!(b, a + 1);
        let c = f.next_sequence(1_684_700_300_000);
        assert!(c > b);
        assert_eq!(a.to_string().len(), 20);
    }

    #[test]
    fn content_ids_are_sha256_hex() {
        assert_eq!(
            content_dedup_id("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn dedup_window_expires() {
        let mut f = FifoState::default();
        let mut ops = Vec::new();
        let rec = DedupRecord {
            expires_ms: 1000 + DEDUP_WINDOW_MS,
            message_id: "m".into(),
            sequence_number: 1,
        };
        f.remember(1, "d".into(), rec, &mut ops);
        assert!(f.duplicate_of("d", 1000 + DEDUP_WINDOW_MS - 1).is_some());
        assert!(f.duplicate_of("d", 1000 + DEDUP_WINDOW_MS).is_none());
        f.prune(1, 1000 + DEDUP_WINDOW_MS, &mut ops);
        assert!(f.dedup.is_empty());
        assert_eq!(ops.len(), 2);
    }
}
