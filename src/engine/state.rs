//! Engine layer: the in-memory indexes of one queue, rebuilt from redb at start-up.
//!
//! A message is in one of three phases. `Ready` messages sit in `ready`, ordered by sequence
//! number. `Delayed` (never yet visible) and `InFlight` messages sit in `pending`, ordered by
//! the time they become visible; [`Queue::promote`] moves the due ones to `ready`. Counters are
//! kept exact so that GetQueueAttributes never scans.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use tokio::sync::Notify;

use super::fifo::FifoState;
use super::store::{MessageRecord, Op, QueueRecord, StateRecord, encode};
use crate::command::attributes;

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Receivable now.
    Ready,
    /// Not yet visible because of a delay.
    Delayed,
    /// Received and not yet visible again.
    InFlight,
}

/// One stored message.
#[derive(Debug)]
pub struct Msg {
    /// What was sent.
    pub rec: Arc<MessageRecord>,
    /// Visibility and counters.
    pub st: StateRecord,
    /// Current phase.
    pub phase: Phase,
}

/// Numeric settings read on hot paths, cached from the attribute map.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// VisibilityTimeout, seconds.
    pub visibility_timeout: u64,
    /// DelaySeconds.
    pub delay: u64,
    /// MaximumMessageSize, bytes.
    pub max_size: u64,
    /// MessageRetentionPeriod, seconds.
    pub retention: u64,
    /// ReceiveMessageWaitTimeSeconds.
    pub wait: u64,
    /// From RedrivePolicy: maxReceiveCount and the dead-letter queue's name.
    pub redrive: Option<(u32, String)>,
}

/// One queue with its messages and indexes.
#[derive(Debug)]
pub struct Queue {
    /// Internal id; a re-created queue gets a new one.
    pub id: u64,
    /// Persisted part.
    pub rec: QueueRecord,
    /// Cached numbers from `rec.attributes`.
    pub settings: Settings,
    /// Next sequence number.
    pub next_seq: u64,
    /// Messages by sequence number.
    pub msgs: BTreeMap<u64, Msg>,
    /// Ready messages, oldest first.
    pub ready: BTreeSet<u64>,
    /// (visible at ms, seq) of delayed and in-flight messages.
    pub pending: BTreeSet<(u64, u64)>,
    /// Count of in-flight messages.
    pub inflight: usize,
    /// Count of delayed messages.
    pub delayed: usize,
    /// Woken whenever a message may have become receivable.
    pub notify: Arc<Notify>,
    /// Send time of the newest message, to keep sent times monotonic per queue.
    pub last_sent_ms: u64,
    /// FIFO only: message groups with at least one message.
    pub groups: HashMap<String, Group>,
    /// FIFO only: deduplication, sequence numbers, receive attempts.
    pub fifo: FifoState,
}

/// The messages of one FIFO message group.
#[derive(Debug, Default)]
pub struct Group {
    /// Sequence numbers of the group's messages, oldest first.
    pub seqs: BTreeSet<u64>,
    /// How many of them are in flight; the group is blocked while this is above 0 (§6.9).
    pub inflight: usize,
}

impl Queue {
    /// A queue with no messages.
    #[must_use]
    pub fn new(id: u64, rec: QueueRecord) -> Self {
        let mut q = Queue {
            id,
            rec,
            settings: Settings::default(),
            next_seq: 1,
            msgs: BTreeMap::new(),
            ready: BTreeSet::new(),
            pending: BTreeSet::new(),
            inflight: 0,
            delayed: 0,
            notify: Arc::new(Notify::new()),
            last_sent_ms: 0,
            groups: HashMap::new(),
            fifo: FifoState::default(),
        };
        q.refresh_settings();
        q
    }

    /// Re-reads the cached numbers after the attributes changed.
    pub fn refresh_settings(&mut self) {
        let a = &self.rec.attributes;
        self.settings = Settings {
            visibility_timeout: attributes::int(a, "VisibilityTimeout"),
            delay: attributes::int(a, "DelaySeconds"),
            max_size: attributes::int(a, "MaximumMessageSize"),
            retention: attributes::int(a, "MessageRetentionPeriod"),
            wait: attributes::int(a, "ReceiveMessageWaitTimeSeconds"),
            redrive: a
                .get("RedrivePolicy")
                .and_then(|p| super::redrive::parse_policy(p)),
        };
    }

    /// The persisted form of the queue record.
    #[must_use]
    pub fn put_op(&self) -> Op {
        Op::PutQueue(self.id, encode(&self.rec))
    }

    /// The persisted form of a message's state.
    #[must_use]
    pub fn state_op(&self, seq: u64) -> Option<Op> {
        self.msgs
            .get(&seq)
            .map(|m| Op::PutState(self.id, seq, encode(&m.st)))
    }

    /// Adds a message (new or loaded), placing it by its visibility time.
    pub fn insert(&mut self, seq: u64, rec: Arc<MessageRecord>, st: StateRecord, now: u64) {
        let phase = if st.visible_at_ms <= now {
            Phase::Ready
        } else if st.receive_count == 0 {
            Phase::Delayed
        } else {
            Phase::InFlight
        };
        self.last_sent_ms = self.last_sent_ms.max(rec.sent_ms);
        self.next_seq = self.next_seq.max(seq + 1);
        if self.rec.fifo
            && let Some(g) = &rec.extra().group_id
        {
            self.groups.entry(g.clone()).or_default().seqs.insert(seq);
        }
        self.msgs.insert(seq, Msg { rec, st, phase });
        self.attach(seq, phase);
    }

    /// Puts a message into the index of its phase (the message must be in `msgs`).
    fn attach(&mut self, seq: u64, phase: Phase) {
        let Some(m) = self.msgs.get_mut(&seq) else {
            return;
        };
        m.phase = phase;
        let at = m.st.visible_at_ms;
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
                if let Some(g) = m
                    .rec
                    .extra()
                    .group_id
                    .as_ref()
                    .and_then(|g| self.groups.get_mut(g))
                {
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
        let at = m.st.visible_at_ms;
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
                if let Some(g) = m
                    .rec
                    .extra()
                    .group_id
                    .as_ref()
                    .and_then(|g| self.groups.get_mut(g))
                {
                    g.inflight -= 1;
                }
            }
        }
    }

    /// Removes a message from every index.
    pub fn remove(&mut self, seq: u64) -> Option<Msg> {
        self.detach(seq);
        let m = self.msgs.remove(&seq)?;
        if let Some(g) = &m.rec.extra().group_id
            && let Some(group) = self.groups.get_mut(g)
        {
            group.seqs.remove(&seq);
            if group.seqs.is_empty() {
                self.groups.remove(g);
            }
        }
        Some(m)
    }

    /// Makes a message invisible until `visible_at`, as a receive or a visibility change does.
    pub fn hide(&mut self, seq: u64, visible_at: u64) {
        if !self.msgs.contains_key(&seq) {
            return;
        }
        self.detach(seq);
        if let Some(m) = self.msgs.get_mut(&seq) {
            m.st.visible_at_ms = visible_at;
        }
        self.attach(seq, Phase::InFlight);
    }

    /// Re-places a never-received message after the queue delay changed: FIFO queues apply a
    /// new DelaySeconds to messages already queued (§6.6).
    pub fn redelay(&mut self, now: u64) {
        let delay_ms = self.settings.delay * 1000;
        let waiting: Vec<u64> = self
            .msgs
            .iter()
            .filter(|(_, m)| m.st.receive_count == 0 && m.phase != Phase::InFlight)
            .map(|(s, _)| *s)
            .collect();
        for seq in waiting {
            self.detach(seq);
            let Some(m) = self.msgs.get_mut(&seq) else {
                continue;
            };
            m.st.visible_at_ms = m.rec.sent_ms + delay_ms;
            let phase = if m.st.visible_at_ms <= now {
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

    /// Drops messages older than the retention period, in flight or not (§6.15).
    pub fn expire(&mut self, now: u64, ops: &mut Vec<Op>) {
        let keep_ms = self.settings.retention * 1000;
        while let Some((&seq, m)) = self.msgs.first_key_value() {
            if m.rec.sent_ms + keep_ms > now {
                break;
            }
            self.remove(seq);
            ops.push(Op::DeleteMessage(self.id, seq));
        }
    }

    /// When the next pending message becomes visible, if any.
    #[must_use]
    pub fn next_visible_at(&self) -> Option<u64> {
        self.pending.first().map(|&(at, _)| at)
    }

    /// Drops every message (PurgeQueue).
    pub fn clear(&mut self) {
        self.msgs.clear();
        self.groups.clear();
        self.ready.clear();
        self.pending.clear();
        self.inflight = 0;
        self.delayed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sent: u64) -> Arc<MessageRecord> {
        Arc::new(MessageRecord {
            id: uuid::Uuid::nil(),
            body: "b".into(),
            sent_ms: sent,
            delay_s: 0,
            md5_of_body: [0; 16],
            extra: None,
        })
    }

    fn queue() -> Queue {
        Queue::new(
            1,
            QueueRecord {
                name: "q".into(),
                fifo: false,
                attributes: attributes::defaults(false),
                tags: Default::default(),
                created_s: 0,
                modified_s: 0,
                last_purge_ms: None,
                dedup_per_group: false,
            },
        )
    }

    #[test]
    fn phases_and_counters() {
        let mut q = queue();
        q.insert(1, rec(0), StateRecord::default(), 0);
        q.insert(
            2,
            rec(0),
            StateRecord {
                visible_at_ms: 500,
                ..Default::default()
            },
            0,
        );
        assert_eq!((q.ready.len(), q.delayed, q.inflight), (1, 1, 0));
        q.hide(1, 1000);
        assert_eq!((q.ready.len(), q.delayed, q.inflight), (0, 1, 1));
        q.promote(600);
        assert_eq!((q.ready.len(), q.delayed, q.inflight), (1, 0, 1));
        q.promote(1000);
        assert_eq!((q.ready.len(), q.delayed, q.inflight), (2, 0, 0));
        q.remove(1);
        assert_eq!(q.ready.len(), 1);
    }

    #[test]
    fn retention_drops_old_messages() {
        let mut q = queue();
        q.insert(1, rec(0), StateRecord::default(), 0);
        q.insert(2, rec(10_000), StateRecord::default(), 10_000);
        let mut ops = Vec::new();
        q.expire(345_600_000, &mut ops);
        assert_eq!(q.msgs.len(), 1);
        assert_eq!(ops.len(), 1);
    }
}
