//! One model-checking run: the same operations applied to the engine and to the model, every
//! answer compared where the model is exact and checked where SQS leaves latitude, and at the
//! end a drain that receives and deletes everything the model says is there.

use localsqs::command::*;
use localsqs::error::{ErrorCode, SqsError, SqsResult};

use super::model::{KnownHandle, Model, SendPlan, body};
use super::ops::{Entry, Handle, Op, Setup, Step};
use super::sut::{Sut, url};

/// What a failed comparison reports.
pub type Check = Result<(), String>;

/// The model, the engine and every receipt handle handed out so far.
pub struct Run {
    pub(super) model: Model,
    pub(super) sut: Sut,
    pub(super) handles: Vec<KnownHandle>,
}

/// An error code, or the fact that there was none.
fn code<T>(r: &SqsResult<T>) -> Option<ErrorCode> {
    r.as_ref().err().map(|e| e.code)
}

fn expect_code<T: std::fmt::Debug>(what: &str, want: ErrorCode, got: &SqsResult<T>) -> Check {
    match got {
        Err(e) if e.code == want => Ok(()),
        other => Err(format!("{what}: expected {want:?}, got {other:?}")),
    }
}

fn unexpected(what: &str, got: &dyn std::fmt::Debug) -> String {
    format!("{what}: unexpected answer {got:?}")
}

/// Lower-case hex MD5.
pub fn md5_hex(s: &str) -> String {
    use md5::{Digest, Md5};
    format!("{:x}", Md5::digest(s.as_bytes()))
}

fn sequence(s: Option<&String>) -> Result<Option<u128>, String> {
    s.map(|s| s.parse().map_err(|e| format!("SequenceNumber {s}: {e}")))
        .transpose()
}

impl Run {
    /// Starts the engine with the queues of `setup`.
    pub async fn start(setup: &Setup, durable: bool, seed: u64) -> Run {
        let sut = Sut::start(setup, durable, seed).await;
        Run {
            model: Model::new(setup, super::sut::START_MS),
            sut,
            handles: Vec::new(),
        }
    }

    pub(super) fn name(&self, q: usize) -> &'static str {
        self.model.queues[q].setup.name
    }

    /// Runs one operation on both sides and compares.
    pub async fn step(&mut self, op: &Op) -> Check {
        match op {
            Op::Send(q, e) => self.send(usize::from(*q), e).await,
            Op::SendBatch(q, entries) => self.send_batch(usize::from(*q), entries).await,
            Op::Receive(q, max, vis) => self.receive(usize::from(*q), *max, *vis).await,
            Op::Delete(h) => self.delete(*h).await,
            Op::DeleteBatch(hs) => self.delete_batch(hs).await,
            Op::ChangeVisibility(h, t) => self.change_visibility(*h, *t).await,
            Op::ChangeVisibilityBatch(es) => self.change_visibility_batch(es).await,
            Op::Purge(q) => {
                let q = usize::from(*q);
                let cmd = Command::PurgeQueue(PurgeQueue {
                    queue_url: url(self.name(q)),
                });
                let got = self.sut.exec(cmd).await;
                self.model.purge(q);
                got.map(drop).map_err(|e| unexpected("PurgeQueue", &e))
            }
            Op::SetDelay(q, d) => {
                let q = usize::from(*q);
                let got = self.set_attribute(q, "DelaySeconds", *d).await;
                self.model.set_delay(q, *d);
                got
            }
            Op::SetVisibility(q, v) => {
                let q = usize::from(*q);
                let got = self.set_attribute(q, "VisibilityTimeout", *v).await;
                self.model.queues[q].setup.visibility_s = *v;
                got
            }
            Op::Advance(step) => {
                self.advance(*step);
                Ok(())
            }
            Op::Inspect => self.inspect().await,
            Op::Reopen => {
                // Nothing changes in the model: messages, deduplication windows and FIFO
                // sequence numbers all carry on across a restart.
                self.sut.reopen().await;
                self.inspect().await
            }
        }
    }

    async fn set_attribute(&self, q: usize, name: &str, value: u32) -> Check {
        let cmd = Command::SetQueueAttributes(SetQueueAttributes {
            queue_url: url(self.name(q)),
            attributes: vec![(name.to_owned(), value.to_string())],
        });
        let got = self.sut.exec(cmd).await;
        got.map(drop)
            .map_err(|e| unexpected("SetQueueAttributes", &e))
    }

    fn advance(&mut self, step: Step) {
        let now = self.model.now;
        let until = |t: Option<u64>, j: i8| {
            t.map_or(1000, |t| (t - now).saturating_add_signed(i64::from(j)))
        };
        let ms = match step {
            Step::Ms(n) => n,
            Step::Secs(n) => n * 1000,
            Step::NextVisible(j) => until(self.model.next_visible(), j),
            Step::NextExpiry(j) => until(self.model.next_expiry().filter(|t| *t > now), j),
            Step::NextDedupExpiry(j) => until(self.model.next_dedup_expiry(), j),
            Step::Visibility(q, j) => {
                let vis = u64::from(self.model.queues[usize::from(q)].setup.visibility_s);
                (vis * 1000).saturating_add_signed(i64::from(j))
            }
        };
        self.model.advance(ms);
        self.sut.advance(ms);
    }

    fn send_command(&self, q: usize, e: &Entry) -> SendMessage {
        SendMessage {
            queue_url: url(self.name(q)),
            message: MessageToSend {
                message_body: body(e.body),
                delay_seconds: e.delay,
                message_deduplication_id: e.dedup.map(|d| format!("d{d}")),
                message_group_id: e.group.map(|g| format!("g{g}")),
                ..MessageToSend::default()
            },
        }
    }

    /// Compares one send's outcome (`Ok((message id, sequence number))`) with the model's plan
    /// and applies it.
    fn settle_send(
        &mut self,
        q: usize,
        e: &Entry,
        got: Result<(String, Option<u128>), ErrorCode>,
    ) -> Check {
        let what = format!("send {e:?} to {}", self.name(q));
        match (self.model.plan_send(q, e), got) {
            (Err(want), Err(code)) if want == code => Ok(()),
            (Ok(SendPlan::Duplicate { id, sequence }), Ok((got_id, got_seq))) => {
                if got_id == id && got_seq == Some(sequence) {
                    Ok(())
                } else {
                    Err(format!(
                        "{what}: a duplicate of {id} ({sequence}) answered {got_id} ({got_seq:?})"
                    ))
                }
            }
            (Ok(plan @ SendPlan::New { .. }), Ok((id, seq))) => {
                if let Some(d) = self.model.queues[q].dedup.values().find(|d| d.id == id) {
                    return Err(format!(
                        "{what}: the engine answered as for a duplicate of {id} (window until {})",
                        d.expires_ms
                    ));
                }
                self.model
                    .apply_send(q, plan, id, seq)
                    .map_err(|e| format!("{what}: {e}"))
            }
            (want, got) => Err(format!("{what}: model {want:?}, engine {got:?}")),
        }
    }

    async fn send(&mut self, q: usize, e: &Entry) -> Check {
        let got = self
            .sut
            .exec(Command::SendMessage(self.send_command(q, e)))
            .await;
        let got = match got {
            Ok(Reply::SendMessage(r)) => {
                let want_md5 = md5_hex(&body(e.body));
                if r.md5_of_message_body != want_md5 {
                    return Err(format!(
                        "MD5OfMessageBody {} for {}",
                        r.md5_of_message_body,
                        body(e.body)
                    ));
                }
                Ok((r.message_id.clone(), sequence(r.sequence_number.as_ref())?))
            }
            Err(err) => Err(err.code),
            other => return Err(unexpected("SendMessage", &other)),
        };
        self.settle_send(q, e, got)
    }

    async fn send_batch(&mut self, q: usize, entries: &[Entry]) -> Check {
        let cmd = SendMessageBatch {
            queue_url: url(self.name(q)),
            entries: entries
                .iter()
                .enumerate()
                .map(|(i, e)| SendMessageBatchRequestEntry {
                    id: format!("e{i}"),
                    message: self.send_command(q, e).message,
                })
                .collect(),
        };
        let got = self.sut.exec(Command::SendMessageBatch(cmd)).await;
        let s = &self.model.queues[q].setup;
        let whole = if entries.is_empty() {
            Some(ErrorCode::EmptyBatchRequest)
        } else if entries.len() > 10 {
            Some(ErrorCode::TooManyEntriesInBatchRequest)
        } else if s.fifo
            && (entries.iter().any(|e| e.group.is_none())
                || (!s.content_based && entries.iter().any(|e| e.dedup.is_none())))
        {
            Some(ErrorCode::InvalidParameterValue)
        } else {
            None
        };
        if let Some(want) = whole {
            return expect_code("SendMessageBatch", want, &got);
        }
        let Ok(Reply::SendMessageBatch(r)) = got else {
            return Err(unexpected("SendMessageBatch", &got));
        };
        if r.successful.len() + r.failed.len() != entries.len() {
            return Err(unexpected("SendMessageBatch entries", &r));
        }
        for (i, e) in entries.iter().enumerate() {
            let id = format!("e{i}");
            let outcome = if let Some(s) = r.successful.iter().find(|s| s.id == id) {
                Ok((s.message_id.clone(), sequence(s.sequence_number.as_ref())?))
            } else if let Some(f) = r.failed.iter().find(|f| f.id == id) {
                Err(f.code)
            } else {
                return Err(format!("SendMessageBatch: no result for {id}: {r:?}"));
            };
            self.settle_send(q, e, outcome)?;
        }
        Ok(())
    }

    pub(super) async fn receive(&mut self, q: usize, max: i64, vis: Option<i64>) -> Check {
        let cmd = Command::ReceiveMessage(ReceiveMessage {
            queue_url: url(self.name(q)),
            max_number_of_messages: Some(max),
            visibility_timeout: vis,
            wait_time_seconds: Some(0),
            message_system_attribute_names: vec!["All".into()],
            ..ReceiveMessage::default()
        });
        let got = self.sut.exec(cmd).await;
        if !(1..=10).contains(&max) {
            return expect_code("ReceiveMessage", ErrorCode::InvalidParameterValue, &got);
        }
        let Ok(Reply::ReceiveMessage(r)) = got else {
            return Err(unexpected("ReceiveMessage", &got));
        };
        let ids: Vec<String> = r.messages.iter().map(|m| m.message_id.clone()).collect();
        let max = usize::try_from(max).unwrap_or(1);
        if self.model.queues[q].setup.fifo {
            let moved = self.moved_out(q);
            self.model
                .check_fifo_receive(q, max, &ids, &moved)
                .map_err(|e| format!("FIFO receive from {}: {e}", self.name(q)))?;
            let arrived = self.arrival_order(q, &moved)?;
            self.model.move_to_dlq(q, &arrived);
        } else {
            let (deliver, moved) = self.model.plan_standard_receive(q, max);
            if ids != deliver {
                return Err(format!(
                    "receive from {}: got {ids:?}, model {deliver:?}",
                    self.name(q)
                ));
            }
            self.model.move_to_dlq(q, &moved);
        }
        let vis_s = vis.map_or(
            u64::from(self.model.queues[q].setup.visibility_s),
            i64::unsigned_abs,
        );
        let pairs: Vec<(String, String)> = r
            .messages
            .iter()
            .map(|m| (m.message_id.clone(), m.receipt_handle.clone()))
            .collect();
        self.model.deliver(q, &pairs, vis_s * 1000);
        for m in &r.messages {
            self.compare_message(q, m)?;
            self.handles.push(KnownHandle {
                queue: q,
                handle: m.receipt_handle.clone(),
                id: m.message_id.clone(),
            });
        }
        Ok(())
    }

    /// The messages of FIFO queue `q` that left it during the receive just made (moved to the
    /// dead-letter queue), learned by peeking at what is still there.
    fn moved_out(&self, q: usize) -> Vec<String> {
        if self.model.queues[q].redrive(q).is_none() {
            return Vec::new();
        }
        let left: Vec<String> = self
            .sut
            .peek(self.name(q), true, true)
            .into_iter()
            .map(|m| m.message_id)
            .collect();
        self.model.queues[q]
            .msgs
            .iter()
            .filter(|m| !left.contains(&m.id))
            .map(|m| m.id.clone())
            .collect()
    }

    /// The order in which `moved` reached the dead-letter queue of `q`: any, as long as each
    /// group keeps its order.
    fn arrival_order(&self, q: usize, moved: &[String]) -> Result<Vec<String>, String> {
        let Some((dlq, _)) = self.model.queues[q].redrive(q) else {
            return Ok(Vec::new());
        };
        let arrived: Vec<String> = self
            .sut
            .peek(self.name(dlq), true, true)
            .into_iter()
            .map(|m| m.message_id)
            .filter(|id| moved.contains(id))
            .collect();
        if arrived.len() != moved.len() {
            return Err(format!(
                "moved {moved:?} but {arrived:?} reached the dead-letter queue"
            ));
        }
        let source = &self.model.queues[q];
        let group = |id: &String| source.get(id).and_then(|m| m.group.clone());
        for g in moved
            .iter()
            .map(group)
            .collect::<std::collections::BTreeSet<_>>()
        {
            let a: Vec<&String> = arrived.iter().filter(|id| group(id) == g).collect();
            let m: Vec<&String> = moved.iter().filter(|id| group(id) == g).collect();
            if a != m {
                return Err(format!(
                    "group {g:?} reached the dead-letter queue as {a:?}, not {m:?}"
                ));
            }
        }
        Ok(arrived)
    }

    /// The queue a handle operation addresses and the handle it sends.
    fn resolve(&self, h: Handle) -> (usize, Option<KnownHandle>, String) {
        let known = |i: usize| self.handles.get(i % self.handles.len().max(1)).cloned();
        match h {
            Handle::Known(i) => match known(i) {
                Some(k) => (k.queue, Some(k.clone()), k.handle),
                None => (0, None, "garbage".into()),
            },
            Handle::Foreign(i, q) => match known(i) {
                Some(k) => (usize::from(q), Some(k.clone()), k.handle),
                None => (usize::from(q), None, "garbage".into()),
            },
            Handle::Garbage => (0, None, "garbage".into()),
        }
    }

    pub(super) async fn delete(&mut self, h: Handle) -> Check {
        let (q, known, handle) = self.resolve(h);
        let cmd = Command::DeleteMessage(DeleteMessage {
            queue_url: url(self.name(q)),
            receipt_handle: handle,
        });
        let got = self.sut.exec(cmd).await;
        let want = self.model.delete(q, known.as_ref());
        compare("DeleteMessage", want, &got)
    }

    async fn change_visibility(&mut self, h: Handle, t: i64) -> Check {
        let (q, known, handle) = self.resolve(h);
        let cmd = Command::ChangeMessageVisibility(ChangeMessageVisibility {
            queue_url: url(self.name(q)),
            receipt_handle: handle,
            visibility_timeout: t,
        });
        let got = self.sut.exec(cmd).await;
        let want = self.model.change_visibility(q, known.as_ref(), t);
        compare(&format!("ChangeMessageVisibility {t}"), want, &got)
    }

    /// The queue of a batch of handles: the first one's.
    fn batch_queue(&self, hs: &[Handle]) -> usize {
        hs.first().map_or(0, |h| self.resolve(*h).0)
    }

    async fn delete_batch(&mut self, hs: &[Handle]) -> Check {
        let q = self.batch_queue(hs);
        let entries = hs
            .iter()
            .enumerate()
            .map(|(i, h)| DeleteMessageBatchRequestEntry {
                id: format!("e{i}"),
                receipt_handle: self.resolve(*h).2,
            })
            .collect();
        let cmd = Command::DeleteMessageBatch(DeleteMessageBatch {
            queue_url: url(self.name(q)),
            entries,
        });
        let got = self.sut.exec(cmd).await;
        if hs.is_empty() {
            return expect_code("DeleteMessageBatch", ErrorCode::EmptyBatchRequest, &got);
        }
        let Ok(Reply::DeleteMessageBatch(r)) = got else {
            return Err(unexpected("DeleteMessageBatch", &got));
        };
        for (i, h) in hs.iter().enumerate() {
            let known = self.resolve(*h).1;
            let want = self.model.delete(q, known.as_ref());
            compare_entry(
                &format!("DeleteMessageBatch e{i}"),
                want,
                &r.successful,
                &r.failed,
                i,
            )?;
        }
        Ok(())
    }

    async fn change_visibility_batch(&mut self, es: &[(Handle, i64)]) -> Check {
        let hs: Vec<Handle> = es.iter().map(|(h, _)| *h).collect();
        let q = self.batch_queue(&hs);
        let entries = es
            .iter()
            .enumerate()
            .map(|(i, (h, t))| ChangeMessageVisibilityBatchRequestEntry {
                id: format!("e{i}"),
                receipt_handle: self.resolve(*h).2,
                visibility_timeout: Some(*t),
            })
            .collect();
        let cmd = Command::ChangeMessageVisibilityBatch(ChangeMessageVisibilityBatch {
            queue_url: url(self.name(q)),
            entries,
        });
        let got = self.sut.exec(cmd).await;
        if es.is_empty() {
            return expect_code(
                "ChangeMessageVisibilityBatch",
                ErrorCode::EmptyBatchRequest,
                &got,
            );
        }
        let Ok(Reply::ChangeMessageVisibilityBatch(r)) = got else {
            return Err(unexpected("ChangeMessageVisibilityBatch", &got));
        };
        for (i, (h, t)) in es.iter().enumerate() {
            let known = self.resolve(*h).1;
            let want = self.model.change_visibility(q, known.as_ref(), *t);
            let what = format!("ChangeMessageVisibilityBatch e{i} ({t})");
            compare_entry(&what, want, &r.successful, &r.failed, i)?;
        }
        Ok(())
    }
}

/// Compares a model outcome with an engine answer by error code.
fn compare(what: &str, want: Result<(), ErrorCode>, got: &SqsResult<Reply>) -> Check {
    if want.err() == code(got) {
        Ok(())
    } else {
        Err(format!(
            "{what}: model {want:?}, engine {:?}",
            got.as_ref().map_err(SqsError::clone)
        ))
    }
}

/// Compares a model outcome with one batch entry's result.
fn compare_entry(
    what: &str,
    want: Result<(), ErrorCode>,
    successful: &[String],
    failed: &[BatchResultErrorEntry],
    i: usize,
) -> Check {
    let id = format!("e{i}");
    let got = if successful.contains(&id) {
        Ok(())
    } else if let Some(f) = failed.iter().find(|f| f.id == id) {
        Err(f.code)
    } else {
        return Err(format!("{what}: no result"));
    };
    if want == got {
        Ok(())
    } else {
        Err(format!("{what}: model {want:?}, engine {got:?}"))
    }
}
