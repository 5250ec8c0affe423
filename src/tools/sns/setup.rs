//! Tools layer, SNS: the `[[topic]]` tables of the `--config` file: topics to create at start
//! (and again after a reset) with their subscriptions. Each becomes CreateTopic, Subscribe
//! and SetSubscriptionAttributes commands run through the engine, so a config file gets the
//! validation an SDK caller gets; applying it twice changes nothing.
//!
//! ```toml
//! [[topic]]
//! name = "orders"
//! attributes = { DisplayName = "Orders" }
//!
//! [[topic.subscription]]
//! queue = "orders-billing"                      # a queue of this server, by name
//! raw = true
//! filter_policy = '{"kind": ["order"]}'
//!
//! [[topic.subscription]]
//! protocol = "https"
//! endpoint = "https://hooks.example.test/sns"
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use crate::command::RequestContext;
use crate::command::sns::{
    CreateTopic, ListSubscriptionsByTopic, SetSubscriptionAttributes, SnsCommand, SnsReply,
    Subscribe,
};
use crate::engine::{Engine, SnsCaller};

/// One declared topic.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicDecl {
    /// Topic name (`.fifo` for FIFO topics; `FifoTopic = true` is implied by the suffix).
    pub name: String,
    /// Account (12 digits); the server's `--account-id` when absent.
    pub account: Option<String>,
    /// Region; the server's `--region` when absent.
    pub region: Option<String>,
    /// Topic attributes by their API names.
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Subscriptions (`[[topic.subscription]]`).
    #[serde(default)]
    pub subscription: Vec<SubscriptionDecl>,
}

/// One declared subscription: a queue by name, or a protocol and an endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionDecl {
    /// A queue of this server in the topic's account and region, by name (protocol `sqs`).
    pub queue: Option<String>,
    /// Protocol, when not a queue (`sqs` with a queue ARN, `http`, `https`, `lambda`, …).
    pub protocol: Option<String>,
    /// Endpoint, when not a queue.
    pub endpoint: Option<String>,
    /// `RawMessageDelivery`.
    #[serde(default)]
    pub raw: bool,
    /// `FilterPolicy` (JSON text).
    pub filter_policy: Option<String>,
    /// Other subscription attributes by their API names (`FilterPolicyScope`, `RedrivePolicy`).
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
}

/// Creates or updates every declared topic and subscription.
pub async fn apply(engine: &Engine, topics: &[TopicDecl]) -> Result<(), String> {
    let caller = SnsCaller { signed: true };
    for t in topics {
        let err = |e: String| format!("topic {}: {e}", t.name);
        let scope = engine.scope_for(t.account.as_deref(), t.region.as_deref());
        let ctx = RequestContext::new("http://localhost", Arc::clone(&scope));
        let mut attributes: Vec<(String, String)> = t
            .attributes
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if t.name.ends_with(".fifo") && !t.attributes.contains_key("FifoTopic") {
            attributes.push(("FifoTopic".into(), "true".into()));
        }
        let create = SnsCommand::CreateTopic(CreateTopic {
            name: t.name.clone(),
            attributes,
            tags: t.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        });
        let topic_arn = match engine.execute_sns(&ctx, caller, create).await {
            Ok(SnsReply::CreateTopic(r)) => r.topic_arn,
            Ok(_) => return Err(err("unexpected reply".into())),
            Err(e) => return Err(err(e.to_string())),
        };
        for s in &t.subscription {
            let (protocol, endpoint) = match (&s.queue, &s.protocol, &s.endpoint) {
                (Some(q), None, None) => ("sqs".to_owned(), scope.arn(q)),
                (None, Some(p), Some(e)) => (p.clone(), e.clone()),
                _ => {
                    return Err(err(
                        "a subscription names either `queue`, or `protocol` and `endpoint`".into(),
                    ));
                }
            };
            let mut attrs = s.attributes.clone();
            if s.raw {
                attrs.insert("RawMessageDelivery".into(), "true".into());
            }
            if let Some(p) = &s.filter_policy {
                attrs.insert("FilterPolicy".into(), p.clone());
            }
            let sub = SnsCommand::Subscribe(Subscribe {
                topic_arn: topic_arn.clone(),
                protocol: protocol.clone(),
                endpoint: Some(endpoint.clone()),
                attributes: attrs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                return_subscription_arn: true,
            });
            match engine.execute_sns(&ctx, caller, sub).await {
                Ok(_) => {}
                Err(e)
                    if e.message
                        .contains("already exists with different attributes") =>
                {
                    update(engine, &ctx, &topic_arn, &protocol, &endpoint, &attrs)
                        .await
                        .map_err(err)?;
                }
                Err(e) => return Err(err(format!("subscription {endpoint}: {e}"))),
            }
        }
    }
    Ok(())
}

/// Sets the declared attributes of an existing subscription.
async fn update(
    engine: &Engine,
    ctx: &RequestContext,
    topic_arn: &str,
    protocol: &str,
    endpoint: &str,
    attrs: &BTreeMap<String, String>,
) -> Result<(), String> {
    let caller = SnsCaller { signed: true };
    let list = SnsCommand::ListSubscriptionsByTopic(ListSubscriptionsByTopic {
        topic_arn: topic_arn.to_owned(),
        next_token: None,
    });
    let Ok(SnsReply::ListSubscriptionsByTopic(r)) = engine.execute_sns(ctx, caller, list).await
    else {
        return Err("cannot list the topic's subscriptions".into());
    };
    let Some(sub) = r
        .subscriptions
        .iter()
        .find(|s| s.protocol == protocol && s.endpoint == endpoint)
    else {
        return Err(format!("subscription {endpoint} not found"));
    };
    for (k, v) in attrs {
        let set = SnsCommand::SetSubscriptionAttributes(SetSubscriptionAttributes {
            subscription_arn: sub.subscription_arn.clone(),
            attribute_name: k.clone(),
            attribute_value: Some(v.clone()),
        });
        engine
            .execute_sns(ctx, caller, set)
            .await
            .map_err(|e| format!("subscription {endpoint}: {e}"))?;
    }
    Ok(())
}
