//! Engine layer, ops: looking inside without changing anything: the LocalStack-compatible message
//! peek, queue counters for health and metrics, and the reset that drops all state.

use crate::command::{Message, ReceiveMessage, Scope};
use crate::engine::handle::{Access, Engine};
use crate::engine::model::index::msg::Phase;
use crate::engine::model::queue::Queue;
use crate::engine::model::receipt::fingerprint;
use crate::engine::store::record::StateRecord;
use crate::engine::store::schema::Op;
use crate::error::SqsResult;

/// The receipt handle LocalStack gives peeked messages; it deletes nothing.
pub const PEEK_RECEIPT_HANDLE: &str = "SQS/BACKDOOR/ACCESS";

/// Where a message is, as the console shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeekState {
    /// Receivable now.
    Visible,
    /// Received and not yet visible again.
    InFlight,
    /// Waiting out a delay.
    Delayed,
}

impl PeekState {
    fn of(phase: Phase) -> Self {
        match phase {
            Phase::Ready => Self::Visible,
            Phase::InFlight => Self::InFlight,
            Phase::Delayed => Self::Delayed,
        }
    }
}

/// What a peek lists besides the visible messages (see [`Engine::peek_entries`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeekFilter {
    /// Also messages in flight.
    pub show_invisible: bool,
    /// Also delayed messages.
    pub show_delayed: bool,
    /// FIFO, without `show_invisible`: leave out the visible messages of a group whose head is
    /// in flight, as a receive would (LocalStack's peek).
    pub hide_blocked_groups: bool,
}

/// One message of a peek, and where it is.
pub type PeekEntry = (Message, PeekState);

/// One message of [`Engine::inspect`].
#[derive(Debug, Clone)]
pub struct Inspected {
    /// The message, rendered as a receive with every attribute would show it.
    pub message: Message,
    /// Where it is.
    pub state: PeekState,
    /// When it becomes visible (epoch ms), unless it is visible now.
    pub visible_at_ms: Option<u64>,
}

/// One step of [`Engine::inspect_from`].
#[derive(Debug, Clone, Default)]
pub struct InspectStep {
    /// The messages, with their sequence positions.
    pub messages: Vec<(u64, Inspected)>,
    /// How many messages the step looked at (some may have been deleted meanwhile).
    pub looked_at: usize,
    /// Where the next step starts, when more messages remain.
    pub next: Option<u64>,
}

/// Message counts of one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueCounts {
    /// Queue name.
    pub name: String,
    /// The queue's account and region.
    pub scope: Scope,
    /// Receivable now.
    pub visible: usize,
    /// In flight.
    pub in_flight: usize,
    /// Waiting out a delay.
    pub delayed: usize,
    /// Messages sent to it so far (since it was created or the server started).
    pub sent: u64,
    /// Messages handed out by ReceiveMessage so far.
    pub received: u64,
    /// Messages deleted so far.
    pub deleted: u64,
    /// Milliseconds since the oldest message was sent, whatever its state (CloudWatch's
    /// ApproximateAgeOfOldestMessage); `None` when the queue is empty.
    pub oldest_age_ms: Option<u64>,
}

impl Engine {
    /// Lists a queue's messages in queue order without touching visibility or receive counts.
    /// Visible messages always; in-flight and delayed ones on request. A `queue_url` that names
    /// no account or region is looked up in `scope`'s.
    pub fn peek(
        &self,
        scope: &Scope,
        queue_url: &str,
        show_invisible: bool,
        show_delayed: bool,
    ) -> SqsResult<Vec<Message>> {
        self.peek_page(
            scope,
            queue_url,
            show_invisible,
            show_delayed,
            0,
            usize::MAX,
        )
        .map(|(page, _)| page)
    }

    /// One page of [`Engine::peek`]: up to `max` messages from position `from` (a value a
    /// previous page returned), and the position of the next page when more remain. The lock
    /// is held for one page only, so a huge queue neither stalls other requests nor is copied
    /// whole.
    pub fn peek_page(
        &self,
        scope: &Scope,
        queue_url: &str,
        show_invisible: bool,
        show_delayed: bool,
        from: u64,
        max: usize,
    ) -> SqsResult<(Vec<Message>, Option<u64>)> {
        let filter = PeekFilter {
            show_invisible,
            show_delayed,
            hide_blocked_groups: false,
        };
        let (entries, next) = self.peek_entries(scope, queue_url, filter, from, max)?;
        Ok((entries.into_iter().map(|(m, _)| m).collect(), next))
    }

    /// [`Engine::peek_page`] with where each message is, and the messages `filter` selects.
    pub fn peek_entries(
        &self,
        scope: &Scope,
        queue_url: &str,
        filter: PeekFilter,
        from: u64,
        max: usize,
    ) -> SqsResult<(Vec<PeekEntry>, Option<u64>)> {
        let now = self.now();
        let mut reg = self.lock();
        let q = self.queue_mut(&mut reg, scope, queue_url)?;
        q.promote(now);
        let all = ReceiveMessage {
            message_system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            ..ReceiveMessage::default()
        };
        let index = q.messages();
        let hide_blocked = filter.hide_blocked_groups && !filter.show_invisible;
        let mut shown = index.iter_from(from).filter(|&(seq, m)| match m.phase() {
            Phase::Ready => !(hide_blocked && index.in_blocked_group(seq)),
            Phase::InFlight => filter.show_invisible,
            Phase::Delayed => filter.show_delayed,
        });
        let picked: Vec<(u64, StateRecord, Phase)> = shown
            .by_ref()
            .take(max)
            .map(|(seq, m)| (seq, m.state(), m.phase()))
            .collect();
        let next = shown.next().map(|(seq, _)| seq);
        let seqs: Vec<u64> = picked.iter().map(|&(seq, ..)| seq).collect();
        let page = picked
            .iter()
            .zip(self.records(q, &seqs))
            .filter_map(|((_, state, phase), rec)| {
                let handle = PEEK_RECEIPT_HANDLE.to_owned();
                let sender = &self.inner.cfg.account_id;
                rec.map(|rec| {
                    let m = super::message::render(&rec, state, handle, &all, sender);
                    (m, PeekState::of(*phase))
                })
            })
            .collect();
        Ok((page, next))
    }

    /// A page of a queue's messages with where each one is, for the web console: at most
    /// `limit` after skipping `offset`, among those in `state` (all when `None`) and, when
    /// `id` is given, only that message. Also answers how many match in all. Only the page is
    /// rendered; the count is one pass over the queue's index under the lock.
    pub fn inspect(
        &self,
        scope: &Scope,
        queue_url: &str,
        state: Option<PeekState>,
        id: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> SqsResult<(usize, Vec<Inspected>)> {
        let now = self.now();
        let mut reg = self.lock();
        let q = self.queue_mut(&mut reg, scope, queue_url)?;
        q.promote(now);
        let wanted_id = id.map(|i| uuid::Uuid::parse_str(i).ok());
        // The index keeps a fingerprint of each id; the page's records confirm the match.
        let wanted_fp = wanted_id.map(|w| w.map(|u| fingerprint(u.as_bytes())));
        let matching = q.messages().iter_from(0).filter(|(_, m)| {
            state.is_none_or(|s| PeekState::of(m.phase()) == s)
                && wanted_fp.is_none_or(|w| w == Some(m.fp()))
        });
        let mut total = 0;
        let mut picked = Vec::new();
        for (seq, m) in matching {
            if total >= offset && picked.len() < limit {
                picked.push((seq, m.state(), m.phase()));
            }
            total += 1;
        }
        let page = self
            .inspected(q, picked, wanted_id.flatten().as_ref(), id.is_some())
            .into_iter()
            .map(|(_, i)| i)
            .collect();
        Ok((total, page))
    }

    /// From sequence position `from` on, the next `max` messages of a queue in `state` (all
    /// when `None`) with their positions, and the position to go on from when more remain
    /// ([`InspectStep`]):
    /// the console's search walks a queue in such bounded steps, so the lock is held for one
    /// step at a time however long the queue.
    pub fn inspect_from(
        &self,
        scope: &Scope,
        queue_url: &str,
        state: Option<PeekState>,
        from: u64,
        max: usize,
    ) -> SqsResult<InspectStep> {
        let now = self.now();
        let mut reg = self.lock();
        let q = self.queue_mut(&mut reg, scope, queue_url)?;
        q.promote(now);
        let mut matching = q
            .messages()
            .iter_from(from)
            .filter(|(_, m)| state.is_none_or(|s| PeekState::of(m.phase()) == s));
        let picked: Vec<(u64, StateRecord, Phase)> = matching
            .by_ref()
            .take(max)
            .map(|(seq, m)| (seq, m.state(), m.phase()))
            .collect();
        let next = matching.next().map(|(seq, _)| seq);
        let looked_at = picked.len();
        Ok(InspectStep {
            messages: self.inspected(q, picked, None, false),
            looked_at,
            next,
        })
    }

    /// The picked messages of `q` as the console shows them, leaving out any whose record is
    /// gone (and, when `by_id`, any whose id is not `wanted`: the index only keeps a
    /// fingerprint of each id).
    fn inspected(
        &self,
        q: &Queue,
        picked: Vec<(u64, StateRecord, Phase)>,
        wanted: Option<&uuid::Uuid>,
        by_id: bool,
    ) -> Vec<(u64, Inspected)> {
        let all = ReceiveMessage {
            message_system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            ..ReceiveMessage::default()
        };
        let seqs: Vec<u64> = picked.iter().map(|&(seq, ..)| seq).collect();
        let records = self.records(q, &seqs);
        let mut page = Vec::with_capacity(picked.len());
        for ((seq, st, phase), rec) in picked.into_iter().zip(records) {
            let Some(rec) = rec.filter(|r| !by_id || wanted == Some(&r.id)) else {
                continue;
            };
            let handle = PEEK_RECEIPT_HANDLE.to_owned();
            let sender = &self.inner.cfg.account_id;
            page.push((
                seq,
                Inspected {
                    message: super::message::render(&rec, &st, handle, &all, sender),
                    state: PeekState::of(phase),
                    visible_at_ms: (phase != Phase::Ready).then_some(st.visible_at_ms),
                },
            ));
        }
        page
    }

    /// Deletes the message with this id, whatever its state, without a receipt handle (the web
    /// console). Answers whether there was one.
    pub async fn delete_by_id(
        &self,
        scope: &Scope,
        queue_url: &str,
        message_id: &str,
    ) -> SqsResult<bool> {
        let Ok(wanted) = uuid::Uuid::parse_str(message_id) else {
            return Ok(false);
        };
        let (found, commit) = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, queue_url)?;
            let fp = fingerprint(wanted.as_bytes());
            let candidates: Vec<u64> = q
                .messages()
                .iter_from(0)
                .filter(|(_, m)| m.fp() == fp)
                .map(|(seq, _)| seq)
                .collect();
            let records = self.records(q, &candidates);
            let seq = candidates
                .into_iter()
                .zip(records)
                .find(|(_, r)| r.as_ref().is_some_and(|r| r.id == wanted))
                .map(|(seq, _)| seq);
            let mut ops = Vec::new();
            let found = seq.and_then(|s| q.delete(s, &mut ops)).is_some();
            if found {
                self.inner.metrics.deleted.inc();
                q.traffic_mut().deleted += 1;
                q.wake();
            }
            (found, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(found)
    }

    /// How many queues there are, over every account and region, without visiting them: what
    /// `/health` reports, which any client may poll as often as it likes.
    #[must_use]
    pub fn queue_count(&self) -> usize {
        self.lock().len()
    }

    /// Counters of every queue, by name (then account and region).
    #[must_use]
    pub fn queue_counts(&self) -> Vec<QueueCounts> {
        let now = self.now();
        let mut reg = self.lock();
        let mut out: Vec<QueueCounts> = reg
            .queues_mut()
            .map(|q| {
                q.promote(now);
                let m = q.messages();
                let traffic = q.traffic();
                QueueCounts {
                    name: q.name().to_owned(),
                    scope: q.scope().clone(),
                    visible: m.ready_count(),
                    in_flight: m.inflight_count(),
                    delayed: m.delayed_count(),
                    sent: traffic.sent,
                    received: traffic.received,
                    deleted: traffic.deleted,
                    oldest_age_ms: q.oldest_sent_ms().map(|s| now.saturating_sub(s)),
                }
            })
            .collect();
        out.sort_by(|a, b| (&a.name, &a.scope).cmp(&(&b.name, &b.scope)));
        out
    }

    /// Drops every queue, message, tombstone and move task, durably.
    pub async fn reset(&self) -> SqsResult<()> {
        self.refuse_unwritable(Access::Consume)?;
        let commit = {
            let mut reg = self.lock();
            for q in reg.queues() {
                q.wake();
            }
            // Running movers find their task gone and stop.
            reg.clear();
            self.inner.store.submit(vec![Op::ResetAll])
        };
        self.inner.tasks_notify.notify_waiters();
        self.commit(commit).await
    }
}
