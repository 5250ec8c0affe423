//! Engine layer: the in-memory indexes of one queue's messages, rebuilt from redb at start-up.
//!
//! A message is in one of three phases. `Ready` messages sit in `ready`, ordered by sequence
//! number. `Delayed` (never yet visible) and `InFlight` messages sit in `pending`, ordered by
//! the time they become visible; [`MessageIndex::promote`] moves the due ones to `ready`. The
//! counters (`delayed`, `inflight`, and each FIFO group's `inflight`) are kept exact so that
//! GetQueueAttributes never scans. Every field is private: a message enters only through
//! [`MessageIndex::insert`], changes phase only through `attach` and `detach`, and leaves only
//! through [`MessageIndex::remove`] or [`MessageIndex::clear`]. Persisting is the caller's job
//! (`queue_state.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::record::{MessageRecord, StateRecord};

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Receivable now.
    Ready,
    /// Not yet visible because of a delay.
    Delayed,
    /// Received and not yet visible again.
    InFlight,
}

/// One message: what was sent, its visibility and counters, and its phase.
#[derive(Debug)]
pub(super) struct Msg {
    rec: Arc<MessageRecord>,
    state: StateRecord,
    phase: Phase,
}

impl Msg {
    /// What was sent.
    pub fn record(&self) -> &MessageRecord {
        &self.rec
    }

    /// Visibility and receive counters.
    pub fn state(&self) -> &StateRecord {
        &self.state
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The record and state of a message taken out of its queue.
    pub fn into_parts(self) -> (Arc<MessageRecord>, StateRecord) {
        (self.rec, self.state)
    }

    fn group(&self) -> Option<&str> {
        self.rec.extra().group_id.as_deref()
    }
}

/// The messages of one FIFO message group.
#[derive(Debug, Default)]
struct Group {
    /// Sequence numbers of the group's messages, oldest first.
    seqs: BTreeSet<u64>,
    /// How many of them are in flight; the group is blocked while this is above 0 (§6.9).
    inflight: usize,
}

/// The messages of one queue and their indexes.
#[derive(Debug)]
pub(super) struct MessageIndex {
    /// Whether messages are grouped (FIFO queues).
    fifo: bool,
    /// Next sequence number.
    next_seq: u64,
    /// Messages by sequence number.
    msgs: BTreeMap<u64, Msg>,
    /// Ready messages, oldest first.
    ready: BTreeSet<u64>,
    /// (visible at ms, seq) of delayed and in-flight messages.
    pending: BTreeSet<(u64, u64)>,
    /// Count of in-flight messages.
    inflight: usize,
    /// Count of delayed messages.
    delayed: usize,
    /// Send time of the newest message, to keep sent times monotonic per queue.
    last_sent_ms: u64,
    /// FIFO only: message groups with at least one message.
    groups: HashMap<String, Group>,
}

impl MessageIndex {
    /// An empty index; `fifo` groups messages by MessageGroupId.
    pub fn new(fifo: bool) -> Self {
        Self {
            fifo,
            next_seq: 1,
            msgs: BTreeMap::new(),
            ready: BTreeSet::new(),
            pending: BTreeSet::new(),
            inflight: 0,
            delayed: 0,
            last_sent_ms: 0,
            groups: HashMap::new(),
        }
    }

    /// The sequence number the next new message gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Send time of the newest message.
    pub fn last_sent_ms(&self) -> u64 {
        self.last_sent_ms
    }

    /// Messages that are receivable now.
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

    /// One message.
    pub fn get(&self, seq: u64) -> Option<&Msg> {
        self.msgs.get(&seq)
    }

    /// The oldest message.
    pub fn first(&self) -> Option<(u64, &Msg)> {
        self.msgs.first_key_value().map(|(s, m)| (*s, m))
    }

    /// All messages in queue order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Msg)> {
        self.msgs.iter().map(|(s, m)| (*s, m))
    }

    /// Sequence numbers of ready messages, oldest first.
    pub fn ready_seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.ready.iter().copied()
    }

    /// When the next pending message becomes visible, if any.
    pub fn next_visible_at(&self) -> Option<u64> {
        self.pending.first().map(|&(at, _)| at)
    }

    /// Adds a message (new or loaded), placing it by its visibility time.
    pub fn insert(&mut self, seq: u64, rec: Arc<MessageRecord>, state: StateRecord, now: u64) {
        let phase = if state.visible_at_ms <= now {
            Phase::Ready
        } else if state.receive_count == 0 {
            Phase::Delayed
        } else {
            Phase::InFlight
        };
        self.last_sent_ms = self.last_sent_ms.max(rec.sent_ms);
        self.next_seq = self.next_seq.max(seq + 1);
        let m = Msg { rec, state, phase };
        if self.fifo
            && let Some(g) = m.group()
        {
            self.groups
                .entry(g.to_owned())
                .or_default()
                .seqs
                .insert(seq);
        }
        self.msgs.insert(seq, m);
        self.attach(seq, phase);
    }

    /// Puts a message into the index of its phase (the message must be in `msgs`).
    fn attach(&mut self, seq: u64, phase: Phase) {
        let Some(m) = self.msgs.get_mut(&seq) else {
            return;
        };
        m.phase = phase;
        let at = m.state.visible_at_ms;
        match phase {
            Phase::Ready => {
                self.ready.insert(seq);
            }
            Phase::Delayed => {
                self.delayed += 1;
                self.pending.insert((at, seq));
            }
            Phase::InFlight => {
                self.inflight += 1;
                self.pending.insert((at, seq));
                if let Some(g) = m.group().and_then(|g| self.groups.get_mut(g)) {
                    g.inflight += 1;
                }
            }
        }
    }

    /// Takes a message out of the index of its phase.
    fn detach(&mut self, seq: u64) {
        let Some(m) = self.msgs.get(&seq) else {
            return;
        };
        let at = m.state.visible_at_ms;
        match m.phase {
            Phase::Ready => {
                self.ready.remove(&seq);
            }
            Phase::Delayed => {
                self.delayed -= 1;
                self.pending.remove(&(at, seq));
            }
            Phase::InFlight => {
                self.inflight -= 1;
                self.pending.remove(&(at, seq));
                if let Some(g) = m.group().and_then(|g| self.groups.get_mut(g)) {
                    g.inflight -= 1;
                }
            }
        }
    }

    /// Removes a message from every index.
    pub fn remove(&mut self, seq: u64) -> Option<Msg> {
        self.detach(seq);
        let m = self.msgs.remove(&seq)?;
        if let Some(g) = m.group()
            && let Some(group) = self.groups.get_mut(g)
        {
            group.seqs.remove(&seq);
            if group.seqs.is_empty() {
                self.groups.remove(g);
            }
        }
        Some(m)
    }

    /// Drops every message.
    pub fn clear(&mut self) {
        self.msgs.clear();
        self.groups.clear();
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
        if !self.msgs.contains_key(&seq) {
            return None;
        }
        self.detach(seq);
        if let Some(m) = self.msgs.get_mut(&seq) {
            m.state.visible_at_ms = visible_at;
            change(&mut m.state);
        }
        self.attach(seq, Phase::InFlight);
        self.msgs.get(&seq)
    }

    /// Re-places every never-received message at its send time plus `delay_ms`.
    pub fn redelay(&mut self, delay_ms: u64, now: u64) {
        let waiting: Vec<u64> = self
            .msgs
            .iter()
            .filter(|(_, m)| m.state.receive_count == 0 && m.phase != Phase::InFlight)
            .map(|(s, _)| *s)
            .collect();
        for seq in waiting {
            self.detach(seq);
            let Some(m) = self.msgs.get_mut(&seq) else {
                continue;
            };
            m.state.visible_at_ms = m.rec.sent_ms + delay_ms;
            let phase = if m.state.visible_at_ms <= now {
                Phase::Ready
            } else {
                Phase::Delayed
            };
            self.attach(seq, phase);
        }
    }

    /// Moves every delayed or in-flight message whose time has come to `ready`.
    pub fn promote(&mut self, now: u64) {
        while let Some(&(at, seq)) = self.pending.first() {
            if at > now {
                break;
            }
            self.detach(seq);
            self.attach(seq, Phase::Ready);
        }
    }

    /// Up to `max` receivable messages. Without groups: the oldest ready ones. With groups
    /// (FIFO): group by group, the oldest receivable group first, all of its receivable
    /// messages in order, then the next; groups with a message in flight are skipped, including
    /// their messages not yet received (§6.9, G-27).
    /// Up to `max` receivable messages of a standard queue, chosen uniformly at random
    /// (reservoir sampling over the ready set, seeded by `seed`), in random order.
    pub fn pick_random(&self, max: usize, seed: u64) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut out: Vec<u64> = Vec::with_capacity(max);
        for (i, seq) in self.ready.iter().enumerate() {
            if out.len() < max {
                out.push(*seq);
            } else if let Some(j) = Some(rng.usize(..=i)).filter(|&j| j < max) {
                out[j] = *seq;
            }
        }
        rng.shuffle(&mut out);
        out
    }

    pub fn pick(&self, max: usize) -> Vec<u64> {
        if !self.fifo {
            return self.ready.iter().take(max).copied().collect();
        }
        let mut out = Vec::new();
        let mut done: HashSet<&str> = HashSet::new();
        for seq in &self.ready {
            if out.len() >= max {
                break;
            }
            let Some(g) = self.msgs.get(seq).and_then(Msg::group) else {
                continue;
            };
            if !done.insert(g) {
                continue;
            }
            let Some(group) = self.groups.get(g) else {
                continue;
            };
            if group.inflight > 0 {
                continue;
            }
            for s in &group.seqs {
                if out.len() >= max || self.msgs.get(s).is_none_or(|m| m.phase != Phase::Ready) {
                    break;
                }
                out.push(*s);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(group: Option<&str>) -> Arc<MessageRecord> {
        let mut r = MessageRecord {
            id: uuid::Uuid::nil(),
            body: "b".into(),
            sent_ms: 0,
            delay_s: 0,
            md5_of_body: [0; 16],
            extra: None,
        };
        r.extra_mut().group_id = group.map(str::to_owned);
        r.compact();
        Arc::new(r)
    }

    fn counts(ix: &MessageIndex) -> (usize, usize, usize) {
        (ix.ready_count(), ix.delayed_count(), ix.inflight_count())
    }

    #[test]
    fn phases_and_counters() {
        let mut ix = MessageIndex::new(false);
        ix.insert(1, rec(None), StateRecord::default(), 0);
        let delayed = StateRecord {
            visible_at_ms: 500,
            ..Default::default()
        };
        ix.insert(2, rec(None), delayed, 0);
        assert_eq!(counts(&ix), (1, 1, 0));
        assert!(ix.hide(1, 1000, |_| {}).is_some());
        assert_eq!(counts(&ix), (0, 1, 1));
        ix.promote(600);
        assert_eq!(counts(&ix), (1, 0, 1));
        ix.promote(1000);
        assert_eq!(counts(&ix), (2, 0, 0));
        assert!(ix.remove(1).is_some());
        assert!(ix.remove(1).is_none());
        assert_eq!((ix.ready_count(), ix.next_seq()), (1, 3));
    }

    #[test]
    fn fifo_groups_block_while_in_flight() {
        let mut ix = MessageIndex::new(true);
        for (seq, g) in [(1, "a"), (2, "a"), (3, "b")] {
            ix.insert(seq, rec(Some(g)), StateRecord::default(), 0);
        }
        assert_eq!(ix.pick(10), vec![1, 2, 3]);
        assert_eq!(ix.pick(1), vec![1]);
        ix.hide(1, 1000, |_| {});
        assert_eq!(ix.pick(10), vec![3]);
        ix.remove(1);
        assert_eq!(ix.pick(10), vec![2, 3]);
    }
}
