//! Engine layer: looking inside without changing anything: the LocalStack-compatible message
//! peek, queue counters for health and metrics, and the reset that drops all state.

use super::Engine;
use super::state::Phase;
use super::store::Op;
use crate::command::{Message, ReceiveMessage};
use crate::error::SqsResult;

/// The receipt handle LocalStack gives peeked messages; it deletes nothing.
pub const PEEK_RECEIPT_HANDLE: &str = "SQS/BACKDOOR/ACCESS";

/// Message counts of one queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueCounts {
    /// Queue name.
    pub name: String,
    /// Receivable now.
    pub visible: usize,
    /// In flight.
    pub in_flight: usize,
    /// Waiting out a delay.
    pub delayed: usize,
}

impl Engine {
    /// Lists a queue's messages in queue order without touching visibility or receive counts.
    /// Visible messages always; in-flight and delayed ones on request.
    pub fn peek(
        &self,
        queue_url: &str,
        show_invisible: bool,
        show_delayed: bool,
    ) -> SqsResult<Vec<Message>> {
        let now = self.now();
        let mut st = self.lock();
        let q = self.queue_mut(&mut st, queue_url)?;
        q.promote(now);
        let all = ReceiveMessage {
            message_system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            ..ReceiveMessage::default()
        };
        Ok(q.msgs
            .values()
            .filter(|m| match m.phase {
                Phase::Ready => true,
                Phase::InFlight => show_invisible,
                Phase::Delayed => show_delayed,
            })
            .map(|m| {
                let handle = PEEK_RECEIPT_HANDLE.to_owned();
                super::message::render(&m.rec, &m.st, handle, &all, &self.inner.cfg.account_id)
            })
            .collect())
    }

    /// Counters of every queue, by name.
    #[must_use]
    pub fn queue_counts(&self) -> Vec<QueueCounts> {
        let now = self.now();
        let mut st = self.lock();
        let mut out: Vec<QueueCounts> = st
            .queues
            .values_mut()
            .map(|q| {
                q.promote(now);
                QueueCounts {
                    name: q.rec.name.clone(),
                    visible: q.ready.len(),
                    in_flight: q.inflight,
                    delayed: q.delayed,
                }
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Drops every queue, message, tombstone and move task, durably.
    pub async fn reset(&self) -> SqsResult<()> {
        let commit = {
            let mut st = self.lock();
            for q in st.queues.values() {
                q.notify.notify_waiters();
            }
            st.queues.clear();
            st.by_name.clear();
            st.tombstones.clear();
            for t in &mut st.tasks {
                t.status = "CANCELLED".into();
            }
            st.tasks.clear();
            self.inner.store.submit(vec![Op::ResetAll])
        };
        self.inner.tasks_notify.notify_waiters();
        self.commit(commit).await
    }
}
