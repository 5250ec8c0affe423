//! Engine layer, model: the in-memory indexes of one queue's messages, rebuilt from redb at
//! start-up.
//!
//! A message is in one of three phases. `Ready` messages sit in `ready`, ordered by sequence
//! number. `Delayed` (never yet visible) and `InFlight` messages sit in `pending`, ordered by
//! the time they become visible; [`MessageIndex::promote`] moves the due ones to `ready`. The
//! counters (`delayed`, `inflight`) are kept exact so that GetQueueAttributes never scans. On
//! FIFO queues the groups and the order they are served in live in `groups.rs` (its
//! comment documents the design), and the scan window in `window.rs`; both are updated
//! in O(log n) per change, so a receive never walks a blocked group. On a standard queue whose
//! messages carry group ids (a fair queue), the tenants live in `tenants.rs`, kept only while
//! such a message is there. Every field is private: a
//! message enters only through
//! [`MessageIndex::insert`], changes phase only through `attach` and `detach`, and leaves only
//! through [`MessageIndex::remove`] or [`MessageIndex::clear`]. Persisting is the caller's job
//! (`model/queue.rs`).

use std::collections::BTreeSet;

use super::groups::Groups;
use super::msg::{MAX_SENT_MS, Msg, Phase};
use super::seqmap::SeqMap;
use super::seqset::SeqSet;
use super::tenants::{Noisy, Tenants};
use super::window::Window;
use crate::engine::model::receipt::fingerprint;
use crate::engine::store::packed::PackedRecord;
use crate::engine::store::record::{MessageRecord, StateRecord};

/// What the index keeps of a message besides its state: enough to schedule it (send time for
/// retention and delays, group for FIFO order) and to check receipt handles (the fingerprint
/// of its id), without its record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head<'a> {
    /// Epoch ms of the send.
    pub sent_ms: u64,
    /// `receipt::fingerprint` of the message id.
    pub fp: u64,
    /// Group id (FIFO order; on a standard queue, its tenant).
    pub group: Option<&'a str>,
}

impl<'a> Head<'a> {
    /// The head fields of a record.
    pub fn of(rec: &'a MessageRecord) -> Self {
        Self {
            sent_ms: rec.sent_ms,
            fp: fingerprint(rec.id.as_bytes()),
            group: rec.extra().group_id.as_deref(),
        }
    }
}

/// The messages of one queue and their indexes.
#[derive(Debug)]
pub(crate) struct MessageIndex {
    /// Whether messages are grouped (FIFO queues).
    fifo: bool,
    /// Next sequence number.
    next_seq: u64,
    /// Messages by sequence number (densely packed: a backlog holds millions).
    msgs: SeqMap<Msg>,
    /// Ready messages, oldest first (a bit per sequence number, `seqset.rs`).
    ready: SeqSet,
    /// (visible at ms, seq) of delayed and in-flight messages.
    pending: BTreeSet<(u64, u64)>,
    /// Count of in-flight messages.
    inflight: usize,
    /// Count of delayed messages.
    delayed: usize,
    /// Send time of the newest message, to keep sent times monotonic per queue.
    last_sent_ms: u64,
    /// (sent ms, seq) of messages that arrived older than a message already here (moved in
    /// from a source queue with their original send time): retention cannot find them by
    /// walking the queue in order.
    late: BTreeSet<(u64, u64)>,
    /// The latest time the index was told about (`insert`, `promote`): the moment a delete
    /// frees a group.
    clock_ms: u64,
    /// FIFO only: message groups and the order they are served in (`groups.rs`).
    groups: Groups,
    /// FIFO only: the messages looked at to find available groups (`window.rs`).
    window: Window,
    /// Standard queues only, while a message with a group id is here: the tenants of a fair
    /// queue (`tenants.rs`).
    tenants: Option<Box<Tenants>>,
    /// Bumped whenever a message may have become receivable, or receivable sooner: a message
    /// (standard) or a group (FIFO) became receivable, or the earliest pending visibility time
    /// moved earlier. Parked long polls need waking exactly when this changes.
    events: u64,
}

impl MessageIndex {
    /// An empty index; `fifo` groups messages by MessageGroupId.
    pub fn new(fifo: bool) -> Self {
        Self {
            fifo,
            next_seq: 1,
            msgs: SeqMap::default(),
            ready: SeqSet::default(),
            pending: BTreeSet::new(),
            inflight: 0,
            delayed: 0,
            last_sent_ms: 0,
            late: BTreeSet::new(),
            clock_ms: 0,
            groups: Groups::default(),
            window: Window::default(),
            tenants: None,
            events: 0,
        }
    }

    /// The sequence number the next new message gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Makes new messages get sequence numbers from `seq` on (a purge still being carried out
    /// on disk removes everything below it).
    pub fn reserve_seqs_below(&mut self, seq: u64) {
        self.next_seq = self.next_seq.max(seq);
    }

    /// Send time of the newest message.
    pub fn last_sent_ms(&self) -> u64 {
        self.last_sent_ms
    }

    /// Messages that are visible now (on a FIFO queue, not necessarily receivable: a visible
    /// message behind an invisible head waits).
    pub fn ready_count(&self) -> usize {
        self.ready.len()
    }

    /// Messages waiting out a delay.
    pub fn delayed_count(&self) -> usize {
        self.delayed
    }

    /// Messages in flight.
    pub fn inflight_count(&self) -> usize {
        self.inflight
    }

    /// All messages.
    pub fn len(&self) -> usize {
        self.msgs.len()
    }

    /// The wake-up counter: it changes whenever a message may have become receivable, or
    /// receivable sooner (see the field).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// One message.
    pub fn get(&self, seq: u64) -> Option<&Msg> {
        self.msgs.get(seq)
    }

    /// The oldest-sent message among those that arrived out of send order.
    pub fn oldest_late(&self) -> Option<(u64, u64)> {
        self.late.first().copied()
    }

    /// The oldest message.
    pub fn first(&self) -> Option<(u64, &Msg)> {
        self.msgs.first()
    }

    /// Messages with sequence numbers from `start` on, in order.
    pub fn iter_from(&self, start: u64) -> impl Iterator<Item = (u64, &Msg)> {
        self.msgs.range_from(start)
    }

    /// Sequence numbers of ready messages, oldest first.
    pub fn ready_seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.ready.iter()
    }

    /// When the next pending message becomes visible, if any.
    pub fn next_visible_at(&self) -> Option<u64> {
        self.pending.first().map(|&(at, _)| at)
    }

    /// FIFO: looks for available groups only among the first `size` messages (`None`: all).
    pub fn set_window(&mut self, size: Option<usize>) {
        if self.fifo {
            self.window.resize(size, &self.msgs);
        }
    }

    /// Adds a message with its record in memory (`packed`: `rec` packed), placing it by its
    /// visibility time.
    pub fn insert(
        &mut self,
        seq: u64,
        rec: &MessageRecord,
        packed: PackedRecord,
        state: StateRecord,
        now: u64,
    ) {
        self.insert_entry(seq, Head::of(rec), Some(packed), state, now);
    }

    /// Adds a message (new or loaded; `rec` is `None` for one whose record stays on disk),
    /// placing it by its visibility time. Messages due by `now` are promoted first, so that
    /// groups they free take their places before this one.
    pub fn insert_entry(
        &mut self,
        seq: u64,
        head: Head<'_>,
        rec: Option<PackedRecord>,
        state: StateRecord,
        now: u64,
    ) {
        self.promote(now);
        let before = self.next_visible_at();
        let phase = if state.visible_at_ms <= now {
            Phase::Ready
        } else if state.receive_count == 0 {
            Phase::Delayed
        } else {
            Phase::InFlight
        };
        let sent_ms = head.sent_ms.min(MAX_SENT_MS);
        if sent_ms < self.last_sent_ms {
            self.late.insert((sent_ms, seq));
        }
        self.last_sent_ms = self.last_sent_ms.max(sent_ms);
        self.next_seq = self.next_seq.max(seq + 1);
        let group = match head.group {
            Some(g) if self.fifo => {
                self.groups.add(g, seq);
                self.groups.interned(g)
            }
            Some(g) => {
                // The first message with a group id makes this a fair queue: every ready
                // message so far has none.
                let ready = &self.ready;
                let tenants = self
                    .tenants
                    .get_or_insert_with(|| Box::new(Tenants::new(ready)));
                Some(tenants.add(g))
            }
            None => None,
        };
        let m = Msg::new(rec, group, sent_ms, head.fp, phase, state);
        self.msgs.insert(seq, m);
        if self.fifo {
            self.window.inserted(seq, &self.msgs);
        }
        self.attach(seq, phase);
        self.note_sooner(before);
    }

    /// Drops a message's record from memory (it is on disk); false when there is no such
    /// message or its record was not in memory.
    pub fn make_cold(&mut self, seq: u64) -> bool {
        self.msgs
            .get_mut(seq)
            .is_some_and(|m| m.take_record().is_some())
    }

    /// Puts a message into the index of its phase (the message must be in `msgs`), and
    /// re-reads its group's availability when it is the group's head.
    fn attach(&mut self, seq: u64, phase: Phase) {
        let Some(m) = self.msgs.get_mut(seq) else {
            return;
        };
        m.set_phase(phase);
        let at = m.visible_at();
        match phase {
            Phase::Ready => {
                self.ready.insert(seq);
                if !self.fifo {
                    self.events += 1;
                }
            }
            Phase::Delayed => {
                self.delayed += 1;
                self.pending.insert((at, seq));
            }
            Phase::InFlight => {
                self.inflight += 1;
                self.pending.insert((at, seq));
            }
        }
        if let Some(t) = self.tenants.as_deref_mut() {
            t.attach(self.msgs.get(seq).and_then(Msg::group), seq, phase);
        }
        if self.fifo {
            // A head that turns visible does so at its visibility time.
            self.refresh_group(seq, at);
        }
    }

    /// Bumps `events` when the earliest pending visibility time is earlier than `before` (the
    /// earliest before a change): parked polls must shorten their sleep.
    fn note_sooner(&mut self, before: Option<u64>) {
        if let Some(first) = self.next_visible_at()
            && before.is_none_or(|b| first < b)
        {
            self.events += 1;
        }
    }

    /// Re-reads the availability of the group of message `seq` if `seq` is its head; a group
    /// that becomes available takes its place as of `since`.
    fn refresh_group(&mut self, seq: u64, since: u64) {
        let msgs = &self.msgs;
        let Some(g) = msgs.get(seq).and_then(Msg::group) else {
            return;
        };
        if self.groups.is_head(g, seq) && self.groups.refresh(g, since, |s| visible(msgs, s)) {
            self.events += 1;
        }
    }

    /// Takes a message out of the index of its phase. Always followed by `attach` or a removal,
    /// which re-read the group.
    fn detach(&mut self, seq: u64) {
        let Some(m) = self.msgs.get(seq) else {
            return;
        };
        let at = m.visible_at();
        if let Some(t) = self.tenants.as_deref_mut() {
            t.detach(m.group(), seq, m.phase());
        }
        match m.phase() {
            Phase::Ready => {
                self.ready.remove(seq);
            }
            Phase::Delayed => {
                self.delayed -= 1;
                self.pending.remove(&(at, seq));
            }
            Phase::InFlight => {
                self.inflight -= 1;
                self.pending.remove(&(at, seq));
            }
        }
    }

    /// Removes a message from every index. A group whose head this was is re-read: if a
    /// visible message is its head now, it goes to the back of the order (§6.9).
    pub fn remove(&mut self, seq: u64) -> Option<Msg> {
        self.detach(seq);
        let m = self.msgs.remove(seq)?;
        self.late.remove(&(m.sent_ms(), seq));
        if let Some(t) = self.tenants.as_deref_mut()
            && let Some(g) = m.group()
            && t.remove(g)
        {
            // No group id is left: back to a plain standard queue.
            self.tenants = None;
        }
        if self.fifo {
            self.window.removed(seq, &self.msgs);
        }
        if self.fifo
            && let Some(g) = m.group()
            && self.groups.remove(g, seq)
        {
            let msgs = &self.msgs;
            if self.groups.refresh(g, self.clock_ms, |s| visible(msgs, s)) {
                self.events += 1;
            }
        }
        Some(m)
    }

    /// Drops every message.
    pub fn clear(&mut self) {
        self.msgs.clear();
        self.late.clear();
        self.groups.clear();
        self.window.clear();
        self.tenants = None;
        self.ready.clear();
        self.pending.clear();
        self.inflight = 0;
        self.delayed = 0;
    }

    /// Makes a message invisible until `visible_at`, as a receive or a visibility change does,
    /// and lets `change` update its state. `None` when there is no such message.
    pub fn hide(
        &mut self,
        seq: u64,
        visible_at: u64,
        change: impl FnOnce(&mut StateRecord),
    ) -> Option<&Msg> {
        if !self.msgs.contains(seq) {
            return None;
        }
        let before = self.next_visible_at();
        self.detach(seq);
        if let Some(m) = self.msgs.get_mut(seq) {
            let mut state = m.state();
            state.visible_at_ms = visible_at;
            change(&mut state);
            m.set_state(state);
        }
        self.attach(seq, Phase::InFlight);
        self.note_sooner(before);
        self.msgs.get(seq)
    }

    /// Re-places every never-received message at its send time plus `delay_ms`.
    pub fn redelay(&mut self, delay_ms: u64, now: u64) {
        self.clock_ms = self.clock_ms.max(now);
        let before = self.next_visible_at();
        let waiting: Vec<u64> = self
            .msgs
            .iter()
            .filter(|(_, m)| m.receive_count() == 0 && m.phase() != Phase::InFlight)
            .map(|(s, _)| s)
            .collect();
        for seq in waiting {
            self.detach(seq);
            let Some(m) = self.msgs.get_mut(seq) else {
                continue;
            };
            let mut state = m.state();
            state.visible_at_ms = m.sent_ms() + delay_ms;
            m.set_state(state);
            let phase = if state.visible_at_ms <= now {
                Phase::Ready
            } else {
                Phase::Delayed
            };
            self.attach(seq, phase);
        }
        self.note_sooner(before);
    }

    /// Moves every delayed or in-flight message whose time has come to `ready`.
    pub fn promote(&mut self, now: u64) {
        self.clock_ms = self.clock_ms.max(now);
        while let Some(&(at, seq)) = self.pending.first() {
            if at > now {
                break;
            }
            self.detach(seq);
            self.attach(seq, Phase::Ready);
        }
    }

    /// Makes the given messages visible, in this order, if their time has come (a receive
    /// with VisibilityTimeout=0 hands messages out visible: their groups go to the back of
    /// the order in the order they were served).
    pub fn reveal(&mut self, seqs: &[u64], now: u64) {
        self.clock_ms = self.clock_ms.max(now);
        for &seq in seqs {
            if self
                .msgs
                .get(seq)
                .is_some_and(|m| m.phase() != Phase::Ready && m.visible_at() <= now)
            {
                self.detach(seq);
                self.attach(seq, Phase::Ready);
            }
        }
    }

    /// Up to `max` receivable messages of a standard queue, chosen uniformly at random (seeded
    /// by `seed`), in random order: `max` distinct ranks drawn by Floyd's method, then the
    /// members at those ranks in one walk over the ready set's blocks. (Reservoir sampling
    /// walked every ready message on each receive.)
    pub fn pick_random(&self, max: usize, seed: u64) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let n = self.ready.len();
        let mut ranks: Vec<usize> = Vec::with_capacity(max.min(n));
        for j in n - max.min(n)..n {
            let r = rng.usize(..=j);
            ranks.push(if ranks.contains(&r) { j } else { r });
        }
        ranks.sort_unstable();
        let mut out = self.ready.select(&ranks);
        rng.shuffle(&mut out);
        out
    }

    /// FIFO: whether message `seq` belongs to a group that is not available (its head is in
    /// flight or delayed), so that a receive would not serve it now (§6.9).
    pub fn in_blocked_group(&self, seq: u64) -> bool {
        self.fifo
            && self
                .msgs
                .get(seq)
                .and_then(Msg::group)
                .and_then(|g| self.groups.head(g))
                .is_some_and(|head| !visible(&self.msgs, head))
    }

    /// Standard queues: the tenants that are noisy now, to serve last in a receive (§6.17);
    /// `None` when there is none, always on a queue without group ids.
    pub fn noisy(&self) -> Option<Noisy> {
        self.tenants.as_deref()?.noisy(self.inflight)
    }

    /// Standard queues: up to `max` ready messages of the quiet tenants, oldest first, then of
    /// the `noisy` ones (§6.17). Without tenants, as [`MessageIndex::pick`].
    pub fn pick_fair(&self, max: usize, noisy: &Noisy) -> Vec<u64> {
        match self.tenants.as_deref() {
            Some(t) if !self.fifo => t.pick(max, noisy),
            _ => self.pick(max),
        }
    }

    /// Up to `max` receivable messages. Without groups: the oldest ready ones. With groups
    /// (FIFO): the available groups in the order they became available, from each the run of
    /// visible messages starting at its head, within the scan window (§6.9, G-27).
    pub fn pick(&self, max: usize) -> Vec<u64> {
        if !self.fifo {
            return self.ready.iter().take(max).collect();
        }
        self.groups
            .pick(max, |s| visible(&self.msgs, s), |s| self.window.contains(s))
    }
}

/// Whether message `seq` is visible now.
fn visible(msgs: &SeqMap<Msg>, seq: u64) -> bool {
    msgs.get(seq).is_some_and(|m| m.phase() == Phase::Ready)
}

#[cfg(test)]
mod tests;
