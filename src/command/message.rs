//! Command layer: single-message actions (send, receive, delete, change visibility).
//!
//! Imports neither `wire` nor `engine`.

use super::types::{MessageAttributes, Pairs};

/// `SendMessage` request.
#[derive(Debug, Clone, Default)]
pub struct SendMessage {
    /// The queue URL.
    pub queue_url: String,
    /// The message: the members a `SendMessageBatch` entry has too.
    pub message: MessageToSend,
}

/// The members of one message to send, shared by `SendMessage` and each
/// `SendMessageBatchRequestEntry` (the model repeats them in both shapes; here they are
/// written, decoded and checked once).
#[derive(Debug, Clone, Default)]
pub struct MessageToSend {
    /// The body, as sent.
    pub message_body: String,
    /// Per-message delay, 0–900.
    pub delay_seconds: Option<i64>,
    /// User attributes.
    pub message_attributes: MessageAttributes,
    /// System attributes (only `AWSTraceHeader`).
    pub message_system_attributes: MessageAttributes,
    /// FIFO deduplication id.
    pub message_deduplication_id: Option<String>,
    /// FIFO (or fair-queue) group id.
    pub message_group_id: Option<String>,
}

/// `SendMessage` result.
#[derive(Debug, Clone, Default)]
pub struct SendMessageResult {
    /// MD5 of the body.
    pub md5_of_message_body: String,
    /// MD5 of the attributes; absent when none were sent.
    pub md5_of_message_attributes: Option<String>,
    /// MD5 of the system attributes; absent when none were sent.
    pub md5_of_message_system_attributes: Option<String>,
    /// The new message id.
    pub message_id: String,
    /// FIFO only.
    pub sequence_number: Option<String>,
}

/// `ReceiveMessage` request.
#[derive(Debug, Clone, Default)]
pub struct ReceiveMessage {
    /// The queue URL.
    pub queue_url: String,
    /// Deprecated system-attribute selector.
    pub attribute_names: Vec<String>,
    /// System-attribute selector.
    pub message_system_attribute_names: Vec<String>,
    /// User-attribute selector (names, `All`, `prefix.*`).
    pub message_attribute_names: Vec<String>,
    /// 1–10.
    pub max_number_of_messages: Option<i64>,
    /// Override of the queue's visibility timeout for this receive.
    pub visibility_timeout: Option<i64>,
    /// Long-poll wait, 0–20.
    pub wait_time_seconds: Option<i64>,
    /// FIFO retry token.
    pub receive_request_attempt_id: Option<String>,
    /// LocalStack's `x-localstack-sqs-override-message-count` header (`--compat localstack`,
    /// set by the front door, never read from the body): how many messages to take, in place of
    /// MaxNumberOfMessages and unbounded by its 1–10.
    pub override_max: Option<u32>,
    /// LocalStack's `x-localstack-sqs-override-wait-time-seconds` header (`--compat
    /// localstack`): the long-poll wait in place of WaitTimeSeconds, unbounded by its 0–20; the
    /// poll then waits until it has all its messages or the time is up.
    pub override_wait_s: Option<u32>,
}

/// One received message.
#[derive(Debug, Clone, Default)]
pub struct Message {
    /// Message id.
    pub message_id: String,
    /// Receipt handle of this receive.
    pub receipt_handle: String,
    /// MD5 of the body.
    pub md5_of_body: String,
    /// The body.
    pub body: String,
    /// Selected system attributes.
    pub attributes: Pairs,
    /// MD5 over the returned user attributes; absent when none are returned.
    pub md5_of_message_attributes: Option<String>,
    /// Selected user attributes.
    pub message_attributes: MessageAttributes,
}

/// `ReceiveMessage` result.
#[derive(Debug, Clone, Default)]
pub struct ReceiveMessageResult {
    /// The messages; empty is encoded as an absent member.
    pub messages: Vec<Message>,
}

/// `DeleteMessage` request.
#[derive(Debug, Clone, Default)]
pub struct DeleteMessage {
    /// The queue URL.
    pub queue_url: String,
    /// The receipt handle.
    pub receipt_handle: String,
}

/// `ChangeMessageVisibility` request.
#[derive(Debug, Clone, Default)]
pub struct ChangeMessageVisibility {
    /// The queue URL.
    pub queue_url: String,
    /// The receipt handle.
    pub receipt_handle: String,
    /// New timeout in seconds from now, 0–43200.
    pub visibility_timeout: i64,
}
