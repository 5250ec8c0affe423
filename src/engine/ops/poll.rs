//! Engine layer, ops: ReceiveMessage: one receive under the lock, and long polling that wakes,
//! never polls (docs/protocol.md §6.7–§6.10).
//!
//! A receiver registers with the queue's `Notify` *while it still holds the engine lock*, right
//! after finding nothing to receive, so a change that lands after the look still wakes it. It
//! then sleeps until the earlier of its deadline and the moment the next delayed or in-flight
//! message becomes visible (visibility and delay expiry need no other wake-up). Every change
//! that may make a message receivable, or receivable sooner, notifies the queue: sends, deletes
//! that free a FIFO group or room under the in-flight limit, visibility changes, receives with a
//! short VisibilityTimeout, moves to a dead-letter queue or by a move task, attribute changes,
//! and a controlled clock moving (`Engine::wake_all`). A change that makes nothing receivable,
//! such as a send to a FIFO group whose head is in flight, wakes no one (`Queue::wake_after`).

use std::task::Poll;
use std::time::Duration;

use tokio::sync::futures::OwnedNotified;

use super::cold::{Picked, Taken};
use super::message::{MAX_VISIBILITY_S, render};
use super::redrive;
use crate::command::validate;
use crate::command::{ReceiveMessage, ReceiveMessageResult, Scope};
use crate::engine::handle::{Access, Engine};
use crate::engine::model::address;
use crate::engine::model::polls::Parked;
use crate::engine::model::receipt::Receipt;
use crate::engine::model::registry::Registry;
use crate::engine::store::schema::{Commit, Op};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// AWS's OverLimit text for a receive past the in-flight limit [V, old: raw AWS XML of 2014 in
/// Cbsoftware/pressureNET-server #74, line break included] (§5.5, §6.8).
pub(super) const TOO_MANY_IN_FLIGHT: &str = "Too many messages have been received without being deleted.\nPlease delete your received messages or let them timeout before receiving more.";

/// Validated per-receive options.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReceiveOptions {
    pub max: usize,
    pub visibility_s: Option<u64>,
    /// Standard queues only: pick receivable messages at random, from this seed (given by the
    /// installed `ReceiveOrder`).
    pub random_order: Option<u64>,
    /// The receive does not wait (WaitTimeSeconds, or the queue's default, is 0): only then
    /// does a standard queue at its in-flight limit answer OverLimit (§6.8).
    pub short_poll: bool,
    /// LocalStack's wait override: the poll keeps what it takes and waits until it has `max`
    /// messages or its time is up, rather than answering with the first it finds.
    pub fill: bool,
}

enum Step {
    Done(Picked, Commit),
    /// Parked until this time, the queue's notification, or a release.
    Wait(u64),
    /// A filling poll took these and waits for more, as [`Step::Wait`].
    More(Picked, Commit, u64),
}

impl Engine {
    pub(super) async fn receive_message(
        &self,
        scope: &Scope,
        c: &ReceiveMessage,
    ) -> SqsResult<ReceiveMessageResult> {
        // Parsed once: for the receive order now, and to find the queue under the lock.
        let parts = address::parse_url(&c.queue_url);
        let random_order = parts.and_then(|p| self.receive_seed(p.name));
        let mut opts = receive_options(c)?;
        opts.random_order = random_order;
        let mut deadline: Option<u64> = None;
        // The queue's notification, pinned here rather than boxed per park; and the poll's
        // place among the parked polls, taken when it first parks and kept until it ends.
        let mut notified = std::pin::pin!(None::<OwnedNotified>);
        let mut parked: Option<Parked> = None;
        // What a filling poll (LocalStack's wait override) has taken so far.
        let mut gathered: Vec<crate::command::Message> = Vec::new();
        loop {
            let now = self.now();
            if deadline.is_some_and(|d| now >= d) && !gathered.is_empty() {
                // A filling poll's time is up: it answers with what it has, and takes nothing
                // more (a message it took could be visible again by now).
                return Ok(ReceiveMessageResult { messages: gathered });
            }
            if deadline.is_some() {
                // Parked while storage was fine: it may not be now (a full disk). One atomic
                // load; `execute` checked the first look.
                self.refuse_unwritable(Access::Consume)?;
            }
            let step = {
                let mut reg = self.lock();
                let found = parts.ok_or_else(SqsError::queue_does_not_exist);
                let id = match found.and_then(|p| self.resolve_parts(&reg, scope, p)) {
                    Ok(id) => id,
                    // The queue went away while we were parked: answer what was taken.
                    Err(_) if deadline.is_some() => {
                        return Ok(ReceiveMessageResult { messages: gathered });
                    }
                    Err(e) => return Err(e),
                };
                let deadline = match deadline {
                    Some(d) => d,
                    None => {
                        let wait_default = reg.get(id).map_or(0, |q| {
                            u64::from(q.attributes().receive_message_wait_time_seconds)
                        });
                        let wait_s = match c.override_wait_s {
                            Some(w) => u64::from(w),
                            None => c.wait_time_seconds.map_or(wait_default, i64::unsigned_abs),
                        };
                        opts.short_poll = wait_s == 0;
                        *deadline.insert(now + wait_s * 1000)
                    }
                };
                let mut ops = Vec::new();
                let picked = self.try_receive(&mut reg, id, c, opts, now, &mut ops)?;
                let commit = self.submit_puts(&mut reg, ops);
                let q = reg.get(id).ok_or_else(SqsError::queue_does_not_exist)?;
                let filling = opts.fill && picked.len() < opts.max;
                if (!picked.is_empty() && !filling) || now >= deadline || self.closing() {
                    Step::Done(picked, commit)
                } else {
                    notified.set(Some(q.notify().clone().notified_owned()));
                    if let Some(n) = notified.as_mut().as_pin_mut() {
                        n.enable();
                    }
                    let wake_at = q
                        .messages()
                        .next_visible_at()
                        .map_or(deadline, |t| t.min(deadline));
                    if parked.is_none() {
                        parked = Some(reg.polls.park());
                    }
                    if picked.is_empty() {
                        // Expired messages may have been dropped; that commit needs no waiting.
                        drop(commit);
                        Step::Wait(wake_at)
                    } else {
                        opts.max -= picked.len();
                        Step::More(picked, commit, wake_at)
                    }
                }
            };
            let wake_at = match step {
                Step::Done(picked, commit) => {
                    // Records not in memory are read after the lock is released.
                    gathered.extend(self.complete(picked, c));
                    self.commit(commit).await?;
                    return Ok(ReceiveMessageResult { messages: gathered });
                }
                Step::More(picked, commit, wake_at) => {
                    gathered.extend(self.complete(picked, c));
                    self.commit(commit).await?;
                    wake_at
                }
                Step::Wait(wake_at) => wake_at,
            };
            let sleep_ms = wake_at.saturating_sub(self.now());
            let woken = async {
                if let Some(n) = notified.as_mut().as_pin_mut() {
                    n.await;
                }
            };
            let released = std::future::poll_fn(|cx| {
                parked
                    .as_ref()
                    .map_or(Poll::Pending, |p| p.slot().poll_released(cx))
            });
            tokio::select! {
                () = woken => {}
                () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
                // Answered early, with nothing (more) taken: the client polls again.
                () = released => return Ok(ReceiveMessageResult { messages: gathered }),
            }
        }
    }

    /// How many ReceiveMessage long polls are parked now, waiting for a message or their
    /// deadline. One atomic load, no lock.
    #[must_use]
    pub fn parked_polls(&self) -> usize {
        self.inner.parked.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Answers up to `n` of the oldest parked long polls at once with no messages (as SQS may
    /// answer a long poll; the clients poll again), so that the connections they hold can
    /// serve others. Answers how many were released. Safe for FIFO queues: a released poll
    /// has taken nothing and leaves no state behind (a retry with the same
    /// ReceiveRequestAttemptId receives normally). Polls that park later are not affected.
    /// Costs nothing until called: parking keeps one allocation, as before.
    pub fn release_oldest_polls(&self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        self.lock().polls.release_oldest(n)
    }

    /// The seed of a random receive order for the queue named `name` (as its URL gives it),
    /// when the installed `ReceiveOrder` gives one. Asked only for standard queues: a name
    /// that ends in `.fifo` is a FIFO queue's (§6.2). Asked before the lock, once per request.
    fn receive_seed(&self, name: &str) -> Option<u64> {
        let order = self.inner.cfg.receive_order.as_deref()?;
        if name.ends_with(".fifo") {
            return None;
        }
        order.seed(name)
    }

    /// One receive attempt under the lock: expires, promotes, then takes up to `opts.max`
    /// receivable messages of queue `id`, within the in-flight limit (§6.8). A message whose
    /// receive would pass the queue's maxReceiveCount is moved to the dead-letter queue instead
    /// (§6.10). FIFO messages are rendered here (a retried attempt returns exactly them);
    /// standard ones are rendered by [`Engine::complete`] after the lock, when their records
    /// not in memory have been read.
    pub(super) fn try_receive(
        &self,
        reg: &mut Registry,
        id: u64,
        c: &ReceiveMessage,
        opts: ReceiveOptions,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> SqsResult<Picked> {
        // (maxReceiveCount, dead-letter queue id), when the queue has a usable one.
        let dlq = reg
            .get(id)
            .and_then(|q| q.attributes().redrive_policy.as_ref())
            .and_then(|p| {
                let dlq = self.queue_by_arn(reg, &p.dead_letter_target_arn)?;
                Some((p.max_receive_count, dlq))
            })
            .filter(|&(_, d)| d != id);
        let limit = self.max_inflight();
        let q = reg.get_mut(id).ok_or_else(SqsError::queue_does_not_exist)?;
        q.expire(now, ops);
        q.promote(now);
        let before = q.watch(limit);
        let visibility_s = opts
            .visibility_s
            .unwrap_or_else(|| u64::from(q.attributes().visibility_timeout));
        let visibility_ms = visibility_s * 1000;
        if q.is_fifo() {
            let queue_id = q.id();
            q.fifo_state().prune(queue_id, now, ops);
            if let Some(id) = &c.receive_request_attempt_id
                && let Some(messages) = q.retry(id, now)
            {
                return Ok(Picked::Done(messages));
            }
            q.set_window(limit);
        }
        // At the in-flight limit a standard queue's short poll fails; anything else just
        // receives nothing more (§6.8).
        let room = limit.map_or(usize::MAX, |l| {
            l.saturating_sub(q.messages().inflight_count())
        });
        if room == 0 && !q.is_fifo() && opts.short_poll {
            return Err(SqsError::new(ErrorCode::OverLimit, TOO_MANY_IN_FLIGHT));
        }
        let max = opts.max.min(room);
        let mut taken: Vec<Taken> = Vec::new();
        let mut moved = Vec::new();
        // A fair queue's noisy tenants, decided once for the whole receive (§6.17); nothing to
        // decide on a queue without group ids.
        let noisy = if q.is_fifo() {
            None
        } else {
            q.messages().noisy()
        };
        while taken.len() < max {
            let want = max - taken.len();
            let picks = match (opts.random_order, &noisy) {
                (Some(seed), _) if !q.is_fifo() => q.messages().pick_random(want, seed),
                (_, Some(noisy)) => q.messages().pick_fair(want, noisy),
                _ => q.messages().pick(want),
            };
            if picks.is_empty() {
                break;
            }
            let mut any_moved = false;
            for seq in picks {
                if let Some((max, _)) = dlq
                    && q.messages()
                        .get(seq)
                        .is_some_and(|m| m.receive_count() >= max)
                    && let Some(rec) = self.record(q, seq)
                    && let Some(m) = q.delete(seq, ops)
                {
                    moved.push((rec, m.state()));
                    any_moved = true;
                    continue;
                }
                let nonce = self.inner.ids.next_u64() | 1;
                let queue_id = q.id();
                let Some(m) = q.receive(seq, now + visibility_ms, nonce, now, ops) else {
                    continue;
                };
                let handle = Receipt {
                    queue_id,
                    seq,
                    nonce,
                    message: m.fp(),
                }
                .encode(self.inner.ids.next_u64());
                taken.push(Taken {
                    seq,
                    fp: m.fp(),
                    handle,
                    state: m.state(),
                    rec: m.record().cloned(),
                });
            }
            if !any_moved {
                break;
            }
        }
        if visibility_ms == 0 {
            // Handed out visible: FIFO groups go to the back in the order they were served.
            let seqs: Vec<u64> = taken.iter().map(|t| t.seq).collect();
            q.reveal(&seqs, now);
        }
        self.inner.metrics.received.inc_by(taken.len() as u64);
        q.traffic_mut().received += taken.len() as u64;
        let picked = if q.is_fifo() {
            // Read and rendered under the lock: a retried attempt id must return these.
            let seqs: Vec<u64> = taken.iter().map(|t| t.seq).collect();
            let records = self.records(q, &seqs);
            let mut out = Vec::with_capacity(taken.len());
            let mut handed_out = Vec::with_capacity(taken.len());
            for (t, rec) in taken.into_iter().zip(records) {
                let Some(rec) = rec else { continue };
                let sender = &self.inner.cfg.account_id;
                out.push(render(&rec, &t.state, t.handle, c, sender));
                handed_out.push((t.seq, t.state.nonce));
            }
            if let Some(id) = &c.receive_request_attempt_id
                && !out.is_empty()
            {
                q.fifo_state().remember_attempt(id, now, handed_out, &out);
            }
            Picked::Done(out)
        } else {
            Picked::Fetch {
                queue_id: q.id(),
                taken,
            }
        };
        // Messages visible again at once, a group freed by a move to the dead-letter queue, or
        // an earlier visibility time: other parked polls look again.
        q.wake_after(before, limit);
        if let Some((_, dlq_id)) = dlq
            && !moved.is_empty()
        {
            self.inner.metrics.dlq_moved.inc_by(moved.len() as u64);
            let source_arn = q.arn();
            if let Some(d) = reg.get_mut(dlq_id) {
                redrive::arrive(d, moved, &source_arn, now, ops);
            }
        }
        Ok(picked)
    }
}

/// Validates ReceiveMessage options with AWS's texts (§5.5, §6.7). LocalStack's override
/// headers (`--compat localstack`) replace MaxNumberOfMessages and WaitTimeSeconds, unchecked.
pub(super) fn receive_options(c: &ReceiveMessage) -> SqsResult<ReceiveOptions> {
    let max = match c.override_max {
        Some(n) => i64::from(n),
        None => c.max_number_of_messages.unwrap_or(1),
    };
    if c.override_max.is_none() && !(1..=10).contains(&max) {
        return Err(SqsError::invalid_param(
            &max.to_string(),
            "MaxNumberOfMessages",
            "Must be between 1 and 10, if provided.",
        ));
    }
    if let Some(w) = c.wait_time_seconds
        && c.override_wait_s.is_none()
        && !(0..=20).contains(&w)
    {
        return Err(SqsError::invalid_param(
            &w.to_string(),
            "WaitTimeSeconds",
            "Must be >= 0 and <= 20, if provided.",
        ));
    }
    if let Some(v) = c.visibility_timeout
        && !(0..=MAX_VISIBILITY_S).contains(&v)
    {
        // [E] wording.
        return Err(SqsError::invalid_param(
            &v.to_string(),
            "VisibilityTimeout",
            "Must be >= 0 and <= 43200, if provided.",
        ));
    }
    if let Some(id) = &c.receive_request_attempt_id {
        validate::fifo_param(id, "ReceiveRequestAttemptId")?;
    }
    Ok(ReceiveOptions {
        max: usize::try_from(max).unwrap_or(1),
        visibility_s: c.visibility_timeout.map(i64::unsigned_abs),
        random_order: None,
        short_poll: true,
        // With a ReceiveRequestAttemptId the poll answers with the first it finds: a retry
        // must return exactly one earlier answer (§6.7).
        fill: c.override_wait_s.is_some() && c.receive_request_attempt_id.is_none(),
    })
}
