//! Engine layer, ops, SNS: topics (docs/sns.md §4): CreateTopic (idempotent as AWS),
//! DeleteTopic (idempotent; its subscriptions go with it), Get/SetTopicAttributes, ListTopics
//! (100 a page), tags and AddPermission/RemovePermission.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::execute::topic_arn;
use crate::command::sns::attributes::{self, DEFAULT_EFFECTIVE_DELIVERY_POLICY};
use crate::command::sns::validate::{self, SnsArn};
use crate::command::sns::*;
use crate::command::{Pairs, RequestContext};
use crate::engine::handle::Engine;
use crate::engine::model::topic::Topic;
use crate::engine::store::schema::Op;
use crate::engine::store::sns_record::SnsOp;

/// Most topics the server holds (AWS: 100,000 standard per account, [D]).
const MAX_TOPICS: usize = 100_000;
/// Most tags per topic ([E] moto).
const MAX_TAGS: usize = 50;
/// Topics and subscriptions per list page (§4.4).
pub(super) const PAGE: usize = 100;

/// The offset a NextToken names (base64 of a decimal offset, [E] moto's offset in AWS's
/// base64 form).
pub(super) fn page_start(token: Option<&str>) -> SnsResult<usize> {
    let Some(t) = token.filter(|t| !t.is_empty()) else {
        return Ok(0);
    };
    STANDARD
        .decode(t)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| SnsError::invalid_parameter("NextToken"))
}

/// The NextToken of the page after `end`, when there is one.
pub(super) fn next_token(end: usize, total: usize) -> Option<String> {
    (end < total).then(|| STANDARD.encode(end.to_string()))
}

impl Engine {
    pub(super) async fn create_topic(
        &self,
        ctx: &RequestContext,
        c: CreateTopic,
    ) -> SnsResult<CreateTopicResult> {
        let fifo_attr = c
            .attributes
            .iter()
            .find(|(k, _)| k == "FifoTopic")
            .is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"));
        if !validate::topic_name_ok(&c.name) || fifo_attr != c.name.ends_with(".fifo") {
            return Err(SnsError::invalid_parameter("Topic Name"));
        }
        let mut attrs = Vec::new();
        for (k, v) in &c.attributes {
            if k == "FifoTopic" {
                continue;
            }
            if let Some(v) = attributes::topic_attribute(k, v, true, fifo_attr)? {
                attrs.push((k.clone(), v));
            }
        }
        for (k, v) in &c.tags {
            check_tag(k, v)?;
        }
        let scope = &ctx.scope;
        let arn = validate::topic_arn(&scope.region, &scope.account, &c.name);
        let commit = {
            let mut reg = self.lock();
            let topics = reg.topics_mut();
            if let Some(t) = topics.get(&arn) {
                if fifo_attr != t.fifo {
                    return Err(SnsError::invalid_parameter("Topic Name"));
                }
                let differs = attrs
                    .iter()
                    .any(|(k, v)| shown_topic_attribute(t, k).as_deref() != Some(v.as_str()));
                if differs {
                    return Err(SnsError::invalid_parameter(
                        "Attributes Reason: Topic already exists with different attributes",
                    ));
                }
                if c.tags.iter().any(|(k, v)| t.tags.get(k) != Some(v)) {
                    return Err(SnsError::invalid_parameter(
                        "Tags Reason: Topic already exists with different tags",
                    ));
                }
                return Ok(CreateTopicResult { topic_arn: arn });
            }
            if topics.len() >= MAX_TOPICS {
                return Err(SnsError::new(
                    SnsErrorCode::TopicLimitExceeded,
                    "Topic limit exceeded",
                ));
            }
            let mut t = Topic::new(arn.clone(), c.name.clone(), (**scope).clone(), fifo_attr);
            t.attributes.extend(attrs);
            if fifo_attr {
                t.attributes
                    .entry("ContentBasedDeduplication".into())
                    .or_insert_with(|| "false".into());
            }
            t.tags.extend(c.tags.iter().cloned());
            let op = Op::Sns(t.put());
            topics.insert(t);
            self.inner.store.submit(vec![op])
        };
        self.commit_sns(commit).await?;
        Ok(CreateTopicResult { topic_arn: arn })
    }

    pub(super) async fn delete_topic(
        &self,
        ctx: &RequestContext,
        c: &DeleteTopic,
    ) -> SnsResult<()> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let commit = {
            let mut reg = self.lock();
            // Idempotent (§4.4): a missing topic still answers after the commits before it.
            let mut ops: Vec<Op> = Vec::new();
            if let Some(t) = reg.topics_mut().remove(&arn) {
                ops = t
                    .subscriptions
                    .iter()
                    .map(|s| Op::Sns(SnsOp::DeleteSubscription(s.arn.clone())))
                    .collect();
                ops.push(Op::Sns(SnsOp::DeleteTopic(arn)));
            }
            self.inner.store.submit(ops)
        };
        self.commit_sns(commit).await
    }

    pub(super) fn get_topic_attributes(
        &self,
        ctx: &RequestContext,
        c: &GetTopicAttributes,
    ) -> SnsResult<GetTopicAttributesResult> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let reg = self.lock();
        let t = reg
            .topics()
            .get(&arn)
            .ok_or_else(SnsError::topic_not_found)?;
        Ok(GetTopicAttributesResult {
            attributes: topic_attributes(t),
        })
    }

    pub(super) async fn set_topic_attributes(
        &self,
        ctx: &RequestContext,
        c: &SetTopicAttributes,
    ) -> SnsResult<()> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let value = c.attribute_value.as_deref().unwrap_or_default();
        let commit = {
            let mut reg = self.lock();
            let t = reg
                .topics_mut()
                .get_mut(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            match attributes::topic_attribute(&c.attribute_name, value, false, t.fifo)? {
                Some(v) => t.attributes.insert(c.attribute_name.clone(), v),
                None => t.attributes.remove(&c.attribute_name),
            };
            t.generation += 1;
            self.inner.store.submit(vec![Op::Sns(t.put())])
        };
        self.commit_sns(commit).await
    }

    pub(super) fn list_topics(
        &self,
        ctx: &RequestContext,
        c: &ListTopics,
    ) -> SnsResult<ListTopicsResult> {
        let start = page_start(c.next_token.as_deref())?;
        let reg = self.lock();
        let all = reg.topics().arns_in(&ctx.scope);
        let end = (start + PAGE).min(all.len());
        Ok(ListTopicsResult {
            topics: all
                .get(start.min(end)..end)
                .unwrap_or_default()
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            next_token: next_token(end, all.len()),
        })
    }

    /// The topic a tag action names: `ResourceNotFound` when it does not exist ([E] moto).
    fn tagged_topic(&self, ctx: &RequestContext, arn: &str) -> SnsResult<String> {
        let a = SnsArn::parse(arn, "ResourceArn")?;
        let arn = a.topic_arn();
        if a.region != ctx.scope.region || self.lock().topics().get(&arn).is_none() {
            return Err(SnsError::new(
                SnsErrorCode::ResourceNotFound,
                "Resource does not exist",
            ));
        }
        Ok(arn)
    }

    pub(super) async fn tag_resource(
        &self,
        ctx: &RequestContext,
        c: &TagResource,
    ) -> SnsResult<TagResourceResult> {
        let arn = self.tagged_topic(ctx, &c.resource_arn)?;
        for (i, (k, v)) in c.tags.iter().enumerate() {
            check_tag(k, v)?;
            if c.tags[..i].iter().any(|(o, _)| o == k) {
                return Err(SnsError::invalid_parameter(
                    "Duplicated keys are not allowed.",
                ));
            }
        }
        let commit = {
            let mut reg = self.lock();
            let t = reg
                .topics_mut()
                .get_mut(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            let mut tags = t.tags.clone();
            tags.extend(c.tags.iter().cloned());
            if tags.len() > MAX_TAGS {
                return Err(SnsError::new(
                    SnsErrorCode::TagLimitExceeded,
                    "Could not complete request: tag quota of per resource exceeded",
                ));
            }
            t.tags = tags;
            self.inner.store.submit(vec![Op::Sns(t.put())])
        };
        self.commit_sns(commit).await?;
        Ok(TagResourceResult)
    }

    pub(super) async fn untag_resource(
        &self,
        ctx: &RequestContext,
        c: &UntagResource,
    ) -> SnsResult<UntagResourceResult> {
        let arn = self.tagged_topic(ctx, &c.resource_arn)?;
        let commit = {
            let mut reg = self.lock();
            let t = reg
                .topics_mut()
                .get_mut(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            for k in &c.tag_keys {
                t.tags.remove(k);
            }
            self.inner.store.submit(vec![Op::Sns(t.put())])
        };
        self.commit_sns(commit).await?;
        Ok(UntagResourceResult)
    }

    pub(super) fn list_tags_for_resource(
        &self,
        ctx: &RequestContext,
        c: &ListTagsForResource,
    ) -> SnsResult<ListTagsForResourceResult> {
        let arn = self.tagged_topic(ctx, &c.resource_arn)?;
        let reg = self.lock();
        let t = reg
            .topics()
            .get(&arn)
            .ok_or_else(SnsError::topic_not_found)?;
        Ok(ListTagsForResourceResult {
            tags: t.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        })
    }

    pub(super) async fn add_permission_sns(
        &self,
        ctx: &RequestContext,
        c: &AddPermission,
    ) -> SnsResult<()> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        if c.action_names.is_empty()
            || c.action_names
                .iter()
                .any(|a| SnsAction::from_name(a).is_none())
        {
            return Err(SnsError::invalid_parameter(
                "Policy statement action out of service scope!",
            ));
        }
        let commit = {
            let mut reg = self.lock();
            let t = reg
                .topics_mut()
                .get_mut(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            let mut policy = policy_of(t);
            let statements = policy["Statement"].as_array_mut();
            let Some(statements) = statements else {
                return Err(SnsError::invalid_parameter("Policy"));
            };
            if statements.iter().any(|s| s["Sid"] == c.label.as_str()) {
                return Err(SnsError::invalid_parameter("Statement already exists"));
            }
            let one_or_many = |v: Vec<String>| match v.len() {
                1 => Value::String(v.into_iter().next().unwrap_or_default()),
                _ => Value::from(v),
            };
            let principals = c
                .aws_account_ids
                .iter()
                .map(|a| format!("arn:aws:iam::{a}:root"))
                .collect();
            let actions = c.action_names.iter().map(|a| format!("SNS:{a}")).collect();
            statements.push(json!({
                "Sid": c.label,
                "Effect": "Allow",
                "Principal": { "AWS": one_or_many(principals) },
                "Action": one_or_many(actions),
                "Resource": arn,
            }));
            t.attributes.insert("Policy".into(), policy.to_string());
            self.inner.store.submit(vec![Op::Sns(t.put())])
        };
        self.commit_sns(commit).await
    }

    pub(super) async fn remove_permission_sns(
        &self,
        ctx: &RequestContext,
        c: &RemovePermission,
    ) -> SnsResult<()> {
        let arn = topic_arn(ctx, &c.topic_arn, "TopicArn")?;
        let commit = {
            let mut reg = self.lock();
            let t = reg
                .topics_mut()
                .get_mut(&arn)
                .ok_or_else(SnsError::topic_not_found)?;
            let mut policy = policy_of(t);
            if let Some(statements) = policy["Statement"].as_array_mut() {
                statements.retain(|s| s["Sid"] != c.label.as_str());
            }
            t.attributes.insert("Policy".into(), policy.to_string());
            self.inner.store.submit(vec![Op::Sns(t.put())])
        };
        self.commit_sns(commit).await
    }
}

/// Tag limits (key 1–128, value 0–256, [M]); [E] the text.
fn check_tag(k: &str, v: &str) -> SnsResult<()> {
    if k.is_empty() || k.len() > 128 || v.len() > 256 {
        return Err(SnsError::invalid_parameter("Tags"));
    }
    Ok(())
}

fn policy_of(t: &Topic) -> Value {
    let text = t.attr("Policy").map_or_else(
        || attributes::default_policy(&t.arn, &t.scope.account),
        str::to_owned,
    );
    serde_json::from_str(&text).unwrap_or_else(|_| json!({ "Statement": [] }))
}

/// The value GetTopicAttributes shows for `name`, defaults included.
fn shown_topic_attribute(t: &Topic, name: &str) -> Option<String> {
    topic_attributes(t)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// Every attribute GetTopicAttributes shows (§4.2).
fn topic_attributes(t: &Topic) -> Pairs {
    let (confirmed, pending) = t.counts();
    let mut out: Pairs = vec![
        (
            "Policy".into(),
            t.attr("Policy").map_or_else(
                || attributes::default_policy(&t.arn, &t.scope.account),
                str::to_owned,
            ),
        ),
        ("Owner".into(), t.scope.account.clone()),
        ("SubscriptionsPending".into(), pending.to_string()),
        ("TopicArn".into(), t.arn.clone()),
        (
            "EffectiveDeliveryPolicy".into(),
            t.attr("DeliveryPolicy")
                .unwrap_or(DEFAULT_EFFECTIVE_DELIVERY_POLICY)
                .to_owned(),
        ),
        ("SubscriptionsConfirmed".into(), confirmed.to_string()),
        (
            "DisplayName".into(),
            t.attr("DisplayName").unwrap_or_default().to_owned(),
        ),
        (
            "SubscriptionsDeleted".into(),
            t.deleted_subscriptions.to_string(),
        ),
    ];
    if t.fifo {
        out.push(("FifoTopic".into(), "true".into()));
    }
    for (k, v) in &t.attributes {
        if !matches!(k.as_str(), "Policy" | "DisplayName") {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}
