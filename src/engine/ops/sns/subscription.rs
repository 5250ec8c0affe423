//! Engine layer, ops, SNS: subscriptions (docs/sns.md §5): Subscribe (idempotent per
//! protocol and endpoint; sqs and lambda confirmed at once, http/https/email/sms pending),
//! ConfirmSubscription, Unsubscribe, the two list actions and Get/SetSubscriptionAttributes.

use std::collections::BTreeMap;

use super::execute::{SnsCaller, topic_arn};
use super::topic::{PAGE, next_token, page_start};
use crate::command::sns::attributes::{
    self, DEFAULT_EFFECTIVE_DELIVERY_POLICY, PROTOCOLS, SubscriptionKind,
};
use crate::command::sns::envelope::{self, Confirmation, Signature};
use crate::command::sns::validate::SnsArn;
use crate::command::sns::*;
use crate::command::{Pairs, RequestContext};
use crate::engine::handle::Engine;
use crate::engine::model::outbox::{SnsDelivery, SnsTarget};
use crate::engine::model::topic::{Subscription, Topic};
use crate::engine::store::schema::Op;
use crate::engine::store::sns_record::SnsOp;

/// Most subscriptions per topic ([E]: AWS allows 12.5 million; memory here is bounded).
const MAX_SUBSCRIPTIONS: usize = 100_000;

/// Most subscriptions with a filter policy per topic (§8.3, [D]: 200 by default).
const MAX_FILTER_POLICIES: usize = 200;

/// `FilterPolicyLimitExceeded` when a topic already has [`MAX_FILTER_POLICIES`] policies
/// ([E] the text).
fn check_policy_count(t: &Topic, except: Option<&str>) -> SnsResult<()> {
    let n = t
        .subscriptions
        .iter()
        .filter(|s| s.attr("FilterPolicy").is_some() && Some(s.arn.as_str()) != except)
        .count();
    if n >= MAX_FILTER_POLICIES {
        return Err(SnsError::new(
            SnsErrorCode::FilterPolicyLimitExceeded,
            "Filter policy limit exceeded",
        ));
    }
    Ok(())
}

/// What Subscribe answers while a subscription waits for confirmation (§2, [V]).
const PENDING: &str = "pending confirmation";

/// The queue name of an SQS ARN endpoint, if it is one (`arn:aws:sqs:<region>:<acct>:<name>`).
fn sqs_arn_name(endpoint: &str) -> Option<&str> {
    let p: Vec<&str> = endpoint.split(':').collect();
    (p.len() == 6 && p[0] == "arn" && p[2] == "sqs" && !p[5].is_empty()).then(|| p[5])
}

/// Checks a Subscribe's protocol and endpoint (§3.2, §5.1).
fn check_endpoint(protocol: &str, endpoint: &str, fifo_topic: bool) -> SnsResult<()> {
    if !PROTOCOLS.contains(&protocol) {
        return Err(SnsError::invalid_parameter(&format!(
            "Amazon SNS does not support this protocol string: {protocol}"
        )));
    }
    match protocol {
        "sqs" => {
            let name = sqs_arn_name(endpoint)
                .ok_or_else(|| SnsError::invalid_parameter("SQS endpoint ARN"))?;
            if name.ends_with(".fifo") && !fifo_topic {
                return Err(SnsError::invalid_parameter(
                    "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
                ));
            }
        }
        "http" | "https" if !endpoint.starts_with(&format!("{protocol}://")) => {
            // [E] LocalStack's text.
            return Err(SnsError::invalid_parameter(
                "Endpoint must match the specified protocol",
            ));
        }
        "lambda" if !endpoint.starts_with("arn:aws:lambda:") => {
            // [E] by analogy with the SQS text.
            return Err(SnsError::invalid_parameter("Lambda endpoint ARN"));
        }
        _ if endpoint.is_empty() => return Err(SnsError::invalid_parameter("Endpoint")),
        _ => {}
    }
    Ok(())
}

/// The attributes GetSubscriptionAttributes shows (§5.2).
fn subscription_attributes(t: &Topic, s: &Subscription) -> Pairs {
    let mut out: Pairs = vec![
        (
            "ConfirmationWasAuthenticated".into(),
            s.authenticated.to_string(),
        ),
        ("Endpoint".into(), s.endpoint.clone()),
        ("Owner".into(), s.owner.clone()),
        ("PendingConfirmation".into(), (!s.confirmed()).to_string()),
        ("Protocol".into(), s.protocol.clone()),
        (
            "RawMessageDelivery".into(),
            s.attr("RawMessageDelivery").unwrap_or("false").to_owned(),
        ),
        ("SubscriptionArn".into(), s.arn.clone()),
        (
            "SubscriptionPrincipal".into(),
            format!("arn:aws:iam::{}:user/localsqs", t.scope.account),
        ),
        ("TopicArn".into(), t.arn.clone()),
    ];
    for (k, v) in &s.attributes {
        match k.as_str() {
            "RawMessageDelivery" => {}
            "FilterPolicyScope" if s.attr("FilterPolicy").is_none() => {}
            _ => out.push((k.clone(), v.clone())),
        }
    }
    if s.attr("FilterPolicy").is_some() && s.attr("FilterPolicyScope").is_none() {
        out.push(("FilterPolicyScope".into(), "MessageAttributes".into()));
    }
    if matches!(s.protocol.as_str(), "http" | "https") {
        let effective = s
            .attr("DeliveryPolicy")
            .or(t.attr("DeliveryPolicy"))
            .unwrap_or(DEFAULT_EFFECTIVE_DELIVERY_POLICY);
        out.push(("EffectiveDeliveryPolicy".into(), effective.to_owned()));
    }
    out
}

fn summary(t: &Topic, s: &Subscription) -> SubscriptionSummary {
    SubscriptionSummary {
        subscription_arn: if s.confirmed() {
            s.arn.clone()
        } else {
            // [E] LocalStack and widely quoted CLI output.
            "PendingConfirmation".into()
        },
        owner: s.owner.clone(),
        protocol: s.protocol.clone(),
        endpoint: s.endpoint.clone(),
        topic_arn: t.arn.clone(),
    }
}

impl Engine {
    /// A confirmation token: 256 lower-case hex characters (§2), from the injected ids.
    fn new_token(&self) -> String {
        (0..8).map(|_| self.new_uuid().replace('-', "")).collect()
    }

    /// Queues a SubscriptionConfirmation or UnsubscribeConfirmation POST to an http(s)
    /// endpoint (§5.4).
    pub(super) fn queue_confirmation(
        &self,
        ctx: &RequestContext,
        (topic_arn, version): (&str, u8),
        s: &Subscription,
        token: &str,
        subscribe: bool,
        outbox: &mut crate::engine::model::outbox::Outbox,
    ) {
        let (kind, message) = if subscribe {
            (
                "SubscriptionConfirmation",
                format!(
                    "You have chosen to subscribe to the topic {topic_arn}.\nTo confirm the subscription, visit the SubscribeURL included in this message."
                ),
            )
        } else {
            (
                "UnsubscribeConfirmation",
                format!(
                    "You have chosen to deactivate subscription {}.\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message.",
                    s.arn
                ),
            )
        };
        let message_id = self.new_uuid();
        let ts = envelope::timestamp(self.now());
        let url = envelope::subscribe_url(&ctx.base_url, topic_arn, token);
        let c = Confirmation {
            kind,
            message_id: &message_id,
            token,
            topic_arn,
            message: &message,
            subscribe_url: &url,
            timestamp: &ts,
        };
        let sig = self.sign(ctx, version, &c.string_to_sign());
        let mut headers = vec![
            ("x-amz-sns-message-type".to_owned(), kind.to_owned()),
            ("x-amz-sns-message-id".to_owned(), message_id.clone()),
            ("x-amz-sns-topic-arn".to_owned(), topic_arn.to_owned()),
            (
                "Content-Type".to_owned(),
                "text/plain; charset=UTF-8".to_owned(),
            ),
        ];
        if !subscribe {
            headers.push(("x-amz-sns-subscription-arn".to_owned(), s.arn.clone()));
        }
        outbox.push(SnsDelivery {
            target: SnsTarget::Http(s.endpoint.clone()),
            body: c.render(&sig),
            headers,
            subscription_arn: s.arn.clone(),
            dead_letter_arn: None,
            delivery_policy: None,
            dead_letter_body: String::new(),
            dead_letter_attributes: crate::command::MessageAttributes::new(),
        });
    }

    /// The signature fields for `text` (empty without a signer).
    pub(super) fn sign(&self, ctx: &RequestContext, version: u8, text: &str) -> Signature {
        match &self.inner.cfg.sns_signer {
            Some(s) => Signature {
                version,
                signature: s.sign(version, text.as_bytes()),
                cert_url: format!("{}{}", ctx.base_url, s.cert_path()),
            },
            None => Signature {
                version,
                signature: String::new(),
                cert_url: String::new(),
            },
        }
    }

    pub(super) async fn subscribe(
        &self,
        ctx: &RequestContext,
        c: Subscribe,
    ) -> SnsResult<SubscribeResult> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let endpoint = c.endpoint.clone().unwrap_or_default();
        let prefix = "Invalid parameter: Attributes Reason: ";
        let commit = {
            let mut reg = self.lock();
            let fifo_endpoint = endpoint.ends_with(".fifo");
            let t = reg
                .topics()
                .get(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            check_endpoint(&c.protocol, &endpoint, t.fifo)?;
            let body_scope = c
                .attributes
                .iter()
                .any(|(k, v)| k == "FilterPolicyScope" && v == "MessageBody");
            let kind = SubscriptionKind {
                protocol: &c.protocol,
                fifo_topic: t.fifo,
                fifo_endpoint,
                body_scope,
            };
            let mut attrs = BTreeMap::new();
            for (k, v) in &c.attributes {
                if let Some(v) = attributes::subscription_attribute(k, v, prefix, kind)? {
                    attrs.insert(k.clone(), v);
                } else {
                    attrs.remove(k);
                }
            }
            if let Some(existing) = t
                .subscriptions
                .iter()
                .find(|s| s.protocol == c.protocol && s.endpoint == endpoint)
            {
                let same = c
                    .attributes
                    .iter()
                    .all(|(k, v)| attributes::same_subscription_attribute(k, existing.attr(k), v));
                if !same {
                    return Err(SnsError::invalid(format!(
                        "{prefix}Subscription already exists with different attributes"
                    )));
                }
                let shown = if existing.confirmed() || c.return_subscription_arn {
                    existing.arn.clone()
                } else {
                    PENDING.to_owned()
                };
                return Ok(SubscribeResult {
                    subscription_arn: shown,
                });
            }
            if attrs.contains_key("FilterPolicy") {
                check_policy_count(t, None)?;
            }
            if t.subscriptions.len() >= MAX_SUBSCRIPTIONS {
                return Err(SnsError::new(
                    SnsErrorCode::SubscriptionLimitExceeded,
                    "Subscription limit exceeded",
                ));
            }
            let confirmed_at_once = matches!(c.protocol.as_str(), "sqs" | "lambda");
            let token = (!confirmed_at_once).then(|| self.new_token());
            let mut s = Subscription {
                arn: format!("{arn}:{}", self.new_uuid()),
                protocol: c.protocol.clone(),
                endpoint: endpoint.clone(),
                owner: ctx.scope.account.clone(),
                attributes: attrs,
                pending_token: token.clone(),
                authenticated: confirmed_at_once,
                order: 0,
                filter: None,
                raw: false,
            };
            s.refresh();
            let shown = if confirmed_at_once || c.return_subscription_arn {
                s.arn.clone()
            } else {
                PENDING.to_owned()
            };
            let version = sig_version(t);
            let topics = reg.topics_mut();
            if let (Some(token), true) = (&token, matches!(c.protocol.as_str(), "http" | "https")) {
                let mut outbox = std::mem::take(&mut topics.outbox);
                self.queue_confirmation(ctx, (&arn, version), &s, token, true, &mut outbox);
                topics.outbox = outbox;
            }
            let op = Op::Sns(s.put(&arn));
            let sub_arn = s.arn.clone();
            topics.add_subscription(&arn, s);
            // The order number is given on insertion; store the numbered record.
            let op = topics
                .subscription(&sub_arn)
                .map_or(op, |(_, s)| Op::Sns(s.put(&arn)));
            let commit = self.inner.store.submit(vec![op]);
            (commit, shown)
        };
        self.commit_sns(commit.0).await?;
        Ok(SubscribeResult {
            subscription_arn: commit.1,
        })
    }

    pub(super) async fn confirm_subscription(
        &self,
        ctx: &RequestContext,
        caller: SnsCaller,
        c: &ConfirmSubscription,
    ) -> SnsResult<ConfirmSubscriptionResult> {
        let Ok(parsed) = SnsArn::parse(&c.topic_arn, "Topic") else {
            return Err(SnsError::invalid_parameter("Topic"));
        };
        if parsed.region != ctx.scope.region {
            return Err(SnsError::invalid_parameter("Topic"));
        }
        if c.token.is_empty() || !c.token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SnsError::invalid("Invalid token"));
        }
        let commit = {
            let mut reg = self.lock();
            let topics = reg.topics_mut();
            // The token decides; a SubscribeURL naming a topic that is gone still works (§3.2).
            let found = topics.iter().find_map(|t| {
                t.subscriptions
                    .iter()
                    .find(|s| s.pending_token.as_deref() == Some(c.token.as_str()))
                    .map(|s| (t.arn.clone(), s.arn.clone()))
            });
            let Some((topic, sub)) = found else {
                return Err(SnsError::invalid_parameter("Token"));
            };
            if topics.get(&parsed.topic_arn()).is_some() && parsed.topic_arn() != topic {
                return Err(SnsError::invalid_parameter("Token"));
            }
            let Some(t) = topics.get_mut(&topic) else {
                return Err(SnsError::invalid_parameter("Token"));
            };
            let subs = t.subscriptions_mut();
            let Some(s) = subs.iter_mut().find(|s| s.arn == sub) else {
                return Err(SnsError::invalid_parameter("Token"));
            };
            s.pending_token = None;
            s.authenticated = caller.signed
                && c.authenticate_on_unsubscribe
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case("true"));
            let op = Op::Sns(s.put(&topic));
            (self.inner.store.submit(vec![op]), sub)
        };
        self.commit_sns(commit.0).await?;
        Ok(ConfirmSubscriptionResult {
            subscription_arn: commit.1,
        })
    }

    pub(super) async fn unsubscribe(
        &self,
        ctx: &RequestContext,
        caller: SnsCaller,
        c: &Unsubscribe,
    ) -> SnsResult<()> {
        let Some(arn) = c.subscription_arn.as_deref() else {
            return Err(SnsError::invalid_parameter(
                "SubscriptionArn Reason: no value for required parameter",
            ));
        };
        let parsed = SnsArn::parse(arn, "SubscriptionArn")?;
        if parsed.subscription.is_none_or(str::is_empty) {
            return Err(SnsError::invalid_parameter("SubscriptionId"));
        }
        let commit = {
            let mut reg = self.lock();
            let topics = reg.topics_mut();
            // Idempotent (§5.5): nothing to remove still answers after earlier commits.
            let mut ops = Vec::new();
            if let Some((topic_arn, s)) = topics.remove_subscription(arn) {
                ops.push(Op::Sns(SnsOp::DeleteSubscription(s.arn.clone())));
                if let Some(t) = topics.get(&topic_arn) {
                    ops.push(Op::Sns(t.put()));
                    if !caller.signed && matches!(s.protocol.as_str(), "http" | "https") {
                        let version = sig_version(t);
                        let token = self.new_token();
                        let mut outbox = std::mem::take(&mut topics.outbox);
                        let of = (topic_arn.as_str(), version);
                        self.queue_confirmation(ctx, of, &s, &token, false, &mut outbox);
                        topics.outbox = outbox;
                    }
                }
            }
            self.inner.store.submit(ops)
        };
        self.commit_sns(commit).await
    }

    pub(super) fn list_subscriptions(
        &self,
        ctx: &RequestContext,
        c: &ListSubscriptions,
    ) -> SnsResult<ListSubscriptionsResult> {
        let start = page_start(c.next_token.as_deref())?;
        let reg = self.lock();
        let topics = reg.topics();
        let all: Vec<SubscriptionSummary> = topics
            .arns_in(&ctx.scope)
            .into_iter()
            .filter_map(|a| topics.get(a))
            .flat_map(|t| t.subscriptions.iter().map(move |s| summary(t, s)))
            .collect();
        Ok(page(all, start))
    }

    pub(super) fn list_subscriptions_by_topic(
        &self,
        ctx: &RequestContext,
        c: &ListSubscriptionsByTopic,
    ) -> SnsResult<ListSubscriptionsResult> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let start = page_start(c.next_token.as_deref())?;
        let reg = self.lock();
        let t = reg
            .topics()
            .get(&arn)
            .ok_or_else(SnsError::topic_not_found)?;
        let all = t.subscriptions.iter().map(|s| summary(t, s)).collect();
        Ok(page(all, start))
    }

    pub(super) fn get_subscription_attributes(
        &self,
        _ctx: &RequestContext,
        c: &GetSubscriptionAttributes,
    ) -> SnsResult<GetSubscriptionAttributesResult> {
        SnsArn::parse(&c.subscription_arn, "SubscriptionArn")?;
        let reg = self.lock();
        let (t, s) = reg
            .topics()
            .subscription(&c.subscription_arn)
            .ok_or_else(SnsError::subscription_not_found)?;
        Ok(GetSubscriptionAttributesResult {
            attributes: subscription_attributes(t, s),
        })
    }

    pub(super) async fn set_subscription_attributes(
        &self,
        _ctx: &RequestContext,
        c: &SetSubscriptionAttributes,
    ) -> SnsResult<()> {
        SnsArn::parse(&c.subscription_arn, "SubscriptionArn")?;
        let value = c.attribute_value.as_deref().unwrap_or_default();
        let commit = {
            let mut reg = self.lock();
            let topics = reg.topics_mut();
            let topic_arn = topics
                .topic_of(&c.subscription_arn)
                .ok_or_else(SnsError::subscription_not_found)?
                .to_owned();
            let t = topics
                .get_mut(&topic_arn)
                .ok_or_else(SnsError::subscription_not_found)?;
            let fifo_topic = t.fifo;
            if c.attribute_name == "FilterPolicy" && !value.is_empty() {
                check_policy_count(t, Some(&c.subscription_arn))?;
            }
            let subs = t.subscriptions_mut();
            let s = subs
                .iter_mut()
                .find(|s| s.arn == c.subscription_arn)
                .ok_or_else(SnsError::subscription_not_found)?;
            let body_scope = if c.attribute_name == "FilterPolicyScope" {
                value == "MessageBody"
            } else {
                s.attr("FilterPolicyScope") == Some("MessageBody")
            };
            let kind = SubscriptionKind {
                protocol: &s.protocol,
                fifo_topic,
                fifo_endpoint: s.endpoint.ends_with(".fifo"),
                body_scope,
            };
            let prefix = "Invalid parameter: ";
            let stored =
                attributes::subscription_attribute(&c.attribute_name, value, prefix, kind)?;
            if c.attribute_name == "FilterPolicyScope"
                && let Some(policy) = s.attr("FilterPolicy")
            {
                // The policy in force must suit the new scope.
                attributes::subscription_attribute("FilterPolicy", policy, prefix, kind)?;
            }
            match stored {
                Some(v) => s.attributes.insert(c.attribute_name.clone(), v),
                None => s.attributes.remove(&c.attribute_name),
            };
            s.refresh();
            let op = Op::Sns(s.put(&topic_arn));
            self.inner.store.submit(vec![op])
        };
        self.commit_sns(commit).await
    }
}

/// The SignatureVersion of a topic's envelopes (absent means 1, §4.2).
pub(super) fn sig_version(t: &Topic) -> u8 {
    if t.attr("SignatureVersion") == Some("2") {
        2
    } else {
        1
    }
}

fn page(all: Vec<SubscriptionSummary>, start: usize) -> ListSubscriptionsResult {
    let total = all.len();
    let end = (start + PAGE).min(total);
    ListSubscriptionsResult {
        subscriptions: all
            .into_iter()
            .skip(start)
            .take(end.saturating_sub(start))
            .collect(),
        next_token: next_token(end, total),
    }
}
