//! Command layer: the protocol-neutral request and result types, and the one action table.
//!
//! Imports neither `wire` nor `engine`. Each variant of [`Command`] holds a struct named exactly
//! like the AWS action; each variant of [`Reply`] holds the matching `<Action>Result`.

pub mod attributes;
pub mod batch;
pub mod checksum;
pub mod message;
pub mod queue;
pub mod redrive;
pub mod types;
pub mod validate;

pub use batch::*;
pub use message::*;
pub use queue::*;
pub use redrive::*;
pub use types::*;

macro_rules! action_table {
    ($( $name:ident => $result:ty ),* $(,)?) => {
        /// Every SQS action, by its wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action {
            $( #[doc = stringify!($name)] $name, )*
        }

        impl Action {
            /// All 23 actions, in table order.
            pub const ALL: &'static [Action] = &[ $( Action::$name, )* ];

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
        }

        /// A decoded request: one variant per action.
        #[derive(Debug, Clone)]
        pub enum Command {
            $( #[doc = stringify!($name)] $name($name), )*
        }

        /// A successful result: one variant per action.
        #[derive(Debug, Clone)]
        pub enum Reply {
            $( #[doc = stringify!($name)] $name($result), )*
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_all_23_actions_and_names_round_trip() {
        assert_eq!(Action::ALL.len(), 23);
        for a in Action::ALL {
            assert_eq!(Action::from_name(a.name()), Some(*a));
        }
        assert_eq!(Action::from_name("sendMessage"), None);
    }
}
