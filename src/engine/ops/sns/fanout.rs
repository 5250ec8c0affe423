//! Engine layer, ops, SNS: the deliveries of one published message (docs/sns.md §7): for each
//! confirmed subscription whose filter policy lets it through, an SQS message (the JSON
//! envelope, or the raw message with its attributes as SQS attributes) prepared as a
//! SendMessage would be, or a delivery for the http/lambda worker. Building them needs no queue
//! state, so a standard topic's deliveries are built before the engine lock; adding them to
//! their queues happens under it, in the publish's engine change (`publish.rs`).

use std::sync::Arc;

use crate::command::sns::envelope::{self, Notification, Signature};
use crate::command::{MessageAttributes, MessageToSend, RequestContext};
use crate::engine::handle::Engine;
use crate::engine::model::outbox::{SnsDelivery, SnsTarget};
use crate::engine::model::topic::{Subscription, Topic};
use crate::engine::ops::prepare::Prepared;

/// Most message attributes SQS takes: a raw delivery with more fails (§7.3).
const MAX_SQS_ATTRIBUTES: usize = 10;

/// What a publish needs of its topic, copied under the lock so deliveries can be built after.
#[derive(Debug, Clone)]
pub(super) struct TopicView {
    pub arn: String,
    pub fifo: bool,
    pub content_based: bool,
    pub group_scope: bool,
    pub signature_version: u8,
    pub generation: u64,
    pub subscriptions: Arc<Vec<Subscription>>,
}

impl TopicView {
    pub fn of(t: &Topic) -> Self {
        Self {
            arn: t.arn.clone(),
            fifo: t.fifo,
            content_based: t.attr("ContentBasedDeduplication") == Some("true"),
            group_scope: t.attr("FifoThroughputScope") == Some("MessageGroup"),
            signature_version: super::subscription::sig_version(t),
            generation: t.generation,
            subscriptions: Arc::clone(&t.subscriptions),
        }
    }
}

/// One message, checked, with its id and the per-protocol messages of MessageStructure=json.
#[derive(Debug, Clone)]
pub(super) struct Outgoing {
    pub message_id: String,
    pub message: String,
    pub per_protocol: Option<Vec<(String, String)>>,
    pub subject: Option<String>,
    pub attributes: MessageAttributes,
    pub group_id: Option<String>,
    /// FIFO: the deduplication id (explicit, or the body's SHA-256).
    pub dedup_id: Option<String>,
    /// FIFO: the topic's sequence number.
    pub sequence: Option<String>,
    pub timestamp: String,
}

impl Outgoing {
    /// The message for `protocol`: its own key of MessageStructure=json, else `default`.
    fn message_for(&self, protocol: &str) -> &str {
        match &self.per_protocol {
            None => &self.message,
            Some(map) => map
                .iter()
                .find(|(k, _)| k == protocol)
                .or_else(|| map.iter().find(|(k, _)| k == "default"))
                .map_or("", |(_, v)| v.as_str()),
        }
    }
}

/// A delivery into a queue, prepared as a SendMessage.
#[derive(Debug)]
pub(super) struct QueueDelivery {
    pub queue_arn: String,
    pub prepared: Prepared,
    /// The subscription's dead-letter queue and what it gets if this delivery fails.
    pub dead_letter: Option<(String, MessageToSend)>,
    /// A raw delivery SQS cannot take (too many attributes): straight to the dead-letter queue.
    pub refused: bool,
}

/// The deliveries of one message.
#[derive(Debug, Default)]
pub(super) struct Planned {
    pub queues: Vec<QueueDelivery>,
    pub pushes: Vec<SnsDelivery>,
}

/// Signatures computed so far for this message (one per distinct per-protocol message).
#[derive(Debug, Default)]
pub(super) struct Signatures(Vec<(String, Signature)>);

impl Engine {
    fn signature_for(
        &self,
        ctx: &RequestContext,
        n: &Notification<'_>,
        version: u8,
        cache: &mut Signatures,
    ) -> Signature {
        if let Some((_, s)) = cache
            .0
            .iter()
            .find(|(m, s)| m == n.message && s.version == version)
        {
            return s.clone();
        }
        let s = self.sign(ctx, version, &n.string_to_sign());
        cache.0.push((n.message.to_owned(), s.clone()));
        s
    }

    /// The deliveries of `out` to the subscriptions of `topic`.
    pub(super) fn plan(&self, ctx: &RequestContext, topic: &TopicView, out: &Outgoing) -> Planned {
        let mut planned = Planned::default();
        let mut sigs = Signatures::default();
        let structured = out.per_protocol.is_some();
        for s in topic.subscriptions.iter().filter(|s| s.confirmed()) {
            let message = out.message_for(&s.protocol);
            if let Some(f) = &s.filter
                && !f.matches(&out.attributes, message)
            {
                continue;
            }
            let n = Notification {
                message_id: &out.message_id,
                topic_arn: &topic.arn,
                subject: out.subject.as_deref(),
                message,
                timestamp: &out.timestamp,
                sequence_number: out.sequence.as_deref(),
                // [E] with MessageStructure=json, attributes are not sent (§6.3).
                attributes: (!structured).then_some(&out.attributes),
            };
            let unsubscribe = || envelope::unsubscribe_url(&ctx.base_url, &s.arn);
            let dead_letter_arn = s.attr("RedrivePolicy").and_then(|p| {
                serde_json::from_str::<serde_json::Value>(p)
                    .ok()?
                    .get("deadLetterTargetArn")?
                    .as_str()
                    .map(str::to_owned)
            });
            match s.protocol.as_str() {
                "sqs" => {
                    let body = if s.raw {
                        message.to_owned()
                    } else {
                        let sig = (!topic.fifo).then(|| {
                            self.signature_for(ctx, &n, topic.signature_version, &mut sigs)
                        });
                        let (head, tail) = n.parts(sig.as_ref());
                        format!("{head}{}{tail}", unsubscribe())
                    };
                    let fifo_queue = s.endpoint.ends_with(".fifo");
                    let msg = MessageToSend {
                        message_body: body,
                        delay_seconds: None,
                        message_attributes: if s.raw {
                            out.attributes.clone()
                        } else {
                            MessageAttributes::new()
                        },
                        message_system_attributes: MessageAttributes::new(),
                        message_deduplication_id: out.dedup_id.clone().filter(|_| fifo_queue),
                        message_group_id: out
                            .group_id
                            .clone()
                            .filter(|_| fifo_queue || !topic.fifo),
                    };
                    let refused = s.raw && out.attributes.len() > MAX_SQS_ATTRIBUTES;
                    planned.queues.push(QueueDelivery {
                        queue_arn: s.endpoint.clone(),
                        dead_letter: dead_letter_arn.map(|a| (a, msg.clone())),
                        prepared: Prepared::new(msg),
                        refused,
                    });
                }
                "http" | "https" | "lambda" => {
                    planned.pushes.push(self.push_delivery(
                        ctx,
                        topic,
                        s,
                        &n,
                        &unsubscribe(),
                        dead_letter_arn,
                        &mut sigs,
                    ));
                }
                // email, email-json, sms, application, firehose: accepted, delivered nowhere.
                _ => {}
            }
        }
        planned
    }

    #[allow(clippy::too_many_arguments)]
    fn push_delivery(
        &self,
        ctx: &RequestContext,
        topic: &TopicView,
        s: &Subscription,
        n: &Notification<'_>,
        unsubscribe: &str,
        dead_letter_arn: Option<String>,
        sigs: &mut Signatures,
    ) -> SnsDelivery {
        let sig = (!topic.fifo).then(|| self.signature_for(ctx, n, topic.signature_version, sigs));
        let (head, tail) = n.parts(sig.as_ref());
        let envelope = format!("{head}{unsubscribe}{tail}");
        let (target, body, headers) = if s.protocol == "lambda" {
            let v1 = (!topic.fifo).then(|| self.signature_for(ctx, n, 1, sigs));
            let event = envelope::lambda_event(n, v1.as_ref(), &s.arn, unsubscribe);
            (
                SnsTarget::Lambda(s.endpoint.clone()),
                event.to_string(),
                Vec::new(),
            )
        } else {
            let mut headers = vec![
                (
                    "x-amz-sns-message-type".to_owned(),
                    "Notification".to_owned(),
                ),
                ("x-amz-sns-message-id".to_owned(), n.message_id.to_owned()),
                ("x-amz-sns-topic-arn".to_owned(), topic.arn.clone()),
                ("x-amz-sns-subscription-arn".to_owned(), s.arn.clone()),
                ("Content-Type".to_owned(), content_type(s)),
            ];
            let body = if s.raw {
                headers.push(("x-amz-sns-rawdelivery".to_owned(), "true".to_owned()));
                n.message.to_owned()
            } else {
                envelope.clone()
            };
            (SnsTarget::Http(s.endpoint.clone()), body, headers)
        };
        SnsDelivery {
            target,
            body,
            headers,
            subscription_arn: s.arn.clone(),
            dead_letter_arn,
            delivery_policy: s.attr("DeliveryPolicy").map(str::to_owned),
            dead_letter_body: if s.raw {
                n.message.to_owned()
            } else {
                envelope
            },
            dead_letter_attributes: if s.raw {
                n.attributes.cloned().unwrap_or_default()
            } else {
                MessageAttributes::new()
            },
        }
    }
}

/// The Content-Type of an http(s) notification: the delivery policy's `headerContentType`,
/// else `text/plain; charset=UTF-8` (§7.5).
fn content_type(s: &Subscription) -> String {
    s.attr("DeliveryPolicy")
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .and_then(|v| {
            v.pointer("/requestPolicy/headerContentType")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "text/plain; charset=UTF-8".to_owned())
}
