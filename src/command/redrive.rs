//! Command layer: dead-letter source listing and message move tasks.
//!
//! Imports neither `wire` nor `engine`.

/// `ListDeadLetterSourceQueues` request.
#[derive(Debug, Clone, Default)]
pub struct ListDeadLetterSourceQueues {
    /// The dead-letter queue URL.
    pub queue_url: String,
    /// Pagination token.
    pub next_token: Option<String>,
    /// Page size.
    pub max_results: Option<i64>,
}

/// `ListDeadLetterSourceQueues` result (`queueUrls` in JSON).
#[derive(Debug, Clone, Default)]
pub struct ListDeadLetterSourceQueuesResult {
    /// Source queue URLs.
    pub queue_urls: Vec<String>,
    /// Present when more remain.
    pub next_token: Option<String>,
}

/// `StartMessageMoveTask` request.
#[derive(Debug, Clone, Default)]
pub struct StartMessageMoveTask {
    /// ARN of the dead-letter queue to move from.
    pub source_arn: String,
    /// Destination ARN; absent means each message's original source.
    pub destination_arn: Option<String>,
    /// Rate limit, up to 500.
    pub max_number_of_messages_per_second: Option<i64>,
}

/// `StartMessageMoveTask` result.
#[derive(Debug, Clone, Default)]
pub struct StartMessageMoveTaskResult {
    /// Opaque handle (§4).
    pub task_handle: String,
}

/// `CancelMessageMoveTask` request.
#[derive(Debug, Clone, Default)]
pub struct CancelMessageMoveTask {
    /// The handle from `StartMessageMoveTask`.
    pub task_handle: String,
}

/// `CancelMessageMoveTask` result.
#[derive(Debug, Clone, Default)]
pub struct CancelMessageMoveTaskResult {
    /// Messages moved before the cancel.
    pub approximate_number_of_messages_moved: i64,
}

/// `ListMessageMoveTasks` request.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasks {
    /// ARN of the dead-letter queue.
    pub source_arn: String,
    /// 1–10, default 1.
    pub max_results: Option<i64>,
}

/// One task in `ListMessageMoveTasks`.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasksResultEntry {
    /// Only for RUNNING tasks.
    pub task_handle: Option<String>,
    /// RUNNING, COMPLETED, CANCELLING, CANCELLED or FAILED.
    pub status: String,
    /// Source ARN.
    pub source_arn: String,
    /// Destination ARN, when one was given.
    pub destination_arn: Option<String>,
    /// Rate limit, when one was given.
    pub max_number_of_messages_per_second: Option<i64>,
    /// Moved so far.
    pub approximate_number_of_messages_moved: i64,
    /// To move in total.
    pub approximate_number_of_messages_to_move: Option<i64>,
    /// Only for FAILED tasks.
    pub failure_reason: Option<String>,
    /// Epoch milliseconds.
    pub started_timestamp: i64,
}

/// `ListMessageMoveTasks` result.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasksResult {
    /// Most recent first.
    pub results: Vec<ListMessageMoveTasksResultEntry>,
}
