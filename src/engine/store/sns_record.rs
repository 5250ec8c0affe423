//! Engine layer, store: SNS's records (one type per table of `sns.rs`) and the ops that change
//! them. On-disk format, like `record.rs`: postcard, fields by position (docs/storage.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::record::ScopeRecord;

/// A topic (table `sns_topics`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TopicRecord {
    /// Topic name.
    pub name: String,
    /// Account and region.
    pub scope: ScopeRecord,
    /// FIFO or standard.
    pub fifo: bool,
    /// Set attributes by their API names, as GetTopicAttributes shows them.
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// FIFO: the next sequence number is above this one (kept when deduplication entries,
    /// which also carry it, expire).
    pub last_sequence: u128,
    /// Subscriptions deleted so far (`SubscriptionsDeleted`).
    pub deleted_subscriptions: u64,
}

/// A subscription (table `sns_subscriptions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SubscriptionRecord {
    /// The topic's ARN.
    pub topic_arn: String,
    /// Protocol.
    pub protocol: String,
    /// Endpoint.
    pub endpoint: String,
    /// The subscriber's account.
    pub owner: String,
    /// Set attributes by their API names.
    pub attributes: BTreeMap<String, String>,
    /// Waiting for confirmation: the token that confirms it.
    pub pending_token: Option<String>,
    /// `ConfirmationWasAuthenticated`.
    pub authenticated: bool,
    /// Subscribe order within the topic (deliveries follow it).
    pub order: u64,
}

/// A FIFO topic's remembered publish (table `sns_dedup`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SnsDedupRecord {
    /// End of the window (epoch ms).
    pub expires_ms: u64,
    /// The original's message id.
    pub message_id: String,
    /// The original's sequence number.
    pub sequence_number: u128,
}

/// One change to SNS's tables.
#[derive(Debug)]
pub(crate) enum SnsOp {
    /// Insert or replace a topic.
    PutTopic(String, TopicRecord),
    /// Remove a topic and its deduplication entries (its subscriptions go by their own ops).
    DeleteTopic(String),
    /// Insert or replace a subscription.
    PutSubscription(String, SubscriptionRecord),
    /// Remove a subscription.
    DeleteSubscription(String),
    /// Insert or replace a deduplication entry.
    PutDedup(String, String, SnsDedupRecord),
    /// Remove a deduplication entry.
    DeleteDedup(String, String),
}
