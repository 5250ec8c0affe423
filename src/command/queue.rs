//! Command layer: queue-level actions (create, look up, list, delete, attributes, purge, tags,
//! permissions).
//!
//! Imports neither `wire` nor `engine`.

use super::types::Pairs;

/// `CreateQueue` request.
#[derive(Debug, Clone, Default)]
pub struct CreateQueue {
    /// The queue name.
    pub queue_name: String,
    /// Requested attributes, in request order.
    pub attributes: Pairs,
    /// Tags to apply at creation (`tags`, lower-case in JSON).
    pub tags: Pairs,
}

/// `CreateQueue` result.
#[derive(Debug, Clone)]
pub struct CreateQueueResult {
    /// The queue URL.
    pub queue_url: String,
}

/// `GetQueueUrl` request.
#[derive(Debug, Clone, Default)]
pub struct GetQueueUrl {
    /// The queue name.
    pub queue_name: String,
    /// Optional owner account.
    pub queue_owner_aws_account_id: Option<String>,
}

/// `GetQueueUrl` result.
#[derive(Debug, Clone)]
pub struct GetQueueUrlResult {
    /// The queue URL.
    pub queue_url: String,
}

/// `ListQueues` request.
#[derive(Debug, Clone, Default)]
pub struct ListQueues {
    /// Only names starting with this (case-sensitive).
    pub queue_name_prefix: Option<String>,
    /// Pagination token from a previous page.
    pub next_token: Option<String>,
    /// Page size, 1–1000.
    pub max_results: Option<i64>,
}

/// `ListQueues` result.
#[derive(Debug, Clone, Default)]
pub struct ListQueuesResult {
    /// Matching queue URLs.
    pub queue_urls: Vec<String>,
    /// Present when more results remain.
    pub next_token: Option<String>,
}

/// `DeleteQueue` request.
#[derive(Debug, Clone, Default)]
pub struct DeleteQueue {
    /// The queue URL (or name).
    pub queue_url: String,
}

/// `GetQueueAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct GetQueueAttributes {
    /// The queue URL.
    pub queue_url: String,
    /// Names requested; `All` selects everything.
    pub attribute_names: Vec<String>,
}

/// `GetQueueAttributes` result.
#[derive(Debug, Clone, Default)]
pub struct GetQueueAttributesResult {
    /// Name/value pairs, all values strings.
    pub attributes: Pairs,
}

/// `SetQueueAttributes` request.
#[derive(Debug, Clone, Default)]
pub struct SetQueueAttributes {
    /// The queue URL.
    pub queue_url: String,
    /// Attributes to set, in request order.
    pub attributes: Pairs,
}

/// `PurgeQueue` request.
#[derive(Debug, Clone, Default)]
pub struct PurgeQueue {
    /// The queue URL.
    pub queue_url: String,
}

/// `TagQueue` request.
#[derive(Debug, Clone, Default)]
pub struct TagQueue {
    /// The queue URL.
    pub queue_url: String,
    /// Tags to add or overwrite.
    pub tags: Pairs,
}

/// `UntagQueue` request.
#[derive(Debug, Clone, Default)]
pub struct UntagQueue {
    /// The queue URL.
    pub queue_url: String,
    /// Keys to remove.
    pub tag_keys: Vec<String>,
}

/// `ListQueueTags` request.
#[derive(Debug, Clone, Default)]
pub struct ListQueueTags {
    /// The queue URL.
    pub queue_url: String,
}

/// `ListQueueTags` result.
#[derive(Debug, Clone, Default)]
pub struct ListQueueTagsResult {
    /// All tags of the queue.
    pub tags: Pairs,
}

/// `AddPermission` request.
#[derive(Debug, Clone, Default)]
pub struct AddPermission {
    /// The queue URL.
    pub queue_url: String,
    /// Statement id.
    pub label: String,
    /// Principals (account ids).
    pub aws_account_ids: Vec<String>,
    /// Action names, without the `SQS:` prefix.
    pub actions: Vec<String>,
}

/// `RemovePermission` request.
#[derive(Debug, Clone, Default)]
pub struct RemovePermission {
    /// The queue URL.
    pub queue_url: String,
    /// Statement id to remove.
    pub label: String,
}
