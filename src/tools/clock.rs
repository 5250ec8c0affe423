//! Tools layer: the clock users can move. It wraps the engine's base clock (the system clock,
//! or a test's `ManualClock`) with an offset and a freeze, so a test of an SQS consumer can
//! jump over visibility timeouts, delays, retention and deduplication windows instead of
//! waiting for them. After every change the server wakes parked long polls and move tasks so
//! they look at the new time at once.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::engine::{Clock, MAX_TIME_MS};

/// A move of the clock that would take it past [`MAX_TIME_MS`], the latest time the engine
/// can store: refused, and the clock left where it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastTimeRange {
    /// Where the clock would have stood, epoch milliseconds (saturated).
    pub requested_ms: u64,
    /// How far the clock could still move, in milliseconds.
    pub room_ms: u64,
}

impl std::fmt::Display for PastTimeRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the clock would stand at {} ms since the epoch, past the latest time localsqs can store: {MAX_TIME_MS} ms (October 4199); it can move at most {} ms ({} s) further",
            self.requested_ms,
            self.room_ms,
            self.room_ms / 1000
        )
    }
}

impl std::error::Error for PastTimeRange {}

/// What `GET /_localsqs/clock` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClockState {
    /// The time the server uses now, epoch milliseconds.
    pub now_ms: u64,
    /// How far that is ahead of (or, after a freeze and resume, behind) the base clock.
    pub offset_ms: i64,
    /// Whether time stands still.
    pub frozen: bool,
}

#[derive(Debug, Default)]
struct Control {
    offset_ms: i64,
    frozen_at: Option<u64>,
}

/// A clock that runs with its base, ahead of it by an offset, or not at all.
pub struct ControlledClock {
    base: Arc<dyn Clock>,
    control: Mutex<Control>,
}

impl std::fmt::Debug for ControlledClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlledClock")
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// Whether `from + ms` stays within the engine's range.
fn within_range(from: u64, ms: u64) -> Result<(), PastTimeRange> {
    let to = from.saturating_add(ms);
    if to > MAX_TIME_MS {
        return Err(PastTimeRange {
            requested_ms: to,
            room_ms: MAX_TIME_MS.saturating_sub(from),
        });
    }
    Ok(())
}

fn shifted(base: u64, offset: i64) -> u64 {
    base.saturating_add_signed(offset)
}

impl ControlledClock {
    /// Runs with `base` until told otherwise.
    #[must_use]
    pub fn new(base: Arc<dyn Clock>) -> Self {
        Self {
            base,
            control: Mutex::new(Control::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now_locked(&self, c: &Control) -> u64 {
        c.frozen_at
            .unwrap_or_else(|| shifted(self.base.now_ms(), c.offset_ms))
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> ClockState {
        let c = self.lock();
        ClockState {
            now_ms: self.now_locked(&c),
            offset_ms: c.frozen_at.map_or(c.offset_ms, |f| {
                i64::try_from(f).unwrap_or(i64::MAX)
                    - i64::try_from(self.base.now_ms()).unwrap_or(i64::MAX)
            }),
            frozen: c.frozen_at.is_some(),
        }
    }

    /// Whether time can move `ms` milliseconds forward from now (from the base clock's time
    /// when `after_reset`) without passing [`MAX_TIME_MS`].
    ///
    /// # Errors
    /// [`PastTimeRange`] when it cannot.
    pub fn check_advance(&self, ms: u64, after_reset: bool) -> Result<(), PastTimeRange> {
        let from = if after_reset {
            self.base.now_ms()
        } else {
            self.now_ms()
        };
        within_range(from, ms)
    }

    /// Moves time forward by `ms` milliseconds, frozen or not; refused (and nothing changed)
    /// when that would pass [`MAX_TIME_MS`].
    ///
    /// # Errors
    /// [`PastTimeRange`] when the move would pass the range the engine stores.
    pub fn advance_ms(&self, ms: u64) -> Result<(), PastTimeRange> {
        let mut c = self.lock();
        within_range(self.now_locked(&c), ms)?;
        match &mut c.frozen_at {
            Some(f) => *f = f.saturating_add(ms),
            None => {
                c.offset_ms = c
                    .offset_ms
                    .saturating_add(i64::try_from(ms).unwrap_or(i64::MAX));
            }
        }
        Ok(())
    }

    /// Stops time where it is.
    pub fn freeze(&self) {
        let mut c = self.lock();
        if c.frozen_at.is_none() {
            c.frozen_at = Some(self.now_locked(&c));
        }
    }

    /// Lets time run again from where it stood.
    pub fn resume(&self) {
        let mut c = self.lock();
        if let Some(f) = c.frozen_at.take() {
            let base = i64::try_from(self.base.now_ms()).unwrap_or(i64::MAX);
            c.offset_ms = i64::try_from(f).unwrap_or(i64::MAX) - base;
        }
    }

    /// Returns to the base clock's time, running.
    pub fn reset(&self) {
        *self.lock() = Control::default();
    }
}

impl Clock for ControlledClock {
    fn now_ms(&self) -> u64 {
        let c = self.lock();
        self.now_locked(&c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ManualClock;

    fn clock() -> (Arc<ManualClock>, ControlledClock) {
        let base = Arc::new(ManualClock::new(1_000_000));
        let c = ControlledClock::new(base.clone());
        (base, c)
    }

    #[test]
    fn advance_moves_now_and_the_offset() {
        let (base, c) = clock();
        c.advance_ms(30_000).expect("in range");
        assert_eq!(c.now_ms(), 1_030_000);
        base.advance_ms(5);
        assert_eq!(
            c.state(),
            ClockState {
                now_ms: 1_030_005,
                offset_ms: 30_000,
                frozen: false
            }
        );
    }

    #[test]
    fn freeze_stops_time_advance_still_moves_it_resume_runs_from_there() {
        let (base, c) = clock();
        c.freeze();
        base.advance_ms(10_000);
        assert_eq!(c.now_ms(), 1_000_000, "frozen");
        c.advance_ms(2_000).expect("in range");
        assert_eq!(c.now_ms(), 1_002_000, "advance works while frozen");
        c.resume();
        assert_eq!(c.now_ms(), 1_002_000, "resumes where it stood");
        base.advance_ms(1);
        assert_eq!(c.now_ms(), 1_002_001, "and runs again");
        assert_eq!(c.state().offset_ms, -8_000);
    }

    /// Finding 7 of issue 29: past 2^46 ms a send was acknowledged and lost. The clock
    /// refuses to go there, frozen or not, and stays where it was.
    #[test]
    fn advance_refuses_to_pass_the_engine_range() {
        let (_, c) = clock();
        let room = MAX_TIME_MS - 1_000_000;
        c.advance_ms(room).expect("up to the limit");
        assert_eq!(c.now_ms(), MAX_TIME_MS);
        let e = c.advance_ms(1).expect_err("one past it");
        assert_eq!((e.requested_ms, e.room_ms), (MAX_TIME_MS + 1, 0));
        assert!(e.to_string().contains(&MAX_TIME_MS.to_string()), "{e}");
        assert_eq!(c.now_ms(), MAX_TIME_MS, "unchanged");
        c.freeze();
        assert!(c.advance_ms(u64::MAX).is_err(), "frozen too");
        assert!(c.check_advance(room, true).is_ok(), "from the base clock");
        assert!(c.check_advance(room + 1, true).is_err());
        assert_eq!(c.now_ms(), MAX_TIME_MS);
    }

    #[test]
    fn reset_returns_to_the_base_clock() {
        let (_, c) = clock();
        c.advance_ms(99_000).expect("in range");
        c.freeze();
        c.reset();
        assert_eq!(
            c.state(),
            ClockState {
                now_ms: 1_000_000,
                offset_ms: 0,
                frozen: false
            }
        );
    }
}
