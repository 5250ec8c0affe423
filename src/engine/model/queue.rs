//! Engine layer, model: one queue: its name, typed attributes, tags and FIFO bookkeeping, its
//! message indexes, and the ops that persist each change.
//!
//! Fields are private. Messages enter through [`Queue::append`] (new) or [`Queue::restore`]
//! (loaded) and leave through [`Queue::delete`], [`Queue::expire`] or [`Queue::purge`], which
//! keep the [`MessageIndex`] counters exact and push the ops that persist the change.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::Notify;

use super::fifo::{self, FifoState};
use super::index::message_index::{Head, MessageIndex};
use super::index::msg::{Msg, Phase};
use super::receipt::fingerprint;
use crate::command::Message;
use crate::command::Scope;
use crate::command::attributes::{DeduplicationScope, QueueAttributes, Setting};
use crate::engine::store::packed::PackedRecord;
use crate::engine::store::record::{IndexFields, MessageRecord, QueueRecord, StateRecord};
use crate::engine::store::schema::Op;

/// What parked long polls depend on, noted before a change ([`Queue::watch`]) and compared
/// after it ([`Queue::wake_after`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watch {
    events: u64,
    full: bool,
}

/// Messages a queue has taken in, handed out and lost since it was created (or the server
/// started), for `/metrics`. Plain numbers: they change under the engine lock the request
/// holds anyway, so counting costs no lock and no atomic of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Traffic {
    /// Messages enqueued by a send (or moved here by the console).
    pub sent: u64,
    /// Messages handed out by ReceiveMessage.
    pub received: u64,
    /// Messages deleted (by receipt handle, or by id from the console).
    pub deleted: u64,
}

/// One queue with its messages and indexes.
#[derive(Debug)]
pub(crate) struct Queue {
    /// Internal id; a re-created queue gets a new one.
    id: u64,
    /// Its account and region.
    scope: Scope,
    name: String,
    /// Typed; FIFO queues are the ones with FIFO attributes.
    attributes: QueueAttributes,
    tags: BTreeMap<String, String>,
    /// Epoch seconds.
    created_s: u64,
    /// Epoch seconds.
    modified_s: u64,
    /// Last PurgeQueue (epoch ms).
    last_purge_ms: Option<u64>,
    /// FIFO: deduplicate per message group; fixed at creation (§6.9).
    dedup_per_group: bool,
    /// The messages and their indexes.
    messages: MessageIndex,
    /// Woken whenever a message may have become receivable.
    notify: Arc<Notify>,
    /// FIFO only: deduplication, sequence numbers, receive attempts.
    fifo_state: FifoState,
    /// Counters for `/metrics`.
    traffic: Traffic,
}

impl Queue {
    /// A new queue with no messages, created at `now` (epoch ms).
    pub fn create(
        id: u64,
        scope: Scope,
        name: String,
        attributes: QueueAttributes,
        tags: BTreeMap<String, String>,
        now: u64,
    ) -> Self {
        let dedup_per_group = attributes
            .fifo
            .as_ref()
            .is_some_and(|f| f.deduplication_scope == DeduplicationScope::MessageGroup);
        // The record's attribute map is rendered from `attributes` when the queue is written.
        let rec = QueueRecord {
            name,
            scope: Some(scope.into()),
            fifo: attributes.fifo.is_some(),
            attributes: BTreeMap::new(),
            tags,
            created_s: now / 1000,
            modified_s: now / 1000,
            last_purge_ms: None,
            dedup_per_group,
        };
        Self::with(id, rec, attributes)
    }

    /// A queue read back from its record, before its messages are restored. A record written
    /// before queues had scopes belongs to `default_scope`.
    pub fn from_record(id: u64, rec: QueueRecord, default_scope: &Scope) -> Result<Self, String> {
        let attributes = QueueAttributes::from_map(&rec.attributes, rec.fifo)
            .map_err(|e| format!("queue {}: {}", rec.name, e.message))?;
        let mut q = Self::with(id, rec, attributes);
        if q.scope.account.is_empty() {
            q.scope = default_scope.clone();
        }
        Ok(q)
    }

    fn with(id: u64, rec: QueueRecord, attributes: QueueAttributes) -> Self {
        Queue {
            id,
            scope: rec.scope.map(Scope::from).unwrap_or(Scope {
                account: String::new(),
                region: String::new(),
            }),
            name: rec.name,
            messages: MessageIndex::new(attributes.fifo.is_some()),
            attributes,
            tags: rec.tags,
            created_s: rec.created_s,
            modified_s: rec.modified_s,
            last_purge_ms: rec.last_purge_ms,
            dedup_per_group: rec.dedup_per_group,
            notify: Arc::new(Notify::new()),
            fifo_state: FifoState::default(),
            traffic: Traffic::default(),
        }
    }

    /// The op that persists the queue's record.
    #[must_use]
    pub fn put_op(&self) -> Op {
        Op::PutQueue(
            self.id,
            QueueRecord {
                name: self.name.clone(),
                scope: Some(self.scope.clone().into()),
                fifo: self.is_fifo(),
                attributes: self.attributes.to_map(),
                tags: self.tags.clone(),
                created_s: self.created_s,
                modified_s: self.modified_s,
                last_purge_ms: self.last_purge_ms,
                dedup_per_group: self.dedup_per_group,
            },
        )
    }

    /// Internal id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Queue name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// New messages get sequence numbers from `seq` on.
    pub fn reserve_seqs_below(&mut self, seq: u64) {
        self.messages.reserve_seqs_below(seq);
    }

    /// Its account and region.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Its ARN.
    pub fn arn(&self) -> String {
        self.scope.arn(&self.name)
    }

    /// Whether this is a FIFO queue.
    pub fn is_fifo(&self) -> bool {
        self.attributes.fifo.is_some()
    }

    /// The queue's attributes.
    pub fn attributes(&self) -> &QueueAttributes {
        &self.attributes
    }

    /// Tags.
    pub fn tags(&self) -> &BTreeMap<String, String> {
        &self.tags
    }

    /// Tags, for changing them (nothing depends on them).
    pub fn tags_mut(&mut self) -> &mut BTreeMap<String, String> {
        &mut self.tags
    }

    /// CreatedTimestamp, epoch seconds.
    pub fn created_s(&self) -> u64 {
        self.created_s
    }

    /// LastModifiedTimestamp, epoch seconds.
    pub fn modified_s(&self) -> u64 {
        self.modified_s
    }

    /// When the queue was last purged (epoch ms).
    pub fn last_purge_ms(&self) -> Option<u64> {
        self.last_purge_ms
    }

    /// Woken whenever a message may have become receivable.
    pub fn notify(&self) -> &Arc<Notify> {
        &self.notify
    }

    /// Wakes every long poll parked on this queue.
    pub fn wake(&self) {
        self.notify.notify_waiters();
    }

    /// Whether the queue has `max_inflight` messages in flight (`None`: no limit), §6.8.
    pub fn full(&self, max_inflight: Option<usize>) -> bool {
        max_inflight.is_some_and(|l| self.messages.inflight_count() >= l)
    }

    /// Notes, before a change, what parked long polls depend on.
    pub fn watch(&self, max_inflight: Option<usize>) -> Watch {
        Watch {
            events: self.messages.events(),
            full: self.full(max_inflight),
        }
    }

    /// Wakes parked long polls when, since `before`, a message may have become receivable (or
    /// receivable sooner), or the queue dropped below its in-flight limit. A change that makes
    /// nothing receivable, such as a send to a FIFO group whose head is in flight, wakes no one.
    pub fn wake_after(&self, before: Watch, max_inflight: Option<usize>) {
        if self.messages.events() != before.events || (before.full && !self.full(max_inflight)) {
            self.wake();
        }
    }

    /// Whether a FIFO queue derives deduplication ids from bodies.
    pub fn content_based(&self) -> bool {
        self.attributes
            .fifo
            .as_ref()
            .is_some_and(|f| f.content_based_deduplication)
    }

    /// The key a FIFO deduplication id is remembered under (§6.9).
    pub fn dedup_key(&self, group: &str, dedup_id: &str) -> String {
        fifo::dedup_key(self.dedup_per_group, group, dedup_id)
    }

    /// FIFO deduplication, sequence numbers and receive attempts.
    pub fn fifo_state(&mut self) -> &mut FifoState {
        &mut self.fifo_state
    }

    /// The send time of a message sent at `now`: never before the previous send.
    pub fn send_time(&self, now: u64) -> u64 {
        now.max(self.messages.last_sent_ms())
    }

    /// Applies validated settings and marks the queue modified; returns the op that persists it.
    pub fn update_attributes(&mut self, settings: &[Setting], now: u64) -> Op {
        self.attributes.apply(settings);
        self.modified_s = now / 1000;
        if self.is_fifo()
            && settings
                .iter()
                .any(|s| matches!(s, Setting::DelaySeconds(_)))
        {
            self.redelay(now);
        }
        // A shorter wait or delay may make messages receivable sooner for parked polls.
        self.wake();
        self.put_op()
    }

    /// Replaces the Policy attribute (AddPermission, RemovePermission).
    pub fn set_policy(&mut self, policy: Option<String>) {
        self.attributes.policy = policy;
    }

    /// Sets LastModifiedTimestamp.
    pub fn touch(&mut self, now: u64) {
        self.modified_s = now / 1000;
    }

    /// Messages sent, received and deleted so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// The counters, for counting.
    pub fn traffic_mut(&mut self) -> &mut Traffic {
        &mut self.traffic
    }

    /// Send time (epoch ms) of the oldest message, whatever its state; `None` when empty:
    /// the first by sequence number, or one moved in late with an older send time.
    pub fn oldest_sent_ms(&self) -> Option<u64> {
        let first = self.messages.first().map(|(_, m)| m.sent_ms());
        let late = self.messages.oldest_late().map(|(sent_ms, _)| sent_ms);
        match (first, late) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The messages and their counters, to read.
    pub fn messages(&self) -> &MessageIndex {
        &self.messages
    }

    /// Puts a message read back at start-up into the indexes; its record stays on disk.
    pub fn restore(&mut self, seq: u64, fields: &IndexFields, state: StateRecord, now: u64) {
        if let Some(n) = fields.sequence_number {
            self.fifo_state.saw_sequence(n);
        }
        let head = Head {
            sent_ms: fields.sent_ms,
            fp: fingerprint(fields.id.as_bytes()),
            group: fields.group_id.as_deref(),
        };
        self.messages.insert_entry(seq, head, None, state, now);
    }

    /// Drops a message's record from memory; it is read back from the store when needed.
    pub fn make_cold(&mut self, seq: u64) -> bool {
        self.messages.make_cold(seq)
    }

    /// Adds a new message (sent, moved to this dead-letter queue, or moved back by a move task)
    /// under the next sequence number, and pushes the ops that persist it. The state row is
    /// written only when `state` is not the initial one, which the loader derives by itself.
    pub fn append(&mut self, rec: MessageRecord, state: StateRecord, now: u64, ops: &mut Vec<Op>) {
        let seq = self.messages.next_seq();
        let packed = PackedRecord::pack(&rec);
        ops.push(Op::PutMessage(self.id, seq, packed.clone()));
        if state != StateRecord::initial(&rec) {
            ops.push(Op::PutState(self.id, seq, state));
        }
        if let Some(n) = rec.extra().sequence_number {
            self.fifo_state.saw_sequence(n);
        }
        self.messages.insert(seq, &rec, packed, state, now);
    }

    /// Removes a message and pushes the op that deletes it; `None` if there is no such message.
    pub fn delete(&mut self, seq: u64, ops: &mut Vec<Op>) -> Option<Msg> {
        let m = self.messages.remove(seq)?;
        ops.push(Op::DeleteMessage(self.id, seq));
        Some(m)
    }

    /// Hands a message out: in flight until `visible_at`, one more receive, the receive's
    /// `nonce`. Pushes the op that persists its state.
    pub fn receive(
        &mut self,
        seq: u64,
        visible_at: u64,
        nonce: u64,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> Option<&Msg> {
        let m = self.messages.hide(seq, visible_at, |state| {
            state.receive_count += 1;
            state.first_receive_ms.get_or_insert(now);
            state.last_receive_ms = Some(now);
            state.nonce = nonce;
        })?;
        ops.push(Op::PutState(self.id, seq, m.state()));
        Some(m)
    }

    /// Changes a received message's visibility (a timeout of 0 makes it ready at once) and
    /// returns the op that persists its state.
    pub fn change_visibility(&mut self, seq: u64, visible_at: u64, now: u64) -> Option<Op> {
        let state = self.messages.hide(seq, visible_at, |_| {})?.state();
        self.messages.promote(now);
        Some(Op::PutState(self.id, seq, state))
    }

    /// Re-places never-received messages after the queue delay changed: FIFO queues apply the
    /// current DelaySeconds to messages already queued (§6.6).
    pub fn redelay(&mut self, now: u64) {
        let delay_ms = u64::from(self.attributes.delay_seconds) * 1000;
        self.messages.redelay(delay_ms, now);
    }

    /// Moves every delayed or in-flight message whose time has come to ready.
    pub fn promote(&mut self, now: u64) {
        self.messages.promote(now);
    }

    /// Makes messages just handed out with VisibilityTimeout=0 visible again, in this order.
    pub fn reveal(&mut self, seqs: &[u64], now: u64) {
        self.messages.reveal(seqs, now);
    }

    /// FIFO: looks for available groups only among the first `size` messages (§6.9).
    pub fn set_window(&mut self, size: Option<usize>) {
        self.messages.set_window(size);
    }

    /// Drops messages older than the retention period, in flight or not (§6.15). Dropping a
    /// FIFO group's in-flight head can free the group, so parked polls are woken then.
    pub fn expire(&mut self, now: u64, ops: &mut Vec<Op>) {
        let keep_ms = u64::from(self.attributes.message_retention_period) * 1000;
        self.messages.promote(now);
        let events = self.messages.events();
        while let Some((seq, m)) = self.messages.first() {
            if m.sent_ms() + keep_ms > now {
                break;
            }
            self.delete(seq, ops);
        }
        // Messages moved in from a source queue keep their send time, so they can be older
        // than messages ahead of them (docs/protocol.md §6.10).
        while let Some((sent_ms, seq)) = self.messages.oldest_late() {
            if sent_ms + keep_ms > now {
                break;
            }
            self.delete(seq, ops);
        }
        if self.messages.events() != events {
            self.wake();
        }
    }

    /// Drops every message and FIFO deduplication entry (PurgeQueue), and pushes the ops.
    pub fn purge(&mut self, now: u64, ops: &mut Vec<Op>) {
        self.messages.clear();
        self.fifo_state.clear();
        self.last_purge_ms = Some(now);
        ops.extend([
            Op::ClearQueue(self.id),
            Op::ClearDedup(self.id),
            self.put_op(),
        ]);
        if self.is_fifo() {
            // Nothing left on disk holds the last number: without this, a restart in the same
            // millisecond (a frozen test clock, say) would issue it again.
            ops.push(Op::PutSequence(self.id, self.fifo_state.last_sequence()));
        }
    }

    /// The stored result of a retried ReceiveRequestAttemptId, if every message it handed out
    /// is still in flight under the same receive (§6.7).
    pub fn retry(&self, attempt_id: &str, now: u64) -> Option<Vec<Message>> {
        self.fifo_state.retry(attempt_id, now, |seq, nonce| {
            self.messages
                .get(seq)
                .is_some_and(|m| m.phase() == Phase::InFlight && m.nonce() == nonce)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(sent: u64) -> MessageRecord {
        MessageRecord {
            id: uuid::Uuid::nil(),
            body: "b".into(),
            sent_ms: sent,
            delay_s: 0,
            md5_of_body: [0; 16],
            extra: None,
        }
    }

    fn queue() -> Queue {
        Queue::create(
            1,
            Scope {
                account: "000000000000".into(),
                region: "us-east-1".into(),
            },
            "q".into(),
            QueueAttributes::defaults(false),
            BTreeMap::new(),
            0,
        )
    }

    fn counts(q: &Queue) -> (usize, usize, usize) {
        let m = q.messages();
        (m.ready_count(), m.delayed_count(), m.inflight_count())
    }

    #[test]
    fn append_receive_delete() {
        let mut q = queue();
        let mut ops = Vec::new();
        q.append(rec(0), StateRecord::default(), 0, &mut ops);
        let delayed = StateRecord {
            visible_at_ms: 500,
            ..Default::default()
        };
        q.append(rec(0), delayed, 0, &mut ops);
        // The first message's state is the initial one and gets no row.
        assert_eq!(ops.len(), 3);
        assert_eq!(counts(&q), (1, 1, 0));
        assert!(q.receive(1, 1000, 7, 0, &mut ops).is_some());
        assert_eq!(counts(&q), (0, 1, 1));
        q.promote(600);
        assert_eq!(counts(&q), (1, 0, 1));
        q.promote(1000);
        assert_eq!(counts(&q), (2, 0, 0));
        assert!(q.delete(1, &mut ops).is_some());
        assert!(q.delete(1, &mut ops).is_none());
        assert_eq!(q.messages().ready_count(), 1);
    }

    #[test]
    fn retention_drops_old_messages() {
        let mut q = queue();
        let mut ops = Vec::new();
        q.append(rec(0), StateRecord::default(), 0, &mut ops);
        q.append(
            rec(10_000),
            StateRecord::initial(&rec(10_000)),
            10_000,
            &mut ops,
        );
        ops.clear();
        q.expire(345_600_000, &mut ops);
        assert_eq!(q.messages().len(), 1);
        assert_eq!(ops.len(), 1);
    }
}
