//! Engine layer, ops, SNS: Publish and PublishBatch (docs/sns.md §6). A publish and its
//! deliveries into queues are one engine change and one commit: the message is checked, its
//! deliveries built (before the lock for a standard topic, `fanout.rs`), then under the lock
//! the FIFO rules run (deduplication across the whole topic, sequence numbers) and every
//! delivery is added to its queue; the store writes them all in the publish's commit, so an
//! acknowledged Publish has reached every matching queue, durably with `--data-dir`.

use sha2::{Digest, Sha256};

use super::execute::topic_arn;
use super::fanout::{Outgoing, Planned, TopicView};
use crate::command::checksum::hex;
use crate::command::sns::validate;
use crate::command::sns::*;
use crate::command::{MessageToSend, RequestContext};
use crate::engine::handle::Engine;
use crate::engine::model::outbox::SnsDelivery;
use crate::engine::model::topic::DEDUP_WINDOW_MS;
use crate::engine::ops::prepare::Prepared;
use crate::engine::store::schema::Op;
use crate::engine::store::sns_record::{SnsDedupRecord, SnsOp};

/// A message checked as far as it can be without its topic.
struct Checked {
    msg: MessageToPublish,
    per_protocol: Option<Vec<(String, String)>>,
}

fn check(m: MessageToPublish, attrs_at: &str) -> SnsResult<Checked> {
    let text = validate::publish_message(&m, attrs_at)?;
    let per_protocol = match m.message_structure.as_deref() {
        Some("json") => Some(validate::message_structure(text)?),
        // [E] moto: any other value is refused.
        Some(other) if !other.is_empty() => {
            return Err(SnsError::invalid_parameter("MessageStructure"));
        }
        _ => None,
    };
    Ok(Checked {
        msg: m,
        per_protocol,
    })
}

/// The FIFO rules that need only the topic's kind (§6.1).
fn check_fifo(view: &TopicView, m: &MessageToPublish) -> SnsResult<Option<String>> {
    if !view.fifo {
        if m.message_deduplication_id.is_some() {
            return Err(SnsError::invalid_parameter(
                "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        return Ok(None);
    }
    if m.message_group_id.is_none() {
        return Err(SnsError::invalid_parameter(
            "The MessageGroupId parameter is required for FIFO topics",
        ));
    }
    match &m.message_deduplication_id {
        Some(id) => Ok(Some(id.clone())),
        None if view.content_based => {
            let body = m.message.as_deref().unwrap_or_default();
            Ok(Some(hex(&Sha256::digest(body.as_bytes()))))
        }
        None => Err(SnsError::invalid_parameter(
            "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        )),
    }
}

impl Engine {
    pub(super) async fn publish(
        &self,
        ctx: &RequestContext,
        c: Publish,
    ) -> SnsResult<PublishResult> {
        if c.phone_number.is_some() {
            return Err(SnsError::invalid_parameter(
                "PhoneNumber Reason: SMS is not emulated by localsqs; publish to a topic",
            ));
        }
        let arn = match (&c.topic_arn, &c.target_arn) {
            (Some(t), _) => topic_arn(ctx, t, "TopicArn")?,
            (None, Some(t)) if t.contains(":endpoint/") => {
                return Err(SnsError::invalid_parameter(
                    "TargetArn Reason: No endpoint found for the target arn specified",
                ));
            }
            (None, Some(t)) => topic_arn(ctx, t, "TargetArn")?,
            (None, None) => {
                // [E] moto's text.
                return Err(SnsError::invalid_parameter(
                    "TopicArn or TargetArn Reason: no value for required parameter",
                ));
            }
        };
        let checked = check(c.message, "messageAttributes")?;
        let mut results = self.publish_all(ctx, &arn, vec![checked]).await?;
        Ok(results.pop().unwrap_or_default())
    }

    pub(super) async fn publish_batch(
        &self,
        ctx: &RequestContext,
        c: PublishBatch,
    ) -> SnsResult<PublishBatchResult> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        validate::batch_entries(&c.entries)?;
        let mut ids = Vec::with_capacity(c.entries.len());
        let mut checked = Vec::with_capacity(c.entries.len());
        for (i, e) in c.entries.into_iter().enumerate() {
            let at = format!(
                "publishBatchRequestEntries.{}.member.messageAttributes",
                i + 1
            );
            checked.push(check(e.message, &at)?);
            ids.push(e.id);
        }
        let results = self.publish_all(ctx, &arn, checked).await?;
        Ok(PublishBatchResult {
            successful: ids
                .into_iter()
                .zip(results)
                .map(|(id, r)| PublishBatchResultEntry {
                    id,
                    message_id: r.message_id,
                    sequence_number: r.sequence_number,
                })
                .collect(),
            failed: Vec::new(),
        })
    }

    /// Publishes `msgs` to topic `arn` in one engine change and one commit.
    async fn publish_all(
        &self,
        ctx: &RequestContext,
        arn: &str,
        msgs: Vec<Checked>,
    ) -> SnsResult<Vec<PublishResult>> {
        let view = {
            let reg = self.lock();
            let t = reg
                .topics()
                .get(arn)
                .ok_or_else(SnsError::topic_not_found)?;
            TopicView::of(t)
        };
        let timestamp = crate::command::sns::envelope::timestamp(self.now());
        let mut outgoing = Vec::with_capacity(msgs.len());
        for m in msgs {
            let dedup_id = check_fifo(&view, &m.msg)?;
            outgoing.push(Outgoing {
                message_id: self.new_uuid(),
                message: m.msg.message.unwrap_or_default(),
                per_protocol: m.per_protocol,
                subject: m.msg.subject,
                attributes: m.msg.message_attributes,
                group_id: m.msg.message_group_id,
                dedup_id,
                sequence: None,
                timestamp: timestamp.clone(),
            });
        }
        // A standard topic's deliveries need nothing the lock guards: build them first.
        let mut plans: Vec<Option<Planned>> = outgoing
            .iter()
            .map(|o| (!view.fifo).then(|| self.plan(ctx, &view, o)))
            .collect();
        let now = self.now();
        let (results, commit) = {
            let mut reg = self.lock();
            let mut ops = Vec::new();
            let t = reg
                .topics_mut()
                .get_mut(arn)
                .ok_or_else(SnsError::topic_not_found)?;
            if t.fifo != view.fifo {
                return Err(SnsError::topic_not_found());
            }
            // Most publishes find the topic as they read it; only a change since needs a view.
            let current = if t.generation == view.generation {
                view.clone()
            } else {
                TopicView::of(t)
            };
            let mut results = Vec::with_capacity(outgoing.len());
            if current.fifo {
                t.prune(now, &mut ops);
            }
            for (o, plan) in outgoing.iter_mut().zip(plans.iter_mut()) {
                if current.fifo {
                    let dedup = o.dedup_id.clone().unwrap_or_default();
                    let key = if current.group_scope {
                        format!("{}\u{0}{dedup}", o.group_id.as_deref().unwrap_or_default())
                    } else {
                        dedup
                    };
                    if let Some(orig) = t.duplicate_of(&key, now) {
                        // Accepted, not delivered; the first publish's id and number (§6.6).
                        results.push(PublishResult {
                            message_id: orig.message_id.clone(),
                            sequence_number: Some(orig.sequence_number.to_string()),
                        });
                        *plan = Some(Planned::default());
                        continue;
                    }
                    let n = t.next_sequence();
                    let rec = SnsDedupRecord {
                        expires_ms: now + DEDUP_WINDOW_MS,
                        message_id: o.message_id.clone(),
                        sequence_number: n,
                    };
                    ops.push(Op::Sns(SnsOp::PutDedup(
                        arn.to_owned(),
                        key.clone(),
                        rec.clone(),
                    )));
                    t.remember(key, rec);
                    o.sequence = Some(n.to_string());
                }
                results.push(PublishResult {
                    message_id: o.message_id.clone(),
                    sequence_number: o.sequence.clone(),
                });
                if current.fifo || current.generation != view.generation {
                    // Subscriptions changed since the deliveries were built (or a FIFO
                    // envelope needs its sequence number): build them again, here.
                    *plan = Some(self.plan(ctx, &current, o));
                }
            }
            t.published += outgoing.len() as u64;
            let mut delivered = 0;
            for plan in plans.into_iter().flatten() {
                for d in plan.queues {
                    delivered += u64::from(self.deliver(&mut reg, ctx, d, now, &mut ops));
                }
                let topics = reg.topics_mut();
                for p in plan.pushes {
                    delivered += 1;
                    topics.outbox.push(p);
                }
            }
            if let Some(t) = reg.topics_mut().get_mut(arn) {
                t.delivered += delivered;
            }
            (results, self.submit_puts(&mut reg, ops))
        };
        self.commit_sns(commit).await?;
        Ok(results)
    }

    /// Adds one delivery to its queue; when the queue is gone or refuses it, to the
    /// subscription's dead-letter queue if it has one (§9), else nowhere. A failed delivery
    /// never fails the publish. Answers whether the message reached a queue.
    fn deliver(
        &self,
        reg: &mut crate::engine::model::registry::Registry,
        ctx: &RequestContext,
        d: super::fanout::QueueDelivery,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> bool {
        if !d.refused && self.enqueue_by_arn(reg, ctx, &d.queue_arn, d.prepared, now, ops) {
            return true;
        }
        let Some((dlq, mut msg)) = d.dead_letter else {
            tracing::debug!(queue = %d.queue_arn, "SNS delivery dropped: the queue is gone or refused it");
            return false;
        };
        if !dlq.ends_with(".fifo") {
            msg.message_deduplication_id = None;
        }
        self.enqueue_by_arn(reg, ctx, &dlq, Prepared::new(msg), now, ops)
    }

    /// Enqueues a prepared message into the queue an ARN names (any account and region this
    /// server holds); false when there is none or it refuses the message.
    pub(super) fn enqueue_by_arn(
        &self,
        reg: &mut crate::engine::model::registry::Registry,
        ctx: &RequestContext,
        queue_arn: &str,
        p: Prepared,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> bool {
        let Some(q) = self
            .queue_by_arn(reg, queue_arn)
            .and_then(|id| reg.get_mut(id))
        else {
            return false;
        };
        let before = q.watch(self.max_inflight());
        let ok = self.enqueue(q, ctx, p, now, false, ops).is_ok();
        q.wake_after(before, self.max_inflight());
        ok
    }

    /// Takes the deliveries queued for http, https and lambda subscriptions.
    pub fn take_sns_deliveries(&self) -> Vec<SnsDelivery> {
        self.lock().topics_mut().outbox.take()
    }

    /// Notified when a delivery for the worker is queued.
    pub fn sns_wakeup(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.lock().topics().outbox.notify()
    }

    /// Sends a message that an http or lambda subscription could not take to its dead-letter
    /// queue (called by the delivery worker after the last retry).
    pub async fn sns_dead_letter(
        &self,
        ctx: &RequestContext,
        dlq_arn: &str,
        body: String,
        attributes: crate::command::MessageAttributes,
    ) -> bool {
        let now = self.now();
        let msg = MessageToSend {
            message_body: body,
            message_attributes: attributes,
            ..MessageToSend::default()
        };
        let (ok, commit) = {
            let mut reg = self.lock();
            let mut ops = Vec::new();
            let ok = self.enqueue_by_arn(&mut reg, ctx, dlq_arn, Prepared::new(msg), now, &mut ops);
            (ok, self.submit_puts(&mut reg, ops))
        };
        ok && self.commit(commit).await.is_ok()
    }
}
