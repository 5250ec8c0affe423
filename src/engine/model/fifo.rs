//! Engine layer, model: FIFO bookkeeping: required ids, deduplication windows, sequence numbers and
//! receive-attempt retries (docs/protocol.md §6.9).
//!
//! Knows nothing of a queue's messages: picking messages group by group lives with the queue's
//! indexes (`queue.rs`), which own a [`FifoState`] each.

use std::collections::{HashMap, VecDeque};

use sha2::{Digest, Sha256};

use crate::command::checksum::hex;
use crate::command::validate;
use crate::command::{Message, MessageToSend};
use crate::engine::store::record::DedupRecord;
use crate::engine::store::schema::Op;
use crate::error::{SqsError, SqsResult};

/// How long a deduplication id or a receive attempt id is remembered.
pub(crate) const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;

/// A remembered receive, for ReceiveRequestAttemptId retries.
#[derive(Debug, Clone)]
struct Attempt {
    expires_ms: u64,
    /// (sequence number, receive nonce) of each message handed out.
    handed_out: Vec<(u64, u64)>,
    messages: Vec<Message>,
}

/// Per-queue FIFO bookkeeping.
#[derive(Debug, Default)]
pub(crate) struct FifoState {
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

    /// Notes the sequence number of a message added to the queue (loaded or moved in), so that
    /// later numbers are higher.
    pub fn saw_sequence(&mut self, n: u128) {
        self.last_sequence = self.last_sequence.max(n);
    }

    /// The highest sequence number issued or seen (0 when none).
    pub fn last_sequence(&self) -> u128 {
        self.last_sequence
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
        ops.push(Op::PutDedup(queue_id, key.clone(), rec.clone()));
        self.order.push_back((rec.expires_ms, key.clone()));
        self.dedup.insert(key, rec);
    }

    /// Forgets all deduplication ids and attempts (PurgeQueue clears them, §6.9).
    pub fn clear(&mut self) {
        self.dedup.clear();
        self.order.clear();
        self.attempts.clear();
    }

    /// The stored result of a retried ReceiveRequestAttemptId, if the attempt is in its window
    /// and `held(seq, nonce)` says every message it handed out is still in flight under that
    /// same receive (§6.7).
    pub fn retry(
        &self,
        attempt_id: &str,
        now: u64,
        held: impl Fn(u64, u64) -> bool,
    ) -> Option<Vec<Message>> {
        let a = self
            .attempts
            .get(attempt_id)
            .filter(|a| a.expires_ms > now)?;
        let intact = a.handed_out.iter().all(|&(seq, nonce)| held(seq, nonce));
        intact.then(|| a.messages.clone())
    }

    /// Remembers what a receive with an attempt id handed out: (seq, nonce) pairs and the
    /// messages as returned.
    pub fn remember_attempt(
        &mut self,
        attempt_id: &str,
        now: u64,
        handed_out: Vec<(u64, u64)>,
        messages: &[Message],
    ) {
        self.attempts.insert(
            attempt_id.to_owned(),
            Attempt {
                expires_ms: now + DEDUP_WINDOW_MS,
                handed_out,
                messages: messages.to_vec(),
            },
        );
    }
}

/// SHA-256 hex of the body: the content-based deduplication id (§6.9).
#[must_use]
pub(crate) fn content_dedup_id(body: &str) -> String {
    hex(&Sha256::digest(body.as_bytes()))
}

/// The text AWS gives when no deduplication id can be had (§5.5).
pub(crate) const NO_DEDUP_ID: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

/// Checks the FIFO-only rules of one send (§5.5, §6.6, §6.9); `content_based` is the queue's
/// ContentBasedDeduplication.
pub(crate) fn check_send(content_based: bool, c: &MessageToSend) -> SqsResult<()> {
    let Some(group) = &c.message_group_id else {
        return Err(SqsError::missing("MessageGroupId"));
    };
    validate::fifo_param(group, "MessageGroupId")?;
    match &c.message_deduplication_id {
        Some(d) => validate::fifo_param(d, "MessageDeduplicationId")?,
        None if content_based => {}
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
/// created with `DeduplicationScope=messageGroup` (`per_group`; the scope at creation rules,
/// §6.9).
#[must_use]
pub(crate) fn dedup_key(per_group: bool, group: &str, dedup_id: &str) -> String {
    if per_group {
        format!("{group}\u{0}{dedup_id}")
    } else {
        dedup_id.to_owned()
    }
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
