//! Engine layer: ReceiveMessage with long polling that wakes, never polls.
//!
//! A receiver registers with the queue's `Notify` *before* it looks at the queue, so a send that
//! lands between the look and the wait still wakes it. It then sleeps until the earlier of its
//! deadline and the moment the next delayed or in-flight message becomes visible.

use std::pin::pin;
use std::time::Duration;

use std::sync::Arc;

use tokio::sync::Notify;

use super::Engine;
use super::message::receive_options;
use super::store::Commit;
use crate::command::{ReceiveMessage, ReceiveMessageResult};
use crate::error::{SqsError, SqsResult};

enum Step {
    Done(Vec<crate::command::Message>, Commit),
    Wait(Arc<Notify>, u64, Commit),
}

impl Engine {
    pub(super) async fn receive_message(
        &self,
        c: &ReceiveMessage,
    ) -> SqsResult<ReceiveMessageResult> {
        let opts = receive_options(c)?;
        let mut deadline: Option<u64> = None;
        loop {
            let now = self.now();
            let step = {
                let mut st = self.lock();
                let id = match self.resolve(&st, &c.queue_url) {
                    Ok(id) => id,
                    // The queue went away while we were parked: answer empty.
                    Err(_) if deadline.is_some() => return Ok(ReceiveMessageResult::default()),
                    Err(e) => return Err(e),
                };
                let q = st
                    .queues
                    .get_mut(&id)
                    .ok_or_else(SqsError::queue_does_not_exist)?;
                let deadline = *deadline.get_or_insert_with(|| {
                    let wait_s = c
                        .wait_time_seconds
                        .map_or(q.settings.wait, i64::unsigned_abs);
                    now + wait_s * 1000
                });
                let mut ops = Vec::new();
                let messages = self.try_receive(q, c, opts, now, &mut ops)?;
                let commit = self.inner.store.submit(ops);
                if !messages.is_empty() || now >= deadline || self.closing() {
                    Step::Done(messages, commit)
                } else {
                    let wake_at = q.next_visible_at().map_or(deadline, |t| t.min(deadline));
                    Step::Wait(q.notify.clone(), wake_at, commit)
                }
            };
            let (notify, wake_at) = match step {
                Step::Done(messages, commit) => {
                    self.commit(commit).await?;
                    return Ok(ReceiveMessageResult { messages });
                }
                // Expired messages may have been dropped; that commit needs no waiting.
                Step::Wait(notify, wake_at, _commit) => (notify, wake_at),
            };
            let mut notified = pin!(notify.notified());
            // Register before re-checking so no wake-up between check and wait is lost.
            notified.as_mut().enable();
            if self.has_ready(&c.queue_url) {
                continue;
            }
            let sleep_ms = wake_at.saturating_sub(self.now());
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
            }
        }
    }

    /// Whether the queue has something receivable right now (cheap re-check after registering).
    fn has_ready(&self, url: &str) -> bool {
        let now = self.now();
        let mut st = self.lock();
        let Ok(id) = self.resolve(&st, url) else {
            return true;
        };
        st.queues.get_mut(&id).is_none_or(|q| {
            q.promote(now);
            !q.ready.is_empty()
        })
    }
}
