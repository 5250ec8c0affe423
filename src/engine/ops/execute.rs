//! Engine layer, ops: the one match that sends each `Command` to the engine method of the same
//! name ([`Engine::execute`]). A new action gets its arm here.

use crate::command::{Command, Reply, RequestContext};
use crate::engine::handle::{Access, Engine};
use crate::error::SqsResult;

impl Engine {
    /// Runs one command in the scope (account and region) of its request context.
    pub async fn execute(&self, ctx: &RequestContext, cmd: Command) -> SqsResult<Reply> {
        // While storage cannot take every write, only what it can (one atomic load).
        self.refuse_unwritable(match cmd {
            Command::GetQueueUrl(_)
            | Command::ListQueues(_)
            | Command::GetQueueAttributes(_)
            | Command::ListQueueTags(_)
            | Command::ListDeadLetterSourceQueues(_)
            | Command::ListMessageMoveTasks(_) => Access::Read,
            Command::ReceiveMessage(_)
            | Command::ChangeMessageVisibility(_)
            | Command::ChangeMessageVisibilityBatch(_)
            | Command::DeleteMessage(_)
            | Command::DeleteMessageBatch(_)
            | Command::PurgeQueue(_)
            | Command::DeleteQueue(_) => Access::Consume,
            _ => Access::Write,
        })?;
        match cmd {
            Command::CreateQueue(c) => self.create_queue(ctx, c).await.map(Reply::CreateQueue),
            Command::GetQueueUrl(c) => self.get_queue_url(ctx, &c).map(Reply::GetQueueUrl),
            Command::ListQueues(c) => self.list_queues(ctx, &c).map(Reply::ListQueues),
            Command::DeleteQueue(c) => self
                .delete_queue(&ctx.scope, &c)
                .await
                .map(Reply::DeleteQueue),
            Command::GetQueueAttributes(c) => self
                .get_queue_attributes(&ctx.scope, &c)
                .await
                .map(Reply::GetQueueAttributes),
            Command::SetQueueAttributes(c) => self
                .set_queue_attributes(&ctx.scope, &c)
                .await
                .map(Reply::SetQueueAttributes),
            Command::SendMessage(c) => self.send_message(ctx, c).await.map(Reply::SendMessage),
            Command::ReceiveMessage(c) => self
                .receive_message(&ctx.scope, &c)
                .await
                .map(Reply::ReceiveMessage),
            Command::DeleteMessage(c) => self
                .delete_message(&ctx.scope, &c)
                .await
                .map(Reply::DeleteMessage),
            Command::ChangeMessageVisibility(c) => self
                .change_message_visibility(&ctx.scope, &c)
                .await
                .map(Reply::ChangeMessageVisibility),
            Command::SendMessageBatch(c) => self
                .send_message_batch(ctx, c)
                .await
                .map(Reply::SendMessageBatch),
            Command::DeleteMessageBatch(c) => self
                .delete_message_batch(&ctx.scope, &c)
                .await
                .map(Reply::DeleteMessageBatch),
            Command::ChangeMessageVisibilityBatch(c) => self
                .change_message_visibility_batch(&ctx.scope, &c)
                .await
                .map(Reply::ChangeMessageVisibilityBatch),
            Command::PurgeQueue(c) => self
                .purge_queue(&ctx.scope, &c)
                .await
                .map(Reply::PurgeQueue),
            Command::TagQueue(c) => self.tag_queue(&ctx.scope, &c).await.map(Reply::TagQueue),
            Command::UntagQueue(c) => self
                .untag_queue(&ctx.scope, &c)
                .await
                .map(Reply::UntagQueue),
            Command::ListQueueTags(c) => self
                .list_queue_tags(&ctx.scope, &c)
                .map(Reply::ListQueueTags),
            Command::AddPermission(c) => self
                .add_permission(&ctx.scope, &c)
                .await
                .map(Reply::AddPermission),
            Command::RemovePermission(c) => self
                .remove_permission(&ctx.scope, &c)
                .await
                .map(Reply::RemovePermission),
            Command::ListDeadLetterSourceQueues(c) => self
                .list_dead_letter_source_queues(ctx, &c)
                .map(Reply::ListDeadLetterSourceQueues),
            Command::StartMessageMoveTask(c) => self
                .start_message_move_task(&c)
                .await
                .map(Reply::StartMessageMoveTask),
            Command::CancelMessageMoveTask(c) => self
                .cancel_message_move_task(&c)
                .await
                .map(Reply::CancelMessageMoveTask),
            Command::ListMessageMoveTasks(c) => self
                .list_message_move_tasks(&c)
                .map(Reply::ListMessageMoveTasks),
        }
    }
}
