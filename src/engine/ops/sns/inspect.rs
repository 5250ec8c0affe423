//! Engine layer, ops, SNS: what `/metrics` and the console read of the topics, outside any
//! request: per-topic counters and a topic's subscriptions.

use crate::command::Scope;
use crate::engine::handle::Engine;

/// One topic as `/metrics` and the console see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSummary {
    /// Topic name.
    pub name: String,
    /// Its ARN.
    pub arn: String,
    /// Account and region.
    pub scope: Scope,
    /// FIFO topic.
    pub fifo: bool,
    /// Messages published since the server started.
    pub published: u64,
    /// Deliveries to subscriptions since the server started.
    pub delivered: u64,
    /// Confirmed subscriptions.
    pub confirmed: usize,
    /// Subscriptions waiting for confirmation.
    pub pending: usize,
}

/// One subscription as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionView {
    /// Its ARN.
    pub arn: String,
    /// Protocol.
    pub protocol: String,
    /// Endpoint.
    pub endpoint: String,
    /// Waiting for confirmation.
    pub pending: bool,
    /// Raw delivery.
    pub raw: bool,
    /// Its filter policy, if any.
    pub filter_policy: Option<String>,
}

impl Engine {
    /// Every topic, sorted by name, account and region.
    #[must_use]
    pub fn topic_summaries(&self) -> Vec<TopicSummary> {
        let reg = self.lock();
        let mut out: Vec<TopicSummary> = reg
            .topics()
            .iter()
            .map(|t| {
                let (confirmed, pending) = t.counts();
                TopicSummary {
                    name: t.name.clone(),
                    arn: t.arn.clone(),
                    scope: t.scope.clone(),
                    fifo: t.fifo,
                    published: t.published,
                    delivered: t.delivered,
                    confirmed,
                    pending,
                }
            })
            .collect();
        out.sort_by(|a, b| (&a.name, &a.scope).cmp(&(&b.name, &b.scope)));
        out
    }

    /// The subscriptions of the topic with this ARN, in subscribe order; `None` without it.
    #[must_use]
    pub fn topic_subscriptions(&self, arn: &str) -> Option<Vec<SubscriptionView>> {
        let reg = self.lock();
        let t = reg.topics().get(arn)?;
        Some(
            t.subscriptions
                .iter()
                .map(|s| SubscriptionView {
                    arn: s.arn.clone(),
                    protocol: s.protocol.clone(),
                    endpoint: s.endpoint.clone(),
                    pending: !s.confirmed(),
                    raw: s.raw,
                    filter_policy: s.attr("FilterPolicy").map(str::to_owned),
                })
                .collect(),
        )
    }
}
