//! Engine layer: ReceiveMessage with long polling that wakes, never polls.
//!
//! A receiver registers with the queue's `Notify` *while it still holds the engine lock*, right
//! after finding nothing to receive, so a send that lands after the look still wakes it. It then
//! sleeps until the earlier of its deadline and the moment the next delayed or in-flight message
//! becomes visible. Sends, visibility changes, redrives and deletes of the queue notify it.

use std::pin::Pin;
use std::time::Duration;

use tokio::sync::futures::OwnedNotified;

use super::Engine;
use super::message::receive_options;
use super::store::Commit;
use crate::command::{Message, ReceiveMessage, ReceiveMessageResult};
use crate::error::{SqsError, SqsResult};

enum Step {
    Done(Vec<Message>, Commit),
    Wait(Pin<Box<OwnedNotified>>, u64),
}

impl Engine {
    pub(super) async fn receive_message(
        &self,
        c: &ReceiveMessage,
        random_order: Option<u64>,
    ) -> SqsResult<ReceiveMessageResult> {
        let mut opts = receive_options(c)?;
        opts.random_order = random_order;
        let mut deadline: Option<u64> = None;
        loop {
            let now = self.now();
            let step = {
                let mut reg = self.lock();
                let id = match self.resolve(&reg, &c.queue_url) {
                    Ok(id) => id,
                    // The queue went away while we were parked: answer empty.
                    Err(_) if deadline.is_some() => return Ok(ReceiveMessageResult::default()),
                    Err(e) => return Err(e),
                };
                let wait_default = reg.get(id).map_or(0, |q| {
                    u64::from(q.attributes().receive_message_wait_time_seconds)
                });
                let deadline = *deadline.get_or_insert_with(|| {
                    let wait_s = c.wait_time_seconds.map_or(wait_default, i64::unsigned_abs);
                    now + wait_s * 1000
                });
                let mut ops = Vec::new();
                let messages = self.try_receive(&mut reg, id, c, opts, now, &mut ops)?;
                let commit = self.inner.store.submit(ops);
                let q = reg.get(id).ok_or_else(SqsError::queue_does_not_exist)?;
                if !messages.is_empty() || now >= deadline || self.closing() {
                    Step::Done(messages, commit)
                } else {
                    // Expired messages may have been dropped; that commit needs no waiting.
                    drop(commit);
                    let mut notified = Box::pin(q.notify().clone().notified_owned());
                    notified.as_mut().enable();
                    let wake_at = q
                        .messages()
                        .next_visible_at()
                        .map_or(deadline, |t| t.min(deadline));
                    Step::Wait(notified, wake_at)
                }
            };
            match step {
                Step::Done(messages, commit) => {
                    self.commit(commit).await?;
                    return Ok(ReceiveMessageResult { messages });
                }
                Step::Wait(notified, wake_at) => {
                    let sleep_ms = wake_at.saturating_sub(self.now());
                    tokio::select! {
                        () = notified => {}
                        () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
                    }
                }
            }
        }
    }
}
