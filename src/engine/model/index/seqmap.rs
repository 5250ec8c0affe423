//! Engine layer, model: an ordered map from sequence numbers to values, packed densely for a
//! queue's messages and its ready set.
//!
//! A queue's sequence numbers are assigned in increasing order, so nearly every insert is an
//! append. The standard `BTreeMap` splits a full node in the middle, which leaves nodes built
//! by appends half full: about 1.8 times the entries' size. This map keeps entries in sorted
//! chunks of up to [`CAP`] in a `BTreeMap` keyed by each chunk's lower bound, and starts a new
//! chunk when an append finds the last one full, so a backlog built by sends (or by the loader,
//! which reads in order) fills its chunks completely. An insert in the middle of a full chunk
//! splits it in two. Removing shifts the rest of its chunk (at most [`CAP`] entries); an empty
//! chunk is dropped, and a chunk left mostly empty gives back its spare capacity, so the space
//! per live entry stays bounded whatever the order of deletes.
//!
//! Invariant: every entry of the chunk under key `k` is `>= k` and below the next chunk's key.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Most entries per chunk.
const CAP: usize = 64;

/// An ordered map keyed by sequence number (see the module comment).
#[derive(Debug)]
pub(crate) struct SeqMap<V> {
    chunks: BTreeMap<u64, Vec<(u64, V)>>,
    len: usize,
}

impl<V: Clone> Clone for SeqMap<V> {
    fn clone(&self) -> Self {
        Self {
            chunks: self.chunks.clone(),
            len: self.len,
        }
    }
}

impl<V> Default for SeqMap<V> {
    fn default() -> Self {
        Self {
            chunks: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<V> SeqMap<V> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no entries.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Key of the chunk that holds (or would hold) `seq`.
    fn chunk_key(&self, seq: u64) -> Option<u64> {
        self.chunks.range(..=seq).next_back().map(|(k, _)| *k)
    }

    /// The value under `seq`.
    pub fn get(&self, seq: u64) -> Option<&V> {
        let (_, chunk) = self.chunks.range(..=seq).next_back()?;
        let i = chunk.binary_search_by_key(&seq, |e| e.0).ok()?;
        Some(&chunk[i].1)
    }

    /// The value under `seq`, to change it.
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut V> {
        let (_, chunk) = self.chunks.range_mut(..=seq).next_back()?;
        let i = chunk.binary_search_by_key(&seq, |e| e.0).ok()?;
        Some(&mut chunk[i].1)
    }

    /// Whether `seq` is present.
    pub fn contains(&self, seq: u64) -> bool {
        self.get(seq).is_some()
    }

    /// Inserts `value` under `seq`; answers the value it replaces.
    pub fn insert(&mut self, seq: u64, value: V) -> Option<V> {
        let Some(key) = self.chunk_key(seq) else {
            // Below every chunk (or the map is empty): the first chunk takes it and its key.
            match self.chunks.pop_first() {
                Some((_, mut chunk)) if chunk.len() < CAP => {
                    chunk.insert(0, (seq, value));
                    self.chunks.insert(seq, chunk);
                }
                first => {
                    if let Some((k, chunk)) = first {
                        self.chunks.insert(k, chunk);
                    }
                    self.chunks.insert(seq, new_chunk(seq, value));
                }
            }
            self.len += 1;
            return None;
        };
        let is_last = self.chunks.last_key_value().is_some_and(|(k, _)| *k == key);
        let chunk = self.chunks.get_mut(&key)?;
        let i = match chunk.binary_search_by_key(&seq, |e| e.0) {
            Ok(i) => return Some(std::mem::replace(&mut chunk[i].1, value)),
            Err(i) => i,
        };
        self.len += 1;
        if chunk.len() < CAP {
            chunk.insert(i, (seq, value));
        } else if i == chunk.len() && is_last {
            // An append to a full last chunk starts a new one: appended chunks stay full.
            self.chunks.insert(seq, new_chunk(seq, value));
        } else {
            let mut upper = chunk.split_off(CAP / 2);
            if i <= CAP / 2 {
                chunk.insert(i, (seq, value));
            } else {
                upper.insert(i - CAP / 2, (seq, value));
            }
            let upper_key = upper[0].0;
            self.chunks.insert(upper_key, upper);
        }
        None
    }

    /// Removes the value under `seq`.
    pub fn remove(&mut self, seq: u64) -> Option<V> {
        let key = self.chunk_key(seq)?;
        let chunk = self.chunks.get_mut(&key)?;
        let i = chunk.binary_search_by_key(&seq, |e| e.0).ok()?;
        let (_, value) = chunk.remove(i);
        self.len -= 1;
        if chunk.is_empty() {
            self.chunks.remove(&key);
        } else if chunk.len() * 4 <= chunk.capacity() && chunk.capacity() > 8 {
            chunk.shrink_to(chunk.len() * 2);
        }
        Some(value)
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
    }

    /// The first entry.
    pub fn first(&self) -> Option<(u64, &V)> {
        self.chunks
            .first_key_value()
            .and_then(|(_, c)| c.first())
            .map(|(s, v)| (*s, v))
    }

    /// The last entry.
    pub fn last(&self) -> Option<(u64, &V)> {
        self.chunks
            .last_key_value()
            .and_then(|(_, c)| c.last())
            .map(|(s, v)| (*s, v))
    }

    /// Every entry, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.chunks
            .values()
            .flat_map(|c| c.iter().map(|(s, v)| (*s, v)))
    }

    /// Entries from `start` on, in order.
    pub fn range_from(&self, start: u64) -> impl Iterator<Item = (u64, &V)> {
        let from = self.chunk_key(start).unwrap_or(0);
        self.chunks
            .range((Bound::Included(from), Bound::Unbounded))
            .flat_map(|(_, c)| c.iter().map(|(s, v)| (*s, v)))
            .skip_while(move |&(s, _)| s < start)
    }

    /// The last entry below `end`.
    pub fn last_before(&self, end: u64) -> Option<(u64, &V)> {
        self.chunks
            .range(..end)
            .rev()
            .find_map(|(_, c)| c.iter().rev().find(|(s, _)| *s < end))
            .map(|(s, v)| (*s, v))
    }
}

fn new_chunk<V>(seq: u64, value: V) -> Vec<(u64, V)> {
    let mut chunk = Vec::with_capacity(CAP);
    chunk.push((seq, value));
    chunk
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A pseudo-random mix of appends, inserts in the middle and removes gives the same
    /// contents, order and answers as a `BTreeMap`.
    #[test]
    fn behaves_like_a_btreemap() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut ours: SeqMap<u64> = SeqMap::default();
        let mut theirs: BTreeMap<u64, u64> = BTreeMap::new();
        let mut next = 1000;
        for step in 0..20_000u64 {
            match rng.u8(..10) {
                0..=4 => {
                    next += rng.u64(1..3);
                    assert_eq!(ours.insert(next, step), theirs.insert(next, step));
                }
                5 => {
                    let s = rng.u64(..next + 10);
                    assert_eq!(ours.insert(s, step), theirs.insert(s, step));
                }
                _ => {
                    let s = rng.u64(..next + 10);
                    assert_eq!(ours.remove(s), theirs.remove(&s));
                }
            }
            if step % 997 == 0 {
                let probe = rng.u64(..next + 10);
                assert_eq!(ours.get(probe), theirs.get(&probe));
                assert!(
                    ours.range_from(probe)
                        .map(|(s, v)| (s, *v))
                        .eq(theirs.range(probe..).map(|(s, v)| (*s, *v)))
                );
                assert_eq!(
                    ours.last_before(probe).map(|(s, _)| s),
                    theirs.range(..probe).next_back().map(|(s, _)| *s)
                );
            }
        }
        assert_eq!(ours.len(), theirs.len());
        assert!(
            ours.iter()
                .map(|(s, v)| (s, *v))
                .eq(theirs.iter().map(|(s, v)| (*s, *v)))
        );
        assert_eq!(ours.first().map(|(s, _)| s), theirs.keys().next().copied());
        assert_eq!(
            ours.last().map(|(s, _)| s),
            theirs.keys().next_back().copied()
        );
    }

    /// Appends fill chunks completely.
    #[test]
    fn appends_fill_chunks() {
        let mut m: SeqMap<()> = SeqMap::default();
        for s in 1..=(CAP as u64 * 10) {
            m.insert(s, ());
        }
        assert_eq!(m.chunks.len(), 10);
        assert!(m.chunks.values().all(|c| c.len() == CAP));
        for s in 1..=(CAP as u64 * 10) {
            assert_eq!(m.remove(s), Some(()));
        }
        assert!(m.is_empty() && m.chunks.is_empty());
    }
}
