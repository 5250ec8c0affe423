//! Engine layer, ops, SNS: the one match that sends each `SnsCommand` to the engine method of
//! the same name ([`Engine::execute_sns`]), and what every SNS action shares: the request's
//! view of a topic ARN (its region must be the request's, docs/sns.md §1.1).

use crate::command::RequestContext;
use crate::command::sns::validate::SnsArn;
use crate::command::sns::{SnsCommand, SnsError, SnsReply, SnsResult};
use crate::engine::handle::Engine;

/// Who is asking, besides the request context: an unsigned request (a SubscribeURL or
/// UnsubscribeURL visited in a browser) is not its subscriber authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnsCaller {
    /// Whether the request carried a SigV4 signature.
    pub signed: bool,
}

impl Engine {
    /// Runs one SNS command in the scope of its request context.
    pub async fn execute_sns(
        &self,
        ctx: &RequestContext,
        caller: SnsCaller,
        cmd: SnsCommand,
    ) -> SnsResult<SnsReply> {
        Ok(match cmd {
            SnsCommand::CreateTopic(c) => SnsReply::CreateTopic(self.create_topic(ctx, c).await?),
            SnsCommand::DeleteTopic(c) => SnsReply::DeleteTopic(self.delete_topic(ctx, &c).await?),
            SnsCommand::GetTopicAttributes(c) => {
                SnsReply::GetTopicAttributes(self.get_topic_attributes(ctx, &c)?)
            }
            SnsCommand::SetTopicAttributes(c) => {
                SnsReply::SetTopicAttributes(self.set_topic_attributes(ctx, &c).await?)
            }
            SnsCommand::ListTopics(c) => SnsReply::ListTopics(self.list_topics(ctx, &c)?),
            SnsCommand::TagResource(c) => SnsReply::TagResource(self.tag_resource(ctx, &c).await?),
            SnsCommand::UntagResource(c) => {
                SnsReply::UntagResource(self.untag_resource(ctx, &c).await?)
            }
            SnsCommand::ListTagsForResource(c) => {
                SnsReply::ListTagsForResource(self.list_tags_for_resource(ctx, &c)?)
            }
            SnsCommand::AddPermission(c) => {
                SnsReply::AddPermission(self.add_permission_sns(ctx, &c).await?)
            }
            SnsCommand::RemovePermission(c) => {
                SnsReply::RemovePermission(self.remove_permission_sns(ctx, &c).await?)
            }
            SnsCommand::Subscribe(c) => SnsReply::Subscribe(self.subscribe(ctx, c).await?),
            SnsCommand::ConfirmSubscription(c) => {
                SnsReply::ConfirmSubscription(self.confirm_subscription(ctx, caller, &c).await?)
            }
            SnsCommand::Unsubscribe(c) => {
                SnsReply::Unsubscribe(self.unsubscribe(ctx, caller, &c).await?)
            }
            SnsCommand::ListSubscriptions(c) => {
                SnsReply::ListSubscriptions(self.list_subscriptions(ctx, &c)?)
            }
            SnsCommand::ListSubscriptionsByTopic(c) => {
                SnsReply::ListSubscriptionsByTopic(self.list_subscriptions_by_topic(ctx, &c)?)
            }
            SnsCommand::GetSubscriptionAttributes(c) => {
                SnsReply::GetSubscriptionAttributes(self.get_subscription_attributes(ctx, &c)?)
            }
            SnsCommand::SetSubscriptionAttributes(c) => SnsReply::SetSubscriptionAttributes(
                self.set_subscription_attributes(ctx, &c).await?,
            ),
            SnsCommand::Publish(c) => SnsReply::Publish(self.publish(ctx, c).await?),
            SnsCommand::PublishBatch(c) => {
                SnsReply::PublishBatch(self.publish_batch(ctx, c).await?)
            }
        })
    }

    /// Waits for a commit, as SNS reports a storage failure.
    pub(super) async fn commit_sns(
        &self,
        commit: crate::engine::store::schema::Commit,
    ) -> SnsResult<()> {
        self.commit(commit).await.map_err(SnsError::from)
    }
}

/// The topic ARN `arn` names for a request in `ctx` (given as `param`): parsed with AWS's
/// texts, and in the request's region (`Invalid parameter: <param>` otherwise, §1.1).
pub(super) fn topic_arn(ctx: &RequestContext, arn: &str, param: &str) -> SnsResult<String> {
    let a = SnsArn::parse(arn, param)?;
    if a.region != ctx.scope.region || a.subscription.is_some() {
        return Err(SnsError::invalid_parameter(param));
    }
    Ok(a.topic_arn())
}
