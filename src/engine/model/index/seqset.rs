//! Engine layer, model: an ordered set of sequence numbers, as bits: a queue's ready set.
//!
//! A backlog is mostly ready messages with consecutive sequence numbers, so the set keeps one
//! 64-bit word per block of 64 numbers in a [`SeqMap`] keyed by block: about a quarter of a
//! byte per member when they are dense, at most 16 bytes (one block) when they are sparse. A
//! block whose last member leaves is removed. Iteration is in increasing order.

use super::seqmap::SeqMap;

/// Members per block (bits of a word).
const BLOCK_BITS: u32 = 6;

/// An ordered set of sequence numbers (see the module comment).
#[derive(Debug, Default, Clone)]
pub(crate) struct SeqSet {
    blocks: SeqMap<u64>,
    len: usize,
}

/// A block's key and a member's bit in it.
fn split(seq: u64) -> (u64, u64) {
    (seq >> BLOCK_BITS, 1 << (seq & ((1 << BLOCK_BITS) - 1)))
}

impl SeqSet {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds `seq`; false if it was a member already.
    pub fn insert(&mut self, seq: u64) -> bool {
        let (block, bit) = split(seq);
        if let Some(word) = self.blocks.get_mut(block) {
            if *word & bit != 0 {
                return false;
            }
            *word |= bit;
        } else {
            self.blocks.insert(block, bit);
        }
        self.len += 1;
        true
    }

    /// Removes `seq`; false if it was not a member.
    pub fn remove(&mut self, seq: u64) -> bool {
        let (block, bit) = split(seq);
        let Some(word) = self.blocks.get_mut(block) else {
            return false;
        };
        if *word & bit == 0 {
            return false;
        }
        *word &= !bit;
        if *word == 0 {
            self.blocks.remove(block);
        }
        self.len -= 1;
        true
    }

    /// The smallest member.
    pub fn first(&self) -> Option<u64> {
        self.blocks
            .first()
            .map(|(block, &word)| (block << BLOCK_BITS) | u64::from(word.trailing_zeros()))
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
    }

    /// The members at `ranks` (0 is the smallest member; `ranks` sorted, each below
    /// [`SeqSet::len`]), in increasing order. One walk over the blocks, counting their bits:
    /// a sixty-fourth of walking the members.
    pub fn select(&self, ranks: &[usize]) -> Vec<u64> {
        let mut out = Vec::with_capacity(ranks.len());
        let mut wanted = ranks.iter().copied().peekable();
        let mut before = 0;
        for (block, &word) in self.blocks.iter() {
            let Some(&next) = wanted.peek() else {
                break;
            };
            let count = word.count_ones() as usize;
            if next >= before + count {
                before += count;
                continue;
            }
            let mut rest = word;
            let mut rank = before;
            while rest != 0 {
                let bit = u64::from(rest.trailing_zeros());
                rest &= rest - 1;
                while wanted.next_if_eq(&rank).is_some() {
                    out.push((block << BLOCK_BITS) | bit);
                }
                rank += 1;
            }
            before += count;
        }
        out
    }

    /// The members, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.iter().flat_map(|(block, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let i = u64::from(rest.trailing_zeros());
                    rest &= rest - 1;
                    (block << BLOCK_BITS) | i
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Against a `BTreeSet`, over dense runs, block edges, sparse members and removals.
    #[test]
    fn behaves_like_an_ordered_set() {
        let mut set = SeqSet::default();
        let mut model = BTreeSet::new();
        let mut rng = fastrand::Rng::with_seed(16);
        for step in 0..20_000u64 {
            let seq = match step % 3 {
                0 => step,
                1 => rng.u64(0..5_000),
                _ => u64::MAX - rng.u64(0..200),
            };
            if rng.bool() {
                assert_eq!(set.insert(seq), model.insert(seq), "insert {seq}");
            } else {
                assert_eq!(set.remove(seq), model.remove(&seq), "remove {seq}");
            }
            assert_eq!(set.len(), model.len());
        }
        assert!(set.iter().eq(model.iter().copied()));
        assert_eq!(set.first(), model.first().copied());
        let members: Vec<u64> = model.iter().copied().collect();
        let ranks: Vec<usize> = (0..members.len())
            .step_by(7)
            .chain([members.len() - 1])
            .collect();
        let want: Vec<u64> = ranks.iter().map(|&r| members[r]).collect();
        assert_eq!(set.select(&ranks), want, "members at ranks, across blocks");
        assert_eq!(set.select(&[]), Vec::<u64>::new());
        for seq in model.clone() {
            assert!(set.remove(seq));
        }
        assert_eq!(set.len(), 0);
        assert_eq!(set.iter().next(), None);
        assert_eq!(set.first(), None);
        assert!(set.insert(63) && set.insert(64) && set.insert(0));
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 63, 64]);
        set.clear();
        assert_eq!((set.len(), set.iter().count()), (0, 0));
    }
}
