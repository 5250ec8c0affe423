//! Wire layer, SQS: one decoder per action, written once against [`Params`] for both protocols.
//!
//! Only presence and type are checked here; ranges and semantics are checked in `command` and
//! `engine`, so both protocols give identical messages.

use crate::command::*;
use crate::error::{SqsError, SqsResult};
use crate::wire::params::Params;

fn required(p: &dyn Params, member: &str) -> SqsResult<String> {
    p.string(member)?.ok_or_else(|| SqsError::missing(member))
}

fn required_int(p: &dyn Params, member: &str) -> SqsResult<i64> {
    p.int(member)?.ok_or_else(|| SqsError::missing(member))
}

fn queue_url(p: &dyn Params) -> SqsResult<String> {
    required(p, "QueueUrl")
}

/// The members of one message to send: a `SendMessage`'s, and each batch entry's.
fn message_to_send(p: &dyn Params) -> SqsResult<MessageToSend> {
    Ok(MessageToSend {
        message_body: p.string("MessageBody")?.unwrap_or_default(),
        delay_seconds: p.int("DelaySeconds")?,
        message_attributes: p.message_attributes("MessageAttributes")?,
        message_system_attributes: p.message_attributes("MessageSystemAttributes")?,
        message_deduplication_id: p.string("MessageDeduplicationId")?,
        message_group_id: p.string("MessageGroupId")?,
    })
}

/// Decodes the request of `action` into a [`Command`].
pub fn decode(action: Action, p: &dyn Params) -> SqsResult<Command> {
    Ok(match action {
        Action::CreateQueue => Command::CreateQueue(CreateQueue {
            queue_name: required(p, "QueueName")?,
            attributes: p.string_map("Attributes")?,
            tags: p.string_map("tags")?,
        }),
        Action::GetQueueUrl => Command::GetQueueUrl(GetQueueUrl {
            queue_name: required(p, "QueueName")?,
            queue_owner_aws_account_id: p.string("QueueOwnerAWSAccountId")?,
        }),
        Action::ListQueues => Command::ListQueues(ListQueues {
            queue_name_prefix: p.string("QueueNamePrefix")?,
            next_token: p.string("NextToken")?,
            max_results: p.int("MaxResults")?,
        }),
        Action::DeleteQueue => Command::DeleteQueue(DeleteQueue {
            queue_url: queue_url(p)?,
        }),
        Action::GetQueueAttributes => Command::GetQueueAttributes(GetQueueAttributes {
            queue_url: queue_url(p)?,
            attribute_names: p.string_list("AttributeNames")?,
        }),
        Action::SetQueueAttributes => Command::SetQueueAttributes(SetQueueAttributes {
            queue_url: queue_url(p)?,
            attributes: p.string_map("Attributes")?,
        }),
        Action::PurgeQueue => Command::PurgeQueue(PurgeQueue {
            queue_url: queue_url(p)?,
        }),
        Action::TagQueue => Command::TagQueue(TagQueue {
            queue_url: queue_url(p)?,
            tags: p.string_map("Tags")?,
        }),
        Action::UntagQueue => Command::UntagQueue(UntagQueue {
            queue_url: queue_url(p)?,
            tag_keys: p.string_list("TagKeys")?,
        }),
        Action::ListQueueTags => Command::ListQueueTags(ListQueueTags {
            queue_url: queue_url(p)?,
        }),
        Action::AddPermission => Command::AddPermission(AddPermission {
            queue_url: queue_url(p)?,
            label: required(p, "Label")?,
            aws_account_ids: p.string_list("AWSAccountIds")?,
            actions: p.string_list("Actions")?,
        }),
        Action::RemovePermission => Command::RemovePermission(RemovePermission {
            queue_url: queue_url(p)?,
            label: required(p, "Label")?,
        }),
        Action::SendMessage => Command::SendMessage(SendMessage {
            queue_url: queue_url(p)?,
            message: message_to_send(p)?,
        }),
        Action::ReceiveMessage => Command::ReceiveMessage(ReceiveMessage {
            queue_url: queue_url(p)?,
            attribute_names: p.string_list("AttributeNames")?,
            message_system_attribute_names: p.string_list("MessageSystemAttributeNames")?,
            message_attribute_names: p.string_list("MessageAttributeNames")?,
            max_number_of_messages: p.int("MaxNumberOfMessages")?,
            visibility_timeout: p.int("VisibilityTimeout")?,
            wait_time_seconds: p.int("WaitTimeSeconds")?,
            receive_request_attempt_id: p.string("ReceiveRequestAttemptId")?,
            override_max: None,
            override_wait_s: None,
        }),
        Action::DeleteMessage => Command::DeleteMessage(DeleteMessage {
            queue_url: queue_url(p)?,
            receipt_handle: required(p, "ReceiptHandle")?,
        }),
        Action::ChangeMessageVisibility => {
            Command::ChangeMessageVisibility(ChangeMessageVisibility {
                queue_url: queue_url(p)?,
                receipt_handle: required(p, "ReceiptHandle")?,
                visibility_timeout: required_int(p, "VisibilityTimeout")?,
            })
        }
        Action::SendMessageBatch => Command::SendMessageBatch(SendMessageBatch {
            queue_url: queue_url(p)?,
            entries: p
                .entries("Entries")?
                .unwrap_or_default()
                .iter()
                .map(|e| {
                    // The message's members are read before the id, as they always were, so
                    // an entry with several faults reports the same one.
                    let message = message_to_send(e.as_ref())?;
                    Ok(SendMessageBatchRequestEntry {
                        id: e.string("Id")?.unwrap_or_default(),
                        message,
                    })
                })
                .collect::<SqsResult<_>>()?,
        }),
        Action::DeleteMessageBatch => Command::DeleteMessageBatch(DeleteMessageBatch {
            queue_url: queue_url(p)?,
            entries: p
                .entries("Entries")?
                .unwrap_or_default()
                .iter()
                .map(|e| {
                    Ok(DeleteMessageBatchRequestEntry {
                        id: e.string("Id")?.unwrap_or_default(),
                        receipt_handle: e.string("ReceiptHandle")?.unwrap_or_default(),
                    })
                })
                .collect::<SqsResult<_>>()?,
        }),
        Action::ChangeMessageVisibilityBatch => {
            Command::ChangeMessageVisibilityBatch(ChangeMessageVisibilityBatch {
                queue_url: queue_url(p)?,
                entries: p
                    .entries("Entries")?
                    .unwrap_or_default()
                    .iter()
                    .map(|e| {
                        Ok(ChangeMessageVisibilityBatchRequestEntry {
                            id: e.string("Id")?.unwrap_or_default(),
                            receipt_handle: e.string("ReceiptHandle")?.unwrap_or_default(),
                            visibility_timeout: e.int("VisibilityTimeout")?,
                        })
                    })
                    .collect::<SqsResult<_>>()?,
            })
        }
        Action::ListDeadLetterSourceQueues => {
            Command::ListDeadLetterSourceQueues(ListDeadLetterSourceQueues {
                queue_url: queue_url(p)?,
                next_token: p.string("NextToken")?,
                max_results: p.int("MaxResults")?,
            })
        }
        Action::StartMessageMoveTask => Command::StartMessageMoveTask(StartMessageMoveTask {
            source_arn: required(p, "SourceArn")?,
            destination_arn: p.string("DestinationArn")?,
            max_number_of_messages_per_second: p.int("MaxNumberOfMessagesPerSecond")?,
        }),
        Action::CancelMessageMoveTask => Command::CancelMessageMoveTask(CancelMessageMoveTask {
            task_handle: required(p, "TaskHandle")?,
        }),
        Action::ListMessageMoveTasks => Command::ListMessageMoveTasks(ListMessageMoveTasks {
            source_arn: required(p, "SourceArn")?,
            max_results: p.int("MaxResults")?,
        }),
    })
}
