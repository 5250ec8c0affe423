//! Engine layer, model: the long polls parked now, oldest first, so that the oldest can be
//! answered early (with no messages) when parked polls hold every connection slot
//! (`Engine::release_oldest_polls`).
//!
//! A poll enters the list once, when it first parks, and keeps its place while it wakes and
//! parks again; it leaves when it is released or when it ends (its [`ParkSlot`] is then marked
//! done and dropped from the list lazily, at a later park or release), so ending costs two
//! atomic stores and no lock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use atomic_waker::AtomicWaker;

/// One parked poll's place in the list.
#[derive(Debug, Default)]
pub(crate) struct ParkSlot {
    released: AtomicBool,
    done: AtomicBool,
    waker: AtomicWaker,
}

impl ParkSlot {
    /// Ready once the poll has been released; registers the task to be woken then.
    pub fn poll_released(&self, cx: &Context<'_>) -> Poll<()> {
        if self.released.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        self.waker.register(cx.waker());
        if self.released.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Whether the poll has been released.
    #[cfg(test)]
    pub fn released(&self) -> bool {
        self.released.load(Ordering::Acquire)
    }
}

/// The parked polls, oldest first (some of them ended already), and how many are parked.
#[derive(Debug, Default)]
pub(crate) struct Polls {
    order: VecDeque<Arc<ParkSlot>>,
    live: Arc<AtomicUsize>,
}

/// A poll's hold on its place: dropping it (the poll answered, failed, or its client went
/// away) ends the place.
#[derive(Debug)]
pub(crate) struct Parked {
    slot: Arc<ParkSlot>,
    live: Arc<AtomicUsize>,
}

impl Parked {
    /// The place, to wait on.
    pub fn slot(&self) -> &ParkSlot {
        &self.slot
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.slot.done.store(true, Ordering::Release);
        self.live.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Polls {
    /// Parks a poll at the back (under the engine lock, which the parking poll holds anyway).
    pub fn park(&mut self) -> Parked {
        self.prune();
        let slot = Arc::new(ParkSlot::default());
        self.order.push_back(Arc::clone(&slot));
        self.live.fetch_add(1, Ordering::AcqRel);
        Parked {
            slot,
            live: Arc::clone(&self.live),
        }
    }

    /// The count of parked polls, shared (the engine reads it without the lock).
    pub fn counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.live)
    }

    /// How many polls are parked now.
    pub fn count(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// Releases up to `n` of the oldest parked polls: each wakes and answers with no messages.
    /// Answers how many were released.
    pub fn release_oldest(&mut self, n: usize) -> usize {
        let mut released = 0;
        while released < n {
            let Some(slot) = self.order.pop_front() else {
                break;
            };
            if slot.done.load(Ordering::Acquire) {
                continue;
            }
            slot.released.store(true, Ordering::Release);
            slot.waker.wake();
            released += 1;
        }
        released
    }

    /// Drops ended places: those at the front at once, the others once they are most of the
    /// list (amortized: each place is dropped once).
    fn prune(&mut self) {
        while self
            .order
            .front()
            .is_some_and(|s| s.done.load(Ordering::Acquire))
        {
            self.order.pop_front();
        }
        if self.order.len() > 64 && self.order.len() > 2 * self.count() {
            self.order.retain(|s| !s.done.load(Ordering::Acquire));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_live_polls_are_released_and_ended_ones_skipped() {
        let mut polls = Polls::default();
        let a = polls.park();
        let b = polls.park();
        let c = polls.park();
        let d = polls.park();
        assert_eq!(polls.count(), 4);
        drop(b);
        assert_eq!(polls.count(), 3);
        assert_eq!(polls.release_oldest(2), 2, "a and c; b had ended");
        assert!(a.slot().released() && c.slot().released() && !d.slot().released());
        drop((a, c));
        assert_eq!(polls.count(), 1);
        assert_eq!(polls.release_oldest(5), 1, "only d is left");
        assert!(d.slot().released());
        drop(d);
        assert_eq!((polls.count(), polls.release_oldest(1)), (0, 0));
        assert!(polls.order.is_empty());
    }

    #[test]
    fn ended_places_do_not_pile_up() {
        let mut polls = Polls::default();
        let keep = polls.park();
        for _ in 0..1000 {
            drop(polls.park());
        }
        assert!(polls.order.len() <= 130, "{}", polls.order.len());
        assert_eq!(polls.count(), 1);
        drop(keep);
    }
}
