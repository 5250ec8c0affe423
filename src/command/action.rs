//! Command layer: the one action table, and the [`Action`], [`Command`] and [`Reply`] enums it
//! generates, with the facts each row states (wire name, request type, result type, whether
//! there is a result at all).
//!
//! Imports neither `wire` nor `engine`. Each variant of [`Command`] holds a struct named exactly
//! like the AWS action; each variant of [`Reply`] holds the matching `<Action>Result`, or `()`
//! for an action without output.

use super::batch::*;
use super::message::*;
use super::queue::*;
use super::redrive::*;

/// Whether a row's result type is a result (`false` only for `()`).
macro_rules! has_result {
    (()) => {
        false
    };
    ($result:ident) => {
        true
    };
}

macro_rules! action_table {
    ($( $name:ident => $result:tt ),* $(,)?) => {
        /// Every SQS action, by its wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $( #[doc = stringify!($name)] $name, )*
        }

        impl Action {
            /// Every action, in table order (the order of the variants, so `a as usize` is
            /// `a`'s index here).
            pub const ALL: &'static [Action] = &[ $( Action::$name, )* ];

            /// How many actions there are: the one place that says so.
            pub const COUNT: usize = Self::ALL.len();

            /// The wire name (`SendMessage`).
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $( Action::$name => stringify!($name), )* }
            }

            /// Looks an action up by its exact wire name.
            #[must_use]
            pub fn from_name(name: &str) -> Option<Action> {
                match name { $( stringify!($name) => Some(Action::$name), )* _ => None }
            }

            /// Whether a successful answer carries a result: an `<Action>Result` element in
            /// XML, members in JSON. `false` for the rows whose result is `()`.
            #[must_use]
            pub fn has_result(self) -> bool {
                match self { $( Action::$name => has_result!($result), )* }
            }
        }

        /// A decoded request: one variant per action.
        #[derive(Debug, Clone)]
        pub enum Command {
            $( #[doc = stringify!($name)] $name($name), )*
        }

        impl Command {
            /// The action this command runs.
            #[must_use]
            pub fn action(&self) -> Action {
                match self { $( Command::$name(_) => Action::$name, )* }
            }
        }

        /// A successful result: one variant per action.
        #[derive(Debug, Clone)]
        pub enum Reply {
            $( #[doc = stringify!($name)] $name($result), )*
        }

        impl Reply {
            /// The action this reply answers.
            #[must_use]
            pub fn action(&self) -> Action {
                match self { $( Reply::$name(_) => Action::$name, )* }
            }
        }
    };
}

action_table! {
    AddPermission => (),
    CancelMessageMoveTask => CancelMessageMoveTaskResult,
    ChangeMessageVisibility => (),
    ChangeMessageVisibilityBatch => ChangeMessageVisibilityBatchResult,
    CreateQueue => CreateQueueResult,
    DeleteMessage => (),
    DeleteMessageBatch => DeleteMessageBatchResult,
    DeleteQueue => (),
    GetQueueAttributes => GetQueueAttributesResult,
    GetQueueUrl => GetQueueUrlResult,
    ListDeadLetterSourceQueues => ListDeadLetterSourceQueuesResult,
    ListMessageMoveTasks => ListMessageMoveTasksResult,
    ListQueueTags => ListQueueTagsResult,
    ListQueues => ListQueuesResult,
    PurgeQueue => (),
    ReceiveMessage => ReceiveMessageResult,
    RemovePermission => (),
    SendMessage => SendMessageResult,
    SendMessageBatch => SendMessageBatchResult,
    SetQueueAttributes => (),
    StartMessageMoveTask => StartMessageMoveTaskResult,
    TagQueue => (),
    UntagQueue => (),
}

impl Command {
    /// The name of the queue this command addresses, when it addresses one: the last segment
    /// of its queue URL, the queue name it creates or looks up, or the name in the source ARN
    /// of a move task. Used to match per-queue rules (fault injection), never to resolve.
    #[must_use]
    pub fn queue_name(&self) -> Option<&str> {
        fn from_url(u: &str) -> Option<&str> {
            u.rsplit('/').find(|s| !s.is_empty())
        }
        match self {
            Command::CreateQueue(c) => Some(c.queue_name.as_str()),
            Command::GetQueueUrl(c) => Some(c.queue_name.as_str()),
            Command::ListQueues(_) | Command::CancelMessageMoveTask(_) => None,
            Command::StartMessageMoveTask(c) => c.source_arn.rsplit(':').next(),
            Command::ListMessageMoveTasks(c) => c.source_arn.rsplit(':').next(),
            Command::AddPermission(c) => from_url(&c.queue_url),
            Command::ChangeMessageVisibility(c) => from_url(&c.queue_url),
            Command::ChangeMessageVisibilityBatch(c) => from_url(&c.queue_url),
            Command::DeleteMessage(c) => from_url(&c.queue_url),
            Command::DeleteMessageBatch(c) => from_url(&c.queue_url),
            Command::DeleteQueue(c) => from_url(&c.queue_url),
            Command::GetQueueAttributes(c) => from_url(&c.queue_url),
            Command::ListDeadLetterSourceQueues(c) => from_url(&c.queue_url),
            Command::ListQueueTags(c) => from_url(&c.queue_url),
            Command::PurgeQueue(c) => from_url(&c.queue_url),
            Command::ReceiveMessage(c) => from_url(&c.queue_url),
            Command::RemovePermission(c) => from_url(&c.queue_url),
            Command::SendMessage(c) => from_url(&c.queue_url),
            Command::SendMessageBatch(c) => from_url(&c.queue_url),
            Command::SetQueueAttributes(c) => from_url(&c.queue_url),
            Command::TagQueue(c) => from_url(&c.queue_url),
            Command::UntagQueue(c) => from_url(&c.queue_url),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::command::action::*;

    #[test]
    fn commands_name_their_queue() {
        let send = Command::SendMessage(SendMessage {
            queue_url: "http://localhost:9324/000000000000/jobs".into(),
            ..SendMessage::default()
        });
        assert_eq!(send.queue_name(), Some("jobs"));
        assert_eq!(send.action(), Action::SendMessage);
        let create = Command::CreateQueue(CreateQueue {
            queue_name: "new".into(),
            ..CreateQueue::default()
        });
        assert_eq!(create.queue_name(), Some("new"));
        assert_eq!(
            Command::ListQueues(ListQueues::default()).queue_name(),
            None
        );
    }

    #[test]
    fn every_action_is_listed_once_in_variant_order_and_names_round_trip() {
        assert_eq!(Action::ALL.len(), Action::COUNT);
        for (i, a) in Action::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "{a:?}");
            assert_eq!(Action::from_name(a.name()), Some(*a));
        }
        assert_eq!(Action::from_name("sendMessage"), None);
    }

    #[test]
    fn only_unit_rows_have_no_result() {
        assert!(!Action::DeleteMessage.has_result());
        assert!(!Reply::TagQueue(()).action().has_result());
        assert!(Action::ReceiveMessage.has_result());
        let reply = Reply::ListQueues(ListQueuesResult::default());
        assert_eq!(reply.action(), Action::ListQueues);
        assert!(reply.action().has_result());
    }
}
