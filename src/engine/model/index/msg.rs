//! Engine layer, model: one message's index entry, packed: a backlog holds millions of them.
//!
//! An entry is 48 bytes (the map adds 8 for the sequence number). The send time, the phase
//! and the visibility of a message never received share one word: such a message becomes
//! visible a whole number of seconds after its send (its delay, or the queue's after a change
//! of DelaySeconds), so the word keeps that delay instead of a second timestamp. Any other
//! state (a receive, or a stored state that is not of that form) goes to a box of its own
//! ([`Side`]), which most of a backlog never needs.

use std::sync::Arc;

use crate::engine::clock::{MAX_TIME_MS, TIME_MARGIN_MS};
use crate::engine::store::packed::PackedRecord;
use crate::engine::store::record::StateRecord;

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Receivable now.
    Ready = 0,
    /// Not yet visible because of a delay.
    Delayed = 1,
    /// Received and not yet visible again.
    InFlight = 2,
}

/// Bits of [`Msg::word`] below the send time: the phase, then the delay.
const PHASE_BITS: u32 = 2;
const DELAY_BITS: u32 = 16;
const LOW_BITS: u32 = PHASE_BITS + DELAY_BITS;
/// Largest send time a word holds (epoch ms: the year 4199). The index clamps later ones; the
/// engine never sends past [`MAX_TIME_MS`], which leaves room for the times it computes.
pub(super) const MAX_SENT_MS: u64 = u64::MAX >> LOW_BITS;
const _: () = assert!(MAX_TIME_MS + TIME_MARGIN_MS <= MAX_SENT_MS);
/// Largest delay, in seconds, a word holds.
const MAX_DELAY_S: u64 = (1 << DELAY_BITS) - 1;

/// The state of a message beyond "never received, visible `delay` seconds after its send":
/// boxed apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    visible_at_ms: u64,
    first_ms: Option<u64>,
    last_ms: Option<u64>,
    nonce: u64,
    count: u32,
}

/// One message as the index keeps it: its scheduling fields, its state and phase, and its
/// record while that is in memory (`hot`), packed (`store/packed.rs`). A durable engine drops the
/// record once its put is committed and the body cache no longer holds it (`store/cache.rs`); it is
/// then read back from the store when needed. A memory-mode engine keeps every record.
#[derive(Debug)]
pub(crate) struct Msg {
    rec: Option<PackedRecord>,
    /// The state, when the word cannot say it.
    side: Option<Box<Side>>,
    /// FIFO only: the group, shared with the group index.
    group: Option<Arc<String>>,
    /// From the top: epoch ms of the send, the delay in seconds (0 when `side` is set), the
    /// [`Phase`].
    word: u64,
    fp: u64,
}

impl Msg {
    /// An entry (`sent_ms` at most [`MAX_SENT_MS`]).
    pub(super) fn new(
        rec: Option<PackedRecord>,
        group: Option<Arc<String>>,
        sent_ms: u64,
        fp: u64,
        phase: Phase,
        state: StateRecord,
    ) -> Self {
        let mut m = Self {
            rec,
            side: None,
            group,
            word: (sent_ms.min(MAX_SENT_MS) << LOW_BITS) | phase as u64,
            fp,
        };
        m.set_state(state);
        m
    }

    /// What was sent, while it is in memory.
    pub fn record(&self) -> Option<&PackedRecord> {
        self.rec.as_ref()
    }

    /// Drops the record from memory, answering it.
    pub(super) fn take_record(&mut self) -> Option<PackedRecord> {
        self.rec.take()
    }

    fn delay_s(&self) -> u64 {
        (self.word >> PHASE_BITS) & MAX_DELAY_S
    }

    /// When the message is next visible (epoch ms).
    pub fn visible_at(&self) -> u64 {
        self.side.as_deref().map_or_else(
            || self.sent_ms() + self.delay_s() * 1000,
            |s| s.visible_at_ms,
        )
    }

    /// Visibility and receive counters.
    pub fn state(&self) -> StateRecord {
        let s = self.side.as_deref();
        StateRecord {
            visible_at_ms: self.visible_at(),
            receive_count: s.map_or(0, |s| s.count),
            first_receive_ms: s.and_then(|s| s.first_ms),
            last_receive_ms: s.and_then(|s| s.last_ms),
            nonce: s.map_or(0, |s| s.nonce),
        }
    }

    /// Sets visibility and receive counters, in the word when it can hold them.
    pub(super) fn set_state(&mut self, s: StateRecord) {
        let never_received = s.receive_count == 0
            && s.first_receive_ms.is_none()
            && s.last_receive_ms.is_none()
            && s.nonce == 0;
        let after = s.visible_at_ms.checked_sub(self.sent_ms());
        let delay_s = after
            .filter(|ms| ms % 1000 == 0 && ms / 1000 <= MAX_DELAY_S)
            .map(|ms| ms / 1000);
        let keep = self.word & !(MAX_DELAY_S << PHASE_BITS);
        match delay_s {
            Some(d) if never_received => {
                self.word = keep | (d << PHASE_BITS);
                self.side = None;
            }
            _ => {
                self.word = keep;
                self.side = Some(Box::new(Side {
                    visible_at_ms: s.visible_at_ms,
                    first_ms: s.first_receive_ms,
                    last_ms: s.last_receive_ms,
                    nonce: s.nonce,
                    count: s.receive_count,
                }));
            }
        }
    }

    /// Receives so far.
    pub fn receive_count(&self) -> u32 {
        self.side.as_deref().map_or(0, |s| s.count)
    }

    /// Nonce of the latest receive; 0 before the first.
    pub fn nonce(&self) -> u64 {
        self.side.as_deref().map_or(0, |s| s.nonce)
    }

    /// Epoch ms of the send.
    pub fn sent_ms(&self) -> u64 {
        self.word >> LOW_BITS
    }

    /// `receipt::fingerprint` of the message id.
    pub fn fp(&self) -> u64 {
        self.fp
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        match self.word & ((1 << PHASE_BITS) - 1) {
            0 => Phase::Ready,
            1 => Phase::Delayed,
            _ => Phase::InFlight,
        }
    }

    pub(super) fn set_phase(&mut self, phase: Phase) {
        self.word = (self.word & !((1 << PHASE_BITS) - 1)) | phase as u64;
    }

    pub(super) fn group(&self) -> Option<&str> {
        self.group.as_deref().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENT: u64 = 1_764_000_000_000;

    fn msg(state: StateRecord) -> Msg {
        Msg::new(None, None, SENT, 7, Phase::Delayed, state)
    }

    /// The entry a backlog holds per message stays small (docs/storage.md, "Memory").
    #[test]
    fn entries_stay_small() {
        assert_eq!(std::mem::size_of::<Msg>(), 48);
    }

    /// Every state reads back as set, in the word or in the side box, and the other fields
    /// of the word are untouched.
    #[test]
    fn states_round_trip() {
        let initial = |delay_s: u64| StateRecord {
            visible_at_ms: SENT + delay_s * 1000,
            ..StateRecord::default()
        };
        let received = StateRecord {
            visible_at_ms: SENT + 30_000,
            receive_count: 2,
            first_receive_ms: Some(SENT + 1),
            last_receive_ms: Some(SENT + 2),
            nonce: 99,
        };
        let cases = [
            (initial(0), false),
            (initial(900), false),
            (initial(MAX_DELAY_S), false),
            (initial(MAX_DELAY_S + 1), true),
            (
                StateRecord {
                    visible_at_ms: SENT + 1500,
                    ..StateRecord::default()
                },
                true,
            ),
            (
                StateRecord {
                    visible_at_ms: SENT - 1,
                    ..StateRecord::default()
                },
                true,
            ),
            (received, true),
            (initial(5), false),
        ];
        let mut m = msg(initial(0));
        for (state, boxed) in cases {
            m.set_state(state);
            assert_eq!(m.state(), state);
            assert_eq!(m.side.is_some(), boxed, "{state:?}");
            assert_eq!((m.sent_ms(), m.phase(), m.fp()), (SENT, Phase::Delayed, 7));
            m.set_phase(Phase::InFlight);
            assert_eq!(m.state(), state);
            m.set_phase(Phase::Delayed);
        }
        let late = Msg::new(
            None,
            None,
            u64::MAX,
            0,
            Phase::Ready,
            StateRecord::default(),
        );
        assert_eq!((late.sent_ms(), late.phase()), (MAX_SENT_MS, Phase::Ready));
    }
}
