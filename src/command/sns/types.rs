//! Command layer, SNS: the request and result types of every SNS action, named exactly like the
//! AWS actions and their results (docs/sns.md §1.2, §1.3). Imports neither `wire` nor `engine`.

use crate::command::{MessageAttributes, Pairs};

/// `CreateTopic` request.
#[derive(Debug, Clone, Default)]
pub struct CreateTopic {
    /// The topic name (`.fifo` for FIFO topics).
    pub name: String,
    /// `Attributes.entry.N`, in request order.
    pub attributes: Pairs,
    /// `Tags.member.N`, in request order.
    pub tags: Pairs,
}

/// `CreateTopic` result.
#[derive(Debug, Clone, Default)]
pub struct CreateTopicResult {
    /// The topic's ARN.
    pub topic_arn: String,
}

/// `DeleteTopic` request.
#[derive(Debug, Clone, Default)]
pub struct DeleteTopic {
    /// The topic's ARN.
    pub topic_arn: String,
}

/// `GetTopicAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct GetTopicAttributes {
    /// The topic's ARN.
    pub topic_arn: String,
}

/// `GetTopicAttributes` result.
#[derive(Debug, Clone, Default)]
pub struct GetTopicAttributesResult {
    /// Every attribute shown, by name.
    pub attributes: Pairs,
}

/// `SetTopicAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct SetTopicAttributes {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The attribute to set.
    pub attribute_name: String,
    /// Its new value (absent: empty).
    pub attribute_value: Option<String>,
}

/// `ListTopics` request.
#[derive(Debug, Clone, Default)]
pub struct ListTopics {
    /// The token of the page to list.
    pub next_token: Option<String>,
}

/// `ListTopics` result.
#[derive(Debug, Clone, Default)]
pub struct ListTopicsResult {
    /// Topic ARNs of this page.
    pub topics: Vec<String>,
    /// The next page's token, absent on the last page.
    pub next_token: Option<String>,
}

/// `Subscribe` request.
#[derive(Debug, Clone, Default)]
pub struct Subscribe {
    /// The topic's ARN.
    pub topic_arn: String,
    /// `sqs`, `http`, `https`, `lambda`, `email`, `email-json`, `sms`, …
    pub protocol: String,
    /// The endpoint (a queue ARN, a URL, a function ARN, …).
    pub endpoint: Option<String>,
    /// Subscription attributes, in request order.
    pub attributes: Pairs,
    /// Return the ARN even while the subscription waits for confirmation.
    pub return_subscription_arn: bool,
}

/// `Subscribe` result.
#[derive(Debug, Clone, Default)]
pub struct SubscribeResult {
    /// The subscription's ARN, or `pending confirmation`.
    pub subscription_arn: String,
}

/// `ConfirmSubscription` request.
#[derive(Debug, Clone, Default)]
pub struct ConfirmSubscription {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The token sent to the endpoint.
    pub token: String,
    /// `true` to require authentication to unsubscribe.
    pub authenticate_on_unsubscribe: Option<String>,
}

/// `ConfirmSubscription` result.
#[derive(Debug, Clone, Default)]
pub struct ConfirmSubscriptionResult {
    /// The confirmed subscription's ARN.
    pub subscription_arn: String,
}

/// `Unsubscribe` request.
#[derive(Debug, Clone, Default)]
pub struct Unsubscribe {
    /// The subscription's ARN (absent: an error of its own, §3.2).
    pub subscription_arn: Option<String>,
}

/// `ListSubscriptions` request.
#[derive(Debug, Clone, Default)]
pub struct ListSubscriptions {
    /// The token of the page to list.
    pub next_token: Option<String>,
}

/// `ListSubscriptionsByTopic` request.
#[derive(Debug, Clone, Default)]
pub struct ListSubscriptionsByTopic {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The token of the page to list.
    pub next_token: Option<String>,
}

/// One subscription as the list actions show it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubscriptionSummary {
    /// Its ARN, or `PendingConfirmation`.
    pub subscription_arn: String,
    /// The subscriber's account.
    pub owner: String,
    /// Its protocol.
    pub protocol: String,
    /// Its endpoint.
    pub endpoint: String,
    /// The topic's ARN.
    pub topic_arn: String,
}

/// `ListSubscriptions` result.
#[derive(Debug, Clone, Default)]
pub struct ListSubscriptionsResult {
    /// Subscriptions of this page.
    pub subscriptions: Vec<SubscriptionSummary>,
    /// The next page's token, absent on the last page.
    pub next_token: Option<String>,
}

/// `ListSubscriptionsByTopic` result: the same members as [`ListSubscriptionsResult`].
pub type ListSubscriptionsByTopicResult = ListSubscriptionsResult;

/// `GetSubscriptionAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct GetSubscriptionAttributes {
    /// The subscription's ARN.
    pub subscription_arn: String,
}

/// `GetSubscriptionAttributes` result.
#[derive(Debug, Clone, Default)]
pub struct GetSubscriptionAttributesResult {
    /// Every attribute shown, by name.
    pub attributes: Pairs,
}

/// `SetSubscriptionAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct SetSubscriptionAttributes {
    /// The subscription's ARN.
    pub subscription_arn: String,
    /// The attribute to set.
    pub attribute_name: String,
    /// Its new value (absent: empty).
    pub attribute_value: Option<String>,
}

/// What Publish and each PublishBatch entry publish.
#[derive(Debug, Clone, Default)]
pub struct MessageToPublish {
    /// The message (absent: an error).
    pub message: Option<String>,
    /// The subject of email and envelope deliveries.
    pub subject: Option<String>,
    /// `json` to give a message per protocol.
    pub message_structure: Option<String>,
    /// Message attributes, by name.
    pub message_attributes: MessageAttributes,
    /// FIFO topics: the deduplication id.
    pub message_deduplication_id: Option<String>,
    /// FIFO topics (and fair standard queues): the group id.
    pub message_group_id: Option<String>,
}

/// `Publish` request.
#[derive(Debug, Clone, Default)]
pub struct Publish {
    /// The topic's ARN.
    pub topic_arn: Option<String>,
    /// A topic ARN (as `TopicArn`) or a mobile endpoint ARN.
    pub target_arn: Option<String>,
    /// An SMS destination (not emulated).
    pub phone_number: Option<String>,
    /// The message.
    pub message: MessageToPublish,
}

/// `Publish` result.
#[derive(Debug, Clone, Default)]
pub struct PublishResult {
    /// The SNS message id.
    pub message_id: String,
    /// FIFO topics: the topic's sequence number.
    pub sequence_number: Option<String>,
}

/// One `PublishBatchRequestEntries.member.N`.
#[derive(Debug, Clone, Default)]
pub struct PublishBatchRequestEntry {
    /// The entry's id in the batch.
    pub id: String,
    /// What it publishes.
    pub message: MessageToPublish,
}

/// `PublishBatch` request.
#[derive(Debug, Clone, Default)]
pub struct PublishBatch {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The entries (absent or empty: `EmptyBatchRequest`).
    pub entries: Vec<PublishBatchRequestEntry>,
}

/// One successful PublishBatch entry.
#[derive(Debug, Clone, Default)]
pub struct PublishBatchResultEntry {
    /// The entry's id.
    pub id: String,
    /// The SNS message id.
    pub message_id: String,
    /// FIFO topics: the sequence number.
    pub sequence_number: Option<String>,
}

/// One failed PublishBatch entry.
#[derive(Debug, Clone, Default)]
pub struct BatchResultErrorEntry {
    /// The entry's id.
    pub id: String,
    /// The error code.
    pub code: String,
    /// The error message.
    pub message: String,
    /// Whether the caller is at fault.
    pub sender_fault: bool,
}

/// `PublishBatch` result.
#[derive(Debug, Clone, Default)]
pub struct PublishBatchResult {
    /// Entries published.
    pub successful: Vec<PublishBatchResultEntry>,
    /// Entries refused.
    pub failed: Vec<BatchResultErrorEntry>,
}

/// `TagResource` request.
#[derive(Debug, Clone, Default)]
pub struct TagResource {
    /// The topic's ARN.
    pub resource_arn: String,
    /// Tags to add or overwrite, in request order.
    pub tags: Pairs,
}

/// `TagResource` result (no members).
#[derive(Debug, Clone, Default)]
pub struct TagResourceResult;

/// `UntagResource` request.
#[derive(Debug, Clone, Default)]
pub struct UntagResource {
    /// The topic's ARN.
    pub resource_arn: String,
    /// Keys to remove.
    pub tag_keys: Vec<String>,
}

/// `UntagResource` result (no members).
#[derive(Debug, Clone, Default)]
pub struct UntagResourceResult;

/// `ListTagsForResource` request.
#[derive(Debug, Clone, Default)]
pub struct ListTagsForResource {
    /// The topic's ARN.
    pub resource_arn: String,
}

/// `ListTagsForResource` result.
#[derive(Debug, Clone, Default)]
pub struct ListTagsForResourceResult {
    /// Every tag, by key.
    pub tags: Pairs,
}

/// `AddPermission` request.
#[derive(Debug, Clone, Default)]
pub struct AddPermission {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The statement id.
    pub label: String,
    /// Accounts granted.
    pub aws_account_ids: Vec<String>,
    /// Actions granted (`Publish`, …).
    pub action_names: Vec<String>,
}

/// `RemovePermission` request.
#[derive(Debug, Clone, Default)]
pub struct RemovePermission {
    /// The topic's ARN.
    pub topic_arn: String,
    /// The statement id.
    pub label: String,
}
