//! Tools layer: one poller of a push target, the part of Lambda's event source mapping that
//! reads the queue. A target runs `max_concurrency` of them, each with at most one batch in
//! flight.
//!
//! A poller long-polls the queue through [`Engine::execute`] (so it sleeps while the queue is
//! idle), fills its batch within the batching window on the server's clock, deletes the
//! records the filter rejects, invokes the handler with a timeout of the queue's
//! VisibilityTimeout (also on the server's clock), then deletes what succeeded. Failed messages
//! are left alone: they become visible again when their visibility timeout ends, their receive
//! count grows, and the queue's RedrivePolicy applies as it does in AWS. FIFO order holds
//! because the engine hands no message of a group out while another of that group is in flight.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use super::event::{self, Verdict};
use super::invoke;
use super::stats::{Counters, Invocation, Outcome, TargetStats};
use super::target::{Compiled, Handler};
use crate::command::{
    Command, DeleteMessageBatch, DeleteMessageBatchRequestEntry, GetQueueAttributes, Message,
    ReceiveMessage, Reply, RequestContext,
};
use crate::engine::{Clock, Engine};
use crate::error::{ErrorCode, SqsError};

/// How often a wait timed on the server's clock looks at it again (the clock can be moved).
const CLOCK_TICK: Duration = Duration::from_millis(100);

/// Pause before retrying when the queue is missing or a receive failed.
const RETRY_PAUSE: Duration = Duration::from_millis(500);

/// Most invocations kept per target for the admin listing.
pub(super) const KEPT_INVOCATIONS: usize = 20;

/// One poller.
pub(super) struct Worker {
    pub engine: Engine,
    pub clock: Arc<dyn Clock>,
    pub id: String,
    pub target: Arc<Compiled>,
    pub stats: Arc<Mutex<TargetStats>>,
    pub counters: Counters,
    pub stop: watch::Receiver<bool>,
}

/// Runs `fut` unless `stop` turns true first (or its sender is gone).
async fn unless_stopped<F: Future>(stop: &watch::Receiver<bool>, fut: F) -> Option<F::Output> {
    let mut stop = stop.clone();
    tokio::select! {
        out = fut => Some(out),
        _ = stop.wait_for(|s| *s) => None,
    }
}

/// Runs `fut` until the server's clock reaches `deadline_ms`; `None` when it does first.
async fn until_clock<F: Future>(clock: &dyn Clock, deadline_ms: u64, fut: F) -> Option<F::Output> {
    tokio::pin!(fut);
    loop {
        let now = clock.now_ms();
        if now >= deadline_ms {
            return None;
        }
        let nap = Duration::from_millis(deadline_ms - now).min(CLOCK_TICK);
        tokio::select! {
            out = &mut fut => return Some(out),
            () = tokio::time::sleep(nap) => {}
        }
    }
}

impl Worker {
    /// The context of the poller's requests: the configured account and region.
    fn ctx(&self) -> RequestContext {
        RequestContext::new("http://localhost", self.engine.default_scope())
    }

    fn queue(&self) -> &str {
        &self.target.target.queue
    }

    fn queue_url(&self) -> String {
        format!("/{}/{}", self.engine.config().account_id, self.queue())
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, TargetStats> {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Polls, invokes and deletes until stopped.
    pub async fn run(self) {
        tracing::debug!(target_id = %self.id, queue = self.queue(), "push poller started");
        while !*self.stop.borrow() {
            let Some(batch) = self.gather().await else {
                break;
            };
            if !batch.is_empty() && self.deliver(batch).await.is_none() {
                break;
            }
        }
        tracing::debug!(target_id = %self.id, queue = self.queue(), "push poller stopped");
    }

    /// One ReceiveMessage; `None` when stopped meanwhile.
    async fn receive(&self, max: usize, wait_s: u64) -> Option<Result<Vec<Message>, SqsError>> {
        let cmd = Command::ReceiveMessage(ReceiveMessage {
            queue_url: self.queue_url(),
            attribute_names: vec!["All".into()],
            message_system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            max_number_of_messages: Some(i64::try_from(max.clamp(1, 10)).unwrap_or(10)),
            wait_time_seconds: Some(i64::try_from(wait_s.min(20)).unwrap_or(20)),
            ..ReceiveMessage::default()
        });
        let out = unless_stopped(&self.stop, self.engine.execute(&self.ctx(), cmd)).await?;
        Some(out.map(|r| match r {
            Reply::ReceiveMessage(r) => r.messages,
            _ => Vec::new(),
        }))
    }

    /// Collects one batch: a long poll for the first messages, then more until the batch is
    /// full or the batching window closes. Empty when there was nothing; `None` when stopped.
    async fn gather(&self) -> Option<Vec<Message>> {
        let t = &self.target.target;
        let size = t.batch_size as usize;
        let started = Instant::now();
        let mut batch = match self.receive(size, 20).await? {
            Ok(m) => m,
            Err(e) => {
                self.receive_failed(&e);
                unless_stopped(&self.stop, tokio::time::sleep(RETRY_PAUSE)).await?;
                return Some(Vec::new());
            }
        };
        if batch.is_empty() {
            // A long poll ends empty when its wait is over; one that ends at once (the engine
            // is closing, the queue went away) must not turn this loop into a busy one.
            if started.elapsed() < Duration::from_millis(10) {
                unless_stopped(&self.stop, tokio::time::sleep(Duration::from_millis(10))).await?;
            }
            return Some(batch);
        }
        self.stats().last_error = None;
        let window_ms = u64::from(t.maximum_batching_window_seconds) * 1000;
        let deadline = self.clock.now_ms().saturating_add(window_ms);
        while batch.len() < size {
            let now = self.clock.now_ms();
            if now >= deadline {
                break;
            }
            let wait_s = (deadline - now).div_ceil(1000);
            match self.receive(size - batch.len(), wait_s).await? {
                Ok(more) => batch.extend(more),
                Err(e) => {
                    self.receive_failed(&e);
                    break;
                }
            }
        }
        Some(batch)
    }

    fn receive_failed(&self, e: &SqsError) {
        let text = if e.code == ErrorCode::QueueDoesNotExist {
            format!("queue {} does not exist", self.queue())
        } else {
            format!("ReceiveMessage: {e}")
        };
        let mut stats = self.stats();
        if stats.last_error.as_deref() != Some(text.as_str()) {
            tracing::warn!(target_id = %self.id, queue = self.queue(), error = %text, "push target cannot receive");
            stats.last_error = Some(text);
        }
    }

    /// The queue's VisibilityTimeout in seconds (30 when it cannot be read), at least 1.
    async fn visibility_timeout(&self) -> u64 {
        let cmd = Command::GetQueueAttributes(GetQueueAttributes {
            queue_url: self.queue_url(),
            attribute_names: vec!["VisibilityTimeout".into()],
        });
        let seconds = match self.engine.execute(&self.ctx(), cmd).await {
            Ok(Reply::GetQueueAttributes(r)) => r
                .attributes
                .iter()
                .find(|(k, _)| k == "VisibilityTimeout")
                .and_then(|(_, v)| v.parse().ok()),
            _ => None,
        };
        seconds.unwrap_or(30).max(1)
    }

    /// Deletes messages by receipt handle, ten per DeleteMessageBatch; the number deleted.
    async fn delete(&self, messages: &[&Message]) -> u64 {
        let mut deleted = 0;
        for chunk in messages.chunks(10) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(i, m)| DeleteMessageBatchRequestEntry {
                    id: i.to_string(),
                    receipt_handle: m.receipt_handle.clone(),
                })
                .collect();
            let cmd = Command::DeleteMessageBatch(DeleteMessageBatch {
                queue_url: self.queue_url(),
                entries,
            });
            match self.engine.execute(&self.ctx(), cmd).await {
                Ok(Reply::DeleteMessageBatch(r)) => {
                    deleted += r.successful.len() as u64;
                    for f in r.failed {
                        tracing::warn!(target_id = %self.id, queue = self.queue(), error = %f.message, "push target could not delete a message");
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(target_id = %self.id, queue = self.queue(), error = %e, "push target could not delete messages");
                }
            }
        }
        deleted
    }

    /// Filters, invokes and settles one batch; `None` when stopped during the invocation.
    async fn deliver(&self, batch: Vec<Message>) -> Option<()> {
        let t = &self.target.target;
        let arn = self.engine.queue_arn(self.queue());
        let region = self.engine.config().region.clone();
        let mut records = Vec::with_capacity(batch.len());
        let mut rejected = Vec::new();
        for m in &batch {
            let r = event::record(m, &arn, &region);
            match &self.target.filter {
                Some(f) if !f.matches(&r) => rejected.push(m),
                _ => records.push((m, r)),
            }
        }
        if !rejected.is_empty() {
            let n = self.delete(&rejected).await;
            self.counters.filtered(self.queue(), n);
            self.stats().messages_filtered += n;
        }
        if records.is_empty() {
            return Some(());
        }
        let ids: HashSet<&str> = records.iter().map(|(m, _)| m.message_id.as_str()).collect();
        let timeout_s = self.visibility_timeout().await;
        let at_ms = self.clock.now_ms();
        let started = Instant::now();
        let payload = event::event(
            records
                .iter()
                .map(|(_, r)| r.clone())
                .collect::<Vec<Value>>(),
        );
        let call = async {
            match &self.target.handler {
                Handler::Http(endpoint) => invoke::http(endpoint, payload).await,
                Handler::Command(argv) => invoke::command(argv, payload).await,
            }
        };
        let deadline = at_ms.saturating_add(timeout_s * 1000);
        let result = unless_stopped(&self.stop, until_clock(&*self.clock, deadline, call)).await?;
        let (outcome, verdict) = match result {
            None => (
                Outcome::Timeout,
                Verdict::Failure(format!(
                    "timed out after {timeout_s} s (the queue's VisibilityTimeout)"
                )),
            ),
            Some(Err(e)) => (Outcome::Failure, Verdict::Failure(e)),
            Some(Ok(answer)) => {
                let v = event::verdict(&answer, &ids, t.report_batch_item_failures);
                let o = match &v {
                    Verdict::Success => Outcome::Success,
                    Verdict::Partial(_) => Outcome::Partial,
                    Verdict::Failure(_) => Outcome::Failure,
                };
                (o, v)
            }
        };
        let (done, failed_items, error): (Vec<&Message>, Vec<String>, Option<String>) =
            match verdict {
                Verdict::Success => (records.iter().map(|(m, _)| *m).collect(), Vec::new(), None),
                Verdict::Partial(failed) => {
                    let done = records
                        .iter()
                        .map(|(m, _)| *m)
                        .filter(|m| !failed.contains(&m.message_id))
                        .collect();
                    (done, failed, None)
                }
                Verdict::Failure(e) => (Vec::new(), Vec::new(), Some(e)),
            };
        let deleted = self.delete(&done).await;
        let size = records.len();
        let kept = (size - done.len()) as u64;
        self.counters
            .invoked(self.queue(), outcome, failed_items.len() as u64);
        match &error {
            Some(e) => {
                tracing::warn!(target_id = %self.id, queue = self.queue(), batch = size, outcome = outcome.as_str(), error = %e, "push invocation failed")
            }
            None => {
                tracing::debug!(target_id = %self.id, queue = self.queue(), batch = size, outcome = outcome.as_str(), failed_items = failed_items.len(), "push invocation")
            }
        }
        let mut stats = self.stats();
        stats.invocations += 1;
        if matches!(outcome, Outcome::Failure | Outcome::Timeout) {
            stats.failures += 1;
        }
        stats.messages_deleted += deleted;
        stats.messages_failed += kept;
        if stats.last_invocations.len() == KEPT_INVOCATIONS {
            stats.last_invocations.pop_front();
        }
        stats.last_invocations.push_back(Invocation {
            at_ms,
            batch_size: size,
            outcome,
            error,
            failed_items,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        Some(())
    }
}
