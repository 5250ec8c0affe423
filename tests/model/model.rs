//! The reference model: SQS semantics written plainly, with no indexes and no storage.
//!
//! A queue is a list of messages in arrival order. A message is *ready* when its visibility
//! time has come, *in flight* when it has been received and is hidden, *delayed* when it has
//! never been received and is hidden (docs/protocol.md §6.6–§6.10, §6.15). Retention counts
//! from the original send, also in a standard dead-letter queue; a FIFO dead-letter queue
//! counts from the move. FIFO queues deduplicate for five
//! minutes, keep each group in order, and serve nothing of a group with a message in flight.
//!
//! Where SQS leaves latitude (which FIFO group is served first, and so the order in which
//! moved messages reach a FIFO dead-letter queue) the model does not choose: it checks the
//! engine's choice (`fifo.rs`) and then applies it.

use std::collections::BTreeMap;

use localsqs::error::ErrorCode;

use super::ops::{Entry, QUEUES, Setup};

/// How long a deduplication id is remembered.
pub const DEDUP_WINDOW_MS: u64 = 5 * 60 * 1000;
/// The longest a message may stay invisible after its last receive.
pub const MAX_VISIBILITY_MS: u64 = 43_200_000;
/// FIFO sequence numbers are at least 2^64 (docs/protocol.md §4, G-23).
pub const SEQUENCE_BASE: u128 = 1 << 64;

/// One message.
#[derive(Debug, Clone)]
pub struct Msg {
    /// MessageId, as the engine assigned it.
    pub id: String,
    /// Body.
    pub body: String,
    /// MessageGroupId.
    pub group: Option<String>,
    /// SequenceNumber (FIFO).
    pub sequence: Option<u128>,
    /// SentTimestamp, ms.
    pub sent_ms: u64,
    /// When its retention period started: the send, or its move to a FIFO dead-letter queue.
    pub enqueued_ms: u64,
    /// When it is (or was) visible again, ms.
    pub visible_at: u64,
    /// ApproximateReceiveCount.
    pub receive_count: u32,
    /// ApproximateFirstReceiveTimestamp.
    pub first_receive: Option<u64>,
    /// Time of the last receive *in this queue* (a move to a dead-letter queue forgets it).
    pub last_receive: Option<u64>,
    /// Receipt handle of the last receive.
    pub handle: Option<String>,
    /// The queue it was moved from, in a dead-letter queue.
    pub dlq_source: Option<usize>,
}

impl Msg {
    /// Receivable now.
    pub fn ready(&self, now: u64) -> bool {
        self.visible_at <= now
    }
    /// Received and hidden.
    pub fn in_flight(&self, now: u64) -> bool {
        self.receive_count > 0 && self.visible_at > now
    }
    /// Never received and hidden.
    pub fn delayed(&self, now: u64) -> bool {
        self.receive_count == 0 && self.visible_at > now
    }
}

/// A remembered FIFO send.
#[derive(Debug, Clone)]
pub struct Dedup {
    /// Forgotten at this time.
    pub expires_ms: u64,
    /// The original's MessageId.
    pub id: String,
    /// The original's SequenceNumber.
    pub sequence: u128,
}

/// One queue.
#[derive(Debug, Clone)]
pub struct Queue {
    /// Its attributes.
    pub setup: super::ops::QueueSetup,
    /// Messages in arrival order.
    pub msgs: Vec<Msg>,
    /// FIFO deduplication ids (or bodies, for content-based deduplication).
    pub dedup: BTreeMap<String, Dedup>,
    /// The highest sequence number issued or moved in.
    pub last_sequence: u128,
}

impl Queue {
    /// Its (dead-letter queue, maxReceiveCount), when it has a RedrivePolicy.
    pub fn redrive(&self, index: usize) -> Option<(usize, u32)> {
        self.setup.max_receives.map(|m| (index + 1, m))
    }

    /// The message with this id.
    pub fn get(&self, id: &str) -> Option<&Msg> {
        self.msgs.iter().find(|m| m.id == id)
    }

    fn get_mut(&mut self, id: &str) -> Option<&mut Msg> {
        self.msgs.iter_mut().find(|m| m.id == id)
    }

    /// (ready, in flight, delayed): ApproximateNumberOfMessages, …NotVisible, …Delayed.
    pub fn counters(&self, now: u64) -> (usize, usize, usize) {
        let count = |f: &dyn Fn(&Msg) -> bool| self.msgs.iter().filter(|m| f(m)).count();
        (
            count(&|m| m.ready(now)),
            count(&|m| m.in_flight(now)),
            count(&|m| m.delayed(now)),
        )
    }
}

/// What a valid send does.
#[derive(Debug, Clone)]
pub enum SendPlan {
    /// A new message, visible at `visible_at`; the engine names it.
    New {
        body: String,
        group: Option<String>,
        dedup_key: Option<String>,
        visible_at: u64,
    },
    /// A FIFO duplicate: accepted, not queued, answered with the original's id and number.
    Duplicate { id: String, sequence: u128 },
}

/// A receipt handle as the runner keeps it.
#[derive(Debug, Clone)]
pub struct KnownHandle {
    /// The queue that issued it.
    pub queue: usize,
    /// The handle.
    pub handle: String,
    /// The message it was issued for.
    pub id: String,
}

/// The whole model: a clock and four queues.
#[derive(Debug, Clone)]
pub struct Model {
    /// Now, ms.
    pub now: u64,
    /// Queues, indexed as in [`Setup`].
    pub queues: Vec<Queue>,
}

/// The body of entry body number `n`.
pub fn body(n: u8) -> String {
    format!("body-{n}")
}

impl Model {
    /// Empty queues at `now`.
    pub fn new(setup: &Setup, now: u64) -> Model {
        Model {
            now,
            queues: setup
                .queues
                .iter()
                .map(|s| Queue {
                    setup: s.clone(),
                    msgs: Vec::new(),
                    dedup: BTreeMap::new(),
                    last_sequence: 0,
                })
                .collect(),
        }
    }

    /// Checks one send (single or batch entry) and says what it does (§6.6, §6.9).
    pub fn plan_send(&self, q: usize, e: &Entry) -> Result<SendPlan, ErrorCode> {
        let queue = &self.queues[q];
        let s = &queue.setup;
        let group = e.group.map(|g| format!("g{g}"));
        let dedup = e.dedup.map(|d| format!("d{d}"));
        if s.fifo {
            if group.is_none() {
                return Err(ErrorCode::MissingParameter);
            }
            if dedup.is_none() && !s.content_based {
                return Err(ErrorCode::InvalidParameterValue);
            }
            if e.delay.is_some_and(|d| d != 0) {
                return Err(ErrorCode::InvalidParameterValue);
            }
        } else if e.delay.is_some_and(|d| !(0..=900).contains(&d)) || dedup.is_some() {
            return Err(ErrorCode::InvalidParameterValue);
        }
        let body = body(e.body);
        let delay_s = match e.delay {
            Some(d) if !s.fifo => d.unsigned_abs(),
            _ => u64::from(s.delay_s),
        };
        let dedup_key = s.fifo.then(|| dedup.unwrap_or_else(|| body.clone()));
        if let Some(d) = dedup_key.as_ref().and_then(|k| queue.dedup.get(k))
            && d.expires_ms > self.now
        {
            return Ok(SendPlan::Duplicate {
                id: d.id.clone(),
                sequence: d.sequence,
            });
        }
        Ok(SendPlan::New {
            body,
            group,
            dedup_key,
            visible_at: self.now + delay_s * 1000,
        })
    }

    /// Applies a new message the engine accepted as `id` (with `sequence` on FIFO queues, which
    /// must exceed every number the queue has seen).
    pub fn apply_send(
        &mut self,
        q: usize,
        plan: SendPlan,
        id: String,
        sequence: Option<u128>,
    ) -> Result<(), String> {
        let SendPlan::New {
            body,
            group,
            dedup_key,
            visible_at,
        } = plan
        else {
            return Ok(());
        };
        let now = self.now;
        let queue = &mut self.queues[q];
        if queue.setup.fifo {
            let n = sequence.ok_or("a FIFO send without a SequenceNumber")?;
            if n < SEQUENCE_BASE || n <= queue.last_sequence {
                return Err(format!(
                    "SequenceNumber {n} does not exceed {} (nor 2^64) on {}",
                    queue.last_sequence, queue.setup.name
                ));
            }
            queue.last_sequence = n;
            if let Some(k) = dedup_key {
                let expires_ms = now + DEDUP_WINDOW_MS;
                let d = Dedup {
                    expires_ms,
                    id: id.clone(),
                    sequence: n,
                };
                queue.dedup.insert(k, d);
            }
        } else if sequence.is_some() {
            return Err("a SequenceNumber from a standard queue".into());
        }
        if queue.msgs.iter().any(|m| m.id == id) {
            return Err(format!("MessageId {id} issued twice"));
        }
        queue.msgs.push(Msg {
            id,
            body,
            group,
            sequence,
            sent_ms: now,
            enqueued_ms: now,
            visible_at,
            receive_count: 0,
            first_receive: None,
            last_receive: None,
            handle: None,
            dlq_source: None,
        });
        Ok(())
    }

    /// A standard queue's receive, exactly: the oldest ready messages, those past the
    /// RedrivePolicy's maxReceiveCount moved to the dead-letter queue instead and not counted
    /// (§6.10). A fair queue's noisy tenants (a group with at least 30 messages in flight and
    /// more than a tenth of the queue's) are served last, fewest in flight first (§6.17).
    /// Returns (ids to deliver, ids to move), both in order.
    pub fn plan_standard_receive(&self, q: usize, max: usize) -> (Vec<String>, Vec<String>) {
        let queue = &self.queues[q];
        let redrive = queue.redrive(q);
        let flying: Vec<&Msg> = queue
            .msgs
            .iter()
            .filter(|m| m.in_flight(self.now))
            .collect();
        let mut per_group: BTreeMap<&str, usize> = BTreeMap::new();
        for g in flying.iter().filter_map(|m| m.group.as_deref()) {
            *per_group.entry(g).or_default() += 1;
        }
        let mut noisy: Vec<(usize, &str)> = per_group
            .into_iter()
            .filter(|&(_, n)| n >= 30 && n * 10 > flying.len())
            .map(|(g, n)| (n, g))
            .collect();
        noisy.sort_unstable();
        let rank = |m: &Msg| {
            m.group
                .as_deref()
                .and_then(|g| noisy.iter().position(|&(_, n)| n == g))
                .map_or(0, |i| i + 1)
        };
        let mut ready: Vec<&Msg> = queue.msgs.iter().filter(|m| m.ready(self.now)).collect();
        ready.sort_by_key(|m| rank(m));
        let (mut deliver, mut moved) = (Vec::new(), Vec::new());
        for m in ready {
            if deliver.len() == max {
                break;
            }
            match redrive {
                Some((_, limit)) if m.receive_count >= limit => moved.push(m.id.clone()),
                _ => deliver.push(m.id.clone()),
            }
        }
        (deliver, moved)
    }

    /// Hands `ids` out for `visibility_ms`, each with its receipt handle.
    pub fn deliver(&mut self, q: usize, ids: &[(String, String)], visibility_ms: u64) {
        let now = self.now;
        for (id, handle) in ids {
            if let Some(m) = self.queues[q].get_mut(id) {
                m.receive_count += 1;
                m.first_receive.get_or_insert(now);
                m.last_receive = Some(now);
                m.visible_at = now + visibility_ms;
                m.handle = Some(handle.clone());
            }
        }
    }

    /// Moves `ids` (in arrival order) to the dead-letter queue of `q`: visible at once, same
    /// id, body, send time and receive count (§6.10, G-26).
    pub fn move_to_dlq(&mut self, q: usize, ids: &[String]) {
        let Some((dlq, _)) = self.queues[q].redrive(q) else {
            return;
        };
        for id in ids {
            let Some(pos) = self.queues[q].msgs.iter().position(|m| &m.id == id) else {
                continue;
            };
            let mut m = self.queues[q].msgs.remove(pos);
            m.visible_at = self.now;
            m.last_receive = None;
            m.handle = None;
            m.dlq_source = Some(q);
            let target = &mut self.queues[dlq];
            // Standard queues keep the original enqueue time; FIFO queues reset it (AWS
            // developer guide, "Setting-up dead-letter queue retention"), and localsqs shows
            // the reset as the SentTimestamp too (docs/protocol.md §6.10).
            if target.setup.fifo {
                m.enqueued_ms = self.now;
                m.sent_ms = self.now;
            }
            if let Some(n) = m.sequence {
                target.last_sequence = target.last_sequence.max(n);
            }
            target.msgs.push(m);
        }
        // A message older than the dead-letter queue's retention period is gone on arrival.
        self.expire();
    }

    /// DeleteMessage with a handle of queue `h.queue` sent to queue `q` (§6.8, G-15).
    pub fn delete(&mut self, q: usize, h: Option<&KnownHandle>) -> Result<(), ErrorCode> {
        let h = h
            .filter(|h| h.queue == q)
            .ok_or(ErrorCode::ReceiptHandleIsInvalid)?;
        let now = self.now;
        let queue = &mut self.queues[q];
        let Some(pos) = queue.msgs.iter().position(|m| m.id == h.id) else {
            return Ok(());
        };
        let m = &queue.msgs[pos];
        if queue.setup.fifo && !(m.in_flight(now) && m.handle.as_deref() == Some(&h.handle)) {
            return Err(ErrorCode::InvalidParameterValue);
        }
        queue.msgs.remove(pos);
        Ok(())
    }

    /// ChangeMessageVisibility (§6.8): a stale handle works on standard queues, not on FIFO
    /// ones; the total since the last receive may not pass 12 hours.
    pub fn change_visibility(
        &mut self,
        q: usize,
        h: Option<&KnownHandle>,
        timeout: i64,
    ) -> Result<(), ErrorCode> {
        let h = h
            .filter(|h| h.queue == q)
            .ok_or(ErrorCode::ReceiptHandleIsInvalid)?;
        let invalid = ErrorCode::InvalidParameterValue;
        if !(0..=43_200).contains(&timeout) {
            return Err(invalid);
        }
        let now = self.now;
        let queue = &mut self.queues[q];
        let fifo = queue.setup.fifo;
        let m = queue.get_mut(&h.id).ok_or(invalid)?;
        if fifo && !(m.in_flight(now) && m.handle.as_deref() == Some(&h.handle)) {
            return Err(invalid);
        }
        let received = m.last_receive.ok_or(invalid)?;
        let timeout_ms = timeout.unsigned_abs() * 1000;
        if now - received + timeout_ms > MAX_VISIBILITY_MS {
            return Err(invalid);
        }
        m.visible_at = now + timeout_ms;
        Ok(())
    }

    /// SetQueueAttributes DelaySeconds: a FIFO queue re-places the messages it has never
    /// handed out; a standard queue leaves waiting messages alone (§6.6).
    pub fn set_delay(&mut self, q: usize, delay_s: u32) {
        let queue = &mut self.queues[q];
        queue.setup.delay_s = delay_s;
        if queue.setup.fifo {
            for m in queue.msgs.iter_mut().filter(|m| m.receive_count == 0) {
                m.visible_at = m.sent_ms + u64::from(delay_s) * 1000;
            }
        }
    }

    /// PurgeQueue: every message, and the deduplication memory (§6.9, §6.13).
    pub fn purge(&mut self, q: usize) {
        self.queues[q].msgs.clear();
        self.queues[q].dedup.clear();
    }

    /// Moves the clock.
    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
        self.expire();
    }

    /// Drops messages past their retention period, counted from the original send even in a
    /// dead-letter queue (§6.15), and forgotten deduplication ids.
    fn expire(&mut self) {
        let now = self.now;
        for q in &mut self.queues {
            let keep_ms = u64::from(q.setup.retention_s) * 1000;
            // Each message expires on its own, even behind a younger one (a dead-letter queue
            // holds moved messages with their original send time).
            q.msgs.retain(|m| m.enqueued_ms + keep_ms > now);
            q.dedup.retain(|_, d| d.expires_ms > now);
        }
    }

    /// The next time (after now) a hidden message becomes visible.
    pub fn next_visible(&self) -> Option<u64> {
        self.all()
            .map(|(_, m)| m.visible_at)
            .filter(|t| *t > self.now)
            .min()
    }

    /// The next time a message's retention runs out.
    pub fn next_expiry(&self) -> Option<u64> {
        self.all()
            .map(|(q, m)| m.enqueued_ms + u64::from(self.queues[q].setup.retention_s) * 1000)
            .min()
    }

    /// The next time a deduplication id is forgotten.
    pub fn next_dedup_expiry(&self) -> Option<u64> {
        self.queues
            .iter()
            .flat_map(|q| q.dedup.values().map(|d| d.expires_ms))
            .min()
    }

    fn all(&self) -> impl Iterator<Item = (usize, &Msg)> {
        (0..QUEUES).flat_map(move |q| self.queues[q].msgs.iter().map(move |m| (q, m)))
    }

    /// How many messages the model holds in all.
    pub fn total(&self) -> usize {
        self.queues.iter().map(|q| q.msgs.len()).sum()
    }
}
