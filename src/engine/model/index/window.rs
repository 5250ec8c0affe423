//! Engine layer, model: the scan window of a FIFO queue: only its first N messages (in queue order,
//! in flight or not) are looked at to find available message groups, as AWS does with its
//! first 120,000 (docs/protocol.md §6.8, §6.9).
//!
//! The window is kept as its *horizon*: the sequence number of the N-th message, or of the last
//! one when there are fewer. Inserting or removing a message moves the horizon by at most one
//! key, found in O(log n); only resizing the window walks the messages.

use super::seqmap::SeqMap;

/// The first `size` messages of a queue; `None` is unbounded.
#[derive(Debug, Default)]
pub(super) struct Window {
    size: Option<usize>,
    /// Sequence number of the `size`-th message (or of the last one); 0 when there is none.
    horizon: u64,
}

impl Window {
    /// Whether message `seq` is inside the window.
    pub fn contains(&self, seq: u64) -> bool {
        self.size.is_none() || seq <= self.horizon
    }

    /// Sets the window's size, recomputing the horizon over `msgs` when it changes.
    pub fn resize<V>(&mut self, size: Option<usize>, msgs: &SeqMap<V>) {
        if self.size == size {
            return;
        }
        self.size = size;
        self.horizon = match size {
            None | Some(0) => 0,
            Some(n) => msgs
                .iter()
                .nth(n - 1)
                .or_else(|| msgs.last())
                .map_or(0, |(k, _)| k),
        };
    }

    /// Notes that `seq` was just added to `msgs`.
    pub fn inserted<V>(&mut self, seq: u64, msgs: &SeqMap<V>) {
        let Some(n) = self.size else {
            return;
        };
        if msgs.len() <= n {
            self.horizon = self.horizon.max(seq);
        } else if seq < self.horizon {
            // The old horizon is pushed out; the key before it is the N-th now.
            self.horizon = msgs.last_before(self.horizon).map_or(0, |(k, _)| k);
        }
    }

    /// Notes that `seq` was just removed from `msgs`.
    pub fn removed<V>(&mut self, seq: u64, msgs: &SeqMap<V>) {
        let Some(n) = self.size else {
            return;
        };
        if seq > self.horizon {
            return;
        }
        self.horizon = if msgs.len() >= n {
            // The first message past the old horizon moves in.
            msgs.range_from(self.horizon + 1)
                .next()
                .map_or(0, |(k, _)| k)
        } else {
            msgs.last().map_or(0, |(k, _)| k)
        };
    }

    /// Forgets every message.
    pub fn clear(&mut self) {
        self.horizon = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The horizon after a pseudo-random mix of inserts and removes equals the one computed
    /// from scratch.
    #[test]
    fn horizon_tracks_the_nth_message() {
        for size in [0, 1, 3, 7] {
            let mut msgs: SeqMap<()> = SeqMap::default();
            let mut w = Window::default();
            w.resize(Some(size), &msgs);
            let mut rng = fastrand::Rng::with_seed(size as u64);
            for step in 0..2000 {
                let seq = rng.u64(1..40);
                if rng.bool() {
                    if msgs.insert(seq, ()).is_none() {
                        w.inserted(seq, &msgs);
                    }
                } else if msgs.remove(seq).is_some() {
                    w.removed(seq, &msgs);
                }
                let mut fresh = Window::default();
                fresh.resize(Some(size), &msgs);
                assert_eq!(w.horizon, fresh.horizon, "size {size}, step {step}");
                let inside = msgs.iter().filter(|&(k, ())| w.contains(k)).count();
                assert_eq!(inside, msgs.len().min(size), "size {size}, step {step}");
            }
        }
    }
}
