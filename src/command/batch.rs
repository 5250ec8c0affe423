//! Command layer: the three batch actions and their per-entry results.
//!
//! Imports neither `wire` nor `engine`.

use crate::error::ErrorCode;

use super::message::MessageToSend;

/// One entry of `SendMessageBatch`.
#[derive(Debug, Clone, Default)]
pub struct SendMessageBatchRequestEntry {
    /// Caller-chosen entry id.
    pub id: String,
    /// The message, with the members of a `SendMessage`.
    pub message: MessageToSend,
}

/// `SendMessageBatch` request.
#[derive(Debug, Clone, Default)]
pub struct SendMessageBatch {
    /// The queue URL.
    pub queue_url: String,
    /// The entries.
    pub entries: Vec<SendMessageBatchRequestEntry>,
}

/// One successful entry of `SendMessageBatch`.
#[derive(Debug, Clone, Default)]
pub struct SendMessageBatchResultEntry {
    /// The entry id.
    pub id: String,
    /// New message id.
    pub message_id: String,
    /// MD5 of the body.
    pub md5_of_message_body: String,
    /// MD5 of the attributes, when any.
    pub md5_of_message_attributes: Option<String>,
    /// MD5 of the system attributes, when any.
    pub md5_of_message_system_attributes: Option<String>,
    /// FIFO only.
    pub sequence_number: Option<String>,
}

/// A failed batch entry (§5.3).
#[derive(Debug, Clone)]
pub struct BatchResultErrorEntry {
    /// The entry id.
    pub id: String,
    /// The error's row in the table: its legacy code and fault go on the wire.
    pub code: ErrorCode,
    /// Exact message.
    pub message: String,
}

/// `SendMessageBatch` result.
#[derive(Debug, Clone, Default)]
pub struct SendMessageBatchResult {
    /// Entries that succeeded.
    pub successful: Vec<SendMessageBatchResultEntry>,
    /// Entries that failed.
    pub failed: Vec<BatchResultErrorEntry>,
}

/// One entry of `DeleteMessageBatch`.
#[derive(Debug, Clone, Default)]
pub struct DeleteMessageBatchRequestEntry {
    /// Caller-chosen entry id.
    pub id: String,
    /// The receipt handle.
    pub receipt_handle: String,
}

/// `DeleteMessageBatch` request.
#[derive(Debug, Clone, Default)]
pub struct DeleteMessageBatch {
    /// The queue URL.
    pub queue_url: String,
    /// The entries.
    pub entries: Vec<DeleteMessageBatchRequestEntry>,
}

/// `DeleteMessageBatch` result.
#[derive(Debug, Clone, Default)]
pub struct DeleteMessageBatchResult {
    /// Ids of entries that succeeded.
    pub successful: Vec<String>,
    /// Entries that failed.
    pub failed: Vec<BatchResultErrorEntry>,
}

/// One entry of `ChangeMessageVisibilityBatch`.
#[derive(Debug, Clone, Default)]
pub struct ChangeMessageVisibilityBatchRequestEntry {
    /// Caller-chosen entry id.
    pub id: String,
    /// The receipt handle.
    pub receipt_handle: String,
    /// New timeout (absent means 0 in the model? it is optional there).
    pub visibility_timeout: Option<i64>,
}

/// `ChangeMessageVisibilityBatch` request.
#[derive(Debug, Clone, Default)]
pub struct ChangeMessageVisibilityBatch {
    /// The queue URL.
    pub queue_url: String,
    /// The entries.
    pub entries: Vec<ChangeMessageVisibilityBatchRequestEntry>,
}

/// `ChangeMessageVisibilityBatch` result.
#[derive(Debug, Clone, Default)]
pub struct ChangeMessageVisibilityBatchResult {
    /// Ids of entries that succeeded.
    pub successful: Vec<String>,
    /// Entries that failed.
    pub failed: Vec<BatchResultErrorEntry>,
}
