//! Looking at the engine's state and comparing it with the model's: a message as returned
//! (body, MD5, system attributes), every queue's counters through GetQueueAttributes and its
//! messages through the read-only peek, and the drain that ends every run by receiving and
//! deleting whatever the model says is left.

use localsqs::command::{Command, GetQueueAttributes, Message, Reply};

use super::model::Msg;
use super::ops::{Handle, QUEUES, Step};
use super::run::{Check, Run, md5_hex};
use super::sut::{arn, url};

/// Most receive-and-delete rounds of a drain.
const DRAIN_ROUNDS: usize = 200;

impl Run {
    /// Compares a message the engine returned from queue `q` with the model's.
    pub(super) fn compare_message(&self, q: usize, m: &Message) -> Check {
        let queue = &self.model.queues[q];
        let want = queue.get(&m.message_id).ok_or_else(|| {
            format!(
                "{} returned {}, which the model does not hold",
                queue.setup.name, m.message_id
            )
        })?;
        let what = |field: &str| format!("{} in {}: {field}", m.message_id, queue.setup.name);
        if m.body != want.body || m.md5_of_body != md5_hex(&want.body) {
            return Err(what(&format!(
                "body {:?} / {}, model {:?}",
                m.body, m.md5_of_body, want.body
            )));
        }
        let attr = |name: &str| {
            m.attributes
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let expect: [(&str, Option<String>); 6] = [
            (
                "ApproximateReceiveCount",
                Some(want.receive_count.to_string()),
            ),
            ("SentTimestamp", Some(want.sent_ms.to_string())),
            (
                "ApproximateFirstReceiveTimestamp",
                want.first_receive.map(|t| t.to_string()),
            ),
            ("MessageGroupId", want.group.clone()),
            ("SequenceNumber", want.sequence.map(|n| n.to_string())),
            (
                "DeadLetterQueueSourceArn",
                want.dlq_source
                    .map(|s| arn(self.model.queues[s].setup.name)),
            ),
        ];
        for (name, value) in expect {
            let got = attr(name);
            if got != value {
                return Err(what(&format!("{name} {got:?}, model {value:?}")));
            }
        }
        Ok(())
    }

    /// Compares every queue: the three counters, and the messages in queue order with their
    /// phases (ready, in flight, delayed).
    pub(super) async fn inspect(&self) -> Check {
        let now = self.model.now;
        for q in 0..QUEUES {
            let name = self.name(q);
            let queue = &self.model.queues[q];
            let got = self
                .sut
                .exec(Command::GetQueueAttributes(GetQueueAttributes {
                    queue_url: url(name),
                    attribute_names: vec!["All".into()],
                }))
                .await;
            let Ok(Reply::GetQueueAttributes(r)) = got else {
                return Err(format!("GetQueueAttributes {name}: {got:?}"));
            };
            let n = |k: &str| {
                r.attributes
                    .iter()
                    .find(|(a, _)| a == k)
                    .and_then(|(_, v)| v.parse::<usize>().ok())
            };
            let counters = (
                n("ApproximateNumberOfMessages"),
                n("ApproximateNumberOfMessagesNotVisible"),
                n("ApproximateNumberOfMessagesDelayed"),
            );
            let (ready, in_flight, delayed) = queue.counters(now);
            if counters != (Some(ready), Some(in_flight), Some(delayed)) {
                return Err(format!(
                    "{name}: counters (visible, not visible, delayed) {counters:?}, model {:?}",
                    (ready, in_flight, delayed)
                ));
            }
            let ids = |ms: &[Message]| ms.iter().map(|m| m.message_id.clone()).collect::<Vec<_>>();
            let want = |f: &dyn Fn(&Msg) -> bool| {
                queue
                    .msgs
                    .iter()
                    .filter(|m| f(m))
                    .map(|m| m.id.clone())
                    .collect::<Vec<_>>()
            };
            let all = self.sut.peek(name, true, true);
            let views = [
                ("every message", ids(&all), want(&|_| true)),
                (
                    "ready",
                    ids(&self.sut.peek(name, false, false)),
                    want(&|m| m.ready(now)),
                ),
                (
                    "not delayed",
                    ids(&self.sut.peek(name, true, false)),
                    want(&|m| !m.delayed(now)),
                ),
            ];
            for (view, got, want) in views {
                if got != want {
                    return Err(format!("{name}, {view}: engine {got:?}, model {want:?}"));
                }
            }
            for m in &all {
                self.compare_message(q, m)?;
            }
        }
        Ok(())
    }

    /// Receives and deletes until the model says every queue is empty, moving the clock to the
    /// next visibility when nothing is ready; then compares once more. Every receive and delete
    /// is checked as in the run, so a message the engine lost, or kept after the model let it
    /// go, shows up here at the latest.
    pub async fn drain(&mut self) -> Check {
        self.inspect().await?;
        for _ in 0..DRAIN_ROUNDS {
            if self.model.total() == 0 {
                break;
            }
            let (total, start) = (self.model.total(), self.handles.len());
            for q in 0..QUEUES {
                if self.model.queues[q].msgs.is_empty() {
                    continue;
                }
                let before = self.handles.len();
                // A visibility of 0 would leave nothing to delete on a FIFO queue (§6.8).
                self.receive(q, 10, Some(30)).await?;
                for i in before..self.handles.len() {
                    self.delete(Handle::Known(i)).await?;
                }
            }
            // Nothing received and nothing moved: wait for the next hidden message.
            if self.handles.len() == start && self.model.total() == total {
                self.step(&super::ops::Op::Advance(Step::NextVisible(0)))
                    .await?;
            }
        }
        self.inspect().await?;
        match self.model.total() {
            0 => Ok(()),
            n => Err(format!(
                "the drain left {n} messages after {DRAIN_ROUNDS} rounds"
            )),
        }
    }
}
