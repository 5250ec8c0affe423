//! Wire layer, SNS: one decoder per action, reading model member names through the `Params`
//! trait (docs/sns.md §1.2). Only presence and form are checked here; what a value means is
//! the engine's and `command::sns`'s.

use crate::command::sns::error::{SnsError, SnsResult};
use crate::command::sns::*;
use crate::error::SqsError;
use crate::wire::params::Params;

fn e(err: SqsError) -> SnsError {
    SnsError::invalid(format!("Invalid parameter: {}", err.message))
}

fn opt(p: &dyn Params, m: &str) -> SnsResult<Option<String>> {
    p.string(m).map_err(e)
}

/// A required member; absent is AWS's text for a missing required parameter (recorded for
/// Unsubscribe, [V]; used for every action, [E]).
fn req(p: &dyn Params, m: &str) -> SnsResult<String> {
    opt(p, m)?.ok_or_else(|| {
        SnsError::invalid(format!(
            "Invalid parameter: {m} Reason: no value for required parameter"
        ))
    })
}

fn boolean(p: &dyn Params, m: &str) -> SnsResult<bool> {
    Ok(opt(p, m)?.is_some_and(|v| v.eq_ignore_ascii_case("true")))
}

fn message(p: &dyn Params) -> SnsResult<MessageToPublish> {
    Ok(MessageToPublish {
        message: opt(p, "Message")?,
        subject: opt(p, "Subject")?,
        message_structure: opt(p, "MessageStructure")?,
        message_attributes: p
            .message_attributes("MessageAttributes")
            .map_err(|err| SnsError::value_invalid(err.message.to_string()))?,
        message_deduplication_id: opt(p, "MessageDeduplicationId")?,
        message_group_id: opt(p, "MessageGroupId")?,
    })
}

/// Builds the command for `action` from its members.
pub fn decode(action: SnsAction, p: &dyn Params) -> SnsResult<SnsCommand> {
    Ok(match action {
        SnsAction::CreateTopic => SnsCommand::CreateTopic(CreateTopic {
            name: req(p, "Name")?,
            attributes: p.string_map("Attributes").map_err(e)?,
            tags: p.string_map("Tags").map_err(e)?,
        }),
        SnsAction::DeleteTopic => SnsCommand::DeleteTopic(DeleteTopic {
            topic_arn: req(p, "TopicArn")?,
        }),
        SnsAction::GetTopicAttributes => SnsCommand::GetTopicAttributes(GetTopicAttributes {
            topic_arn: req(p, "TopicArn")?,
        }),
        SnsAction::SetTopicAttributes => SnsCommand::SetTopicAttributes(SetTopicAttributes {
            topic_arn: req(p, "TopicArn")?,
            attribute_name: req(p, "AttributeName")?,
            attribute_value: opt(p, "AttributeValue")?,
        }),
        SnsAction::ListTopics => SnsCommand::ListTopics(ListTopics {
            next_token: opt(p, "NextToken")?,
        }),
        SnsAction::Subscribe => SnsCommand::Subscribe(Subscribe {
            topic_arn: req(p, "TopicArn")?,
            protocol: req(p, "Protocol")?,
            endpoint: opt(p, "Endpoint")?,
            attributes: p.string_map("Attributes").map_err(e)?,
            return_subscription_arn: boolean(p, "ReturnSubscriptionArn")?,
        }),
        SnsAction::ConfirmSubscription => SnsCommand::ConfirmSubscription(ConfirmSubscription {
            topic_arn: req(p, "TopicArn")?,
            token: req(p, "Token")?,
            authenticate_on_unsubscribe: opt(p, "AuthenticateOnUnsubscribe")?,
        }),
        SnsAction::Unsubscribe => SnsCommand::Unsubscribe(Unsubscribe {
            subscription_arn: opt(p, "SubscriptionArn")?,
        }),
        SnsAction::ListSubscriptions => SnsCommand::ListSubscriptions(ListSubscriptions {
            next_token: opt(p, "NextToken")?,
        }),
        SnsAction::ListSubscriptionsByTopic => {
            SnsCommand::ListSubscriptionsByTopic(ListSubscriptionsByTopic {
                topic_arn: req(p, "TopicArn")?,
                next_token: opt(p, "NextToken")?,
            })
        }
        SnsAction::GetSubscriptionAttributes => {
            SnsCommand::GetSubscriptionAttributes(GetSubscriptionAttributes {
                subscription_arn: req(p, "SubscriptionArn")?,
            })
        }
        SnsAction::SetSubscriptionAttributes => {
            SnsCommand::SetSubscriptionAttributes(SetSubscriptionAttributes {
                subscription_arn: req(p, "SubscriptionArn")?,
                attribute_name: req(p, "AttributeName")?,
                attribute_value: opt(p, "AttributeValue")?,
            })
        }
        SnsAction::Publish => SnsCommand::Publish(Publish {
            topic_arn: opt(p, "TopicArn")?,
            target_arn: opt(p, "TargetArn")?,
            phone_number: opt(p, "PhoneNumber")?,
            message: message(p)?,
        }),
        SnsAction::PublishBatch => {
            let entries = p
                .entries("PublishBatchRequestEntries")
                .map_err(e)?
                .unwrap_or_default()
                .iter()
                .map(|entry| {
                    Ok(PublishBatchRequestEntry {
                        id: opt(entry.as_ref(), "Id")?.unwrap_or_default(),
                        message: message(entry.as_ref())?,
                    })
                })
                .collect::<SnsResult<_>>()?;
            SnsCommand::PublishBatch(PublishBatch {
                topic_arn: req(p, "TopicArn")?,
                entries,
            })
        }
        SnsAction::TagResource => SnsCommand::TagResource(TagResource {
            resource_arn: req(p, "ResourceArn")?,
            tags: p.string_map("Tags").map_err(e)?,
        }),
        SnsAction::UntagResource => SnsCommand::UntagResource(UntagResource {
            resource_arn: req(p, "ResourceArn")?,
            tag_keys: p.string_list("TagKeys").map_err(e)?,
        }),
        SnsAction::ListTagsForResource => SnsCommand::ListTagsForResource(ListTagsForResource {
            resource_arn: req(p, "ResourceArn")?,
        }),
        SnsAction::AddPermission => SnsCommand::AddPermission(AddPermission {
            topic_arn: req(p, "TopicArn")?,
            label: req(p, "Label")?,
            aws_account_ids: p.string_list("AWSAccountId").map_err(e)?,
            action_names: p.string_list("ActionName").map_err(e)?,
        }),
        SnsAction::RemovePermission => SnsCommand::RemovePermission(RemovePermission {
            topic_arn: req(p, "TopicArn")?,
            label: req(p, "Label")?,
        }),
    })
}
