//! Engine layer, top: injected time and identifiers.
//!
//! The engine never reads the system clock or a random generator directly; it asks a [`Clock`]
//! and an [`IdGen`]. Tests and fixtures pass [`ManualClock`] and [`SeededIds`] to make
//! visibility timeouts, delays, retention and ids deterministic. Imports nothing from `wire`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// How far past "now" the engine computes times: the longest is a message's retention (14
/// days), then a visibility timeout (12 hours), a delay (15 minutes), the deduplication and
/// receive-attempt windows (5 minutes each) and a move task's pacing; 30 days covers their sum
/// with room to spare.
pub const TIME_MARGIN_MS: u64 = 30 * 24 * 3600 * 1000;

/// The latest time the engine works with, in epoch milliseconds (4199-10-25, UTC): a message's
/// index entry keeps its send time in 46 bits (`model/index/msg.rs`), and every time the
/// engine computes from "now" stays below that by [`TIME_MARGIN_MS`]. A controllable clock
/// refuses to move past it; past it the engine itself refuses sends (nothing could store
/// them) and counts every other time as this one, so no arithmetic wraps and nothing
/// acknowledged is lost.
pub const MAX_TIME_MS: u64 = (1 << 46) - 1 - TIME_MARGIN_MS;

/// A source of wall-clock time in epoch milliseconds.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that only moves when told to. After moving it, call
/// `Engine::wake_all` so that parked long polls look at the new time.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock stopped at `ms`.
    #[must_use]
    pub fn new(ms: u64) -> Self {
        Self(AtomicU64::new(ms))
    }

    /// Moves the clock forward.
    pub fn advance_ms(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set_ms(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A source of identifiers: message ids, request ids, receipt-handle nonces.
pub trait IdGen: Send + Sync + 'static {
    /// A lower-case UUID v4 string.
    fn uuid(&self) -> String;
    /// A random 64-bit number.
    fn next_u64(&self) -> u64;
}

/// Ids from the operating system's randomness.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

impl IdGen for RandomIds {
    fn uuid(&self) -> String {
        // A v4 UUID from fastrand's per-thread generator (seeded from the OS): ids need to be
        // unique, not secret, and this avoids a getrandom system call per id.
        uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes())
            .into_uuid()
            .to_string()
    }
    fn next_u64(&self) -> u64 {
        fastrand::u64(..)
    }
}

/// Reproducible ids from a seed, for fixtures and tests.
#[derive(Debug)]
pub struct SeededIds(Mutex<fastrand::Rng>);

impl SeededIds {
    /// A generator that always yields the same sequence for the same seed.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(fastrand::Rng::with_seed(seed)))
    }

    fn with<T>(&self, f: impl FnOnce(&mut fastrand::Rng) -> T) -> T {
        let mut rng = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut rng)
    }
}

impl IdGen for SeededIds {
    fn uuid(&self) -> String {
        let bytes = self.with(|r| r.u128(..)).to_le_bytes();
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }
    fn next_u64(&self) -> u64 {
        self.with(|r| r.u64(..))
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::clock::*;

    #[test]
    fn seeded_ids_repeat() {
        let (a, b) = (SeededIds::new(7), SeededIds::new(7));
        assert_eq!(a.uuid(), b.uuid());
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(a.uuid().len(), 36);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1000);
        assert_eq!(c.now_ms(), 1000);
        c.advance_ms(500);
        assert_eq!(c.now_ms(), 1500);
    }
}
