//! Engine layer, store: the body cache: which message records a durable engine keeps in memory.
//!
//! A durable engine does not need a message's record (body, attributes, id, checksums) in
//! memory once its put is committed: the index (`model/index/`) keeps what scheduling needs, and a
//! receive reads the record back from redb. Records of recently sent messages stay in memory,
//! up to a byte budget (`EngineOptions::body_cache_bytes`), so that a send → receive → delete
//! pipeline never reads the disk. This is that budget's bookkeeping: the records put, oldest
//! first, with the number of the store job that writes each one. Eviction takes the oldest
//! while the total is over budget, and never one whose job is not yet committed: an evicted
//! record must be readable from the file. So the total may pass the budget by what the commits
//! in progress hold.
//!
//! A record deleted while listed here keeps counting until it reaches the front: the total is
//! an upper bound of the bytes held, never less. A memory-mode engine does not use the cache:
//! it keeps every record.

use std::collections::VecDeque;

use super::packed::PackedRecord;

/// Bytes counted for a record besides its packed bytes: the allocator's header and rounding
/// (at most 8 + 15).
const RECORD_OVERHEAD: usize = 24;

/// One cached record.
#[derive(Debug, Clone, Copy)]
struct Entry {
    queue: u64,
    seq: u64,
    /// The store job that writes it.
    job: u64,
    bytes: usize,
}

/// Records held in memory by a durable engine, oldest first, and their total size.
#[derive(Debug)]
pub(crate) struct BodyCache {
    budget: usize,
    bytes: usize,
    order: VecDeque<Entry>,
}

impl BodyCache {
    /// An empty cache that holds about `budget` bytes of records.
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            bytes: 0,
            order: VecDeque::new(),
        }
    }

    /// Bytes of the records listed (an upper bound of those still in memory).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Notes that the record of message `seq` of queue `queue`, written by store job `job`,
    /// is in memory.
    pub fn note(&mut self, queue: u64, seq: u64, job: u64, rec: &PackedRecord) {
        let bytes = record_bytes(rec);
        self.bytes += bytes;
        self.order.push_back(Entry {
            queue,
            seq,
            job,
            bytes,
        });
    }

    /// Takes the oldest records out while over budget, as long as their jobs are committed
    /// (`committed`: the latest committed job), calling `drop_record(queue, seq)` for each.
    pub fn evict(&mut self, committed: u64, mut drop_record: impl FnMut(u64, u64)) {
        while self.bytes > self.budget {
            let Some(e) = self.order.front().copied() else {
                break;
            };
            if e.job > committed {
                break;
            }
            self.order.pop_front();
            self.bytes -= e.bytes;
            drop_record(e.queue, e.seq);
        }
    }
}

/// The bytes a record holds in memory: its packed bytes and the allocator's header and
/// rounding (the pointer to it is part of the index entry).
fn record_bytes(rec: &PackedRecord) -> usize {
    RECORD_OVERHEAD + rec.bytes().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::store::record::MessageRecord;

    fn rec(body_len: usize) -> PackedRecord {
        PackedRecord::pack(&MessageRecord {
            id: uuid::Uuid::nil(),
            body: "x".repeat(body_len).into(),
            sent_ms: 0,
            delay_s: 0,
            md5_of_body: [0; 16],
            extra: None,
        })
    }

    #[test]
    fn evicts_oldest_committed_records_over_budget() {
        let one = record_bytes(&rec(100));
        let mut c = BodyCache::new(2 * one);
        for seq in 1..=4 {
            c.note(1, seq, seq, &rec(100));
        }
        assert_eq!(c.bytes(), 4 * one);
        let mut dropped = Vec::new();
        // Only job 1 is committed: the rest stay, even over budget.
        c.evict(1, |q, s| dropped.push((q, s)));
        assert_eq!(dropped, [(1, 1)]);
        assert_eq!(c.bytes(), 3 * one);
        c.evict(4, |q, s| dropped.push((q, s)));
        assert_eq!(dropped, [(1, 1), (1, 2)]);
        assert_eq!(c.bytes(), 2 * one, "back within budget");
    }
}
