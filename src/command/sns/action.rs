//! Command layer, SNS: SNS's own action table, and the [`SnsAction`], [`SnsCommand`] and
//! [`SnsReply`] enums it generates (the twin of SQS's `command/action.rs`). Each row names the
//! action (its wire name), its request type (the struct of the same name in `types.rs`) and its
//! result type (`()` for an action without output).

use super::types::*;

/// Whether a row's result type is a result (`false` only for `()`).
macro_rules! has_result {
    (()) => {
        false
    };
    ($result:ident) => {
        true
    };
}

macro_rules! sns_action_table {
    ($( $name:ident => $result:tt ),* $(,)?) => {
        /// Every SNS action served, by its wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SnsAction {
            $( #[doc = stringify!($name)] $name, )*
        }

        impl SnsAction {
            /// Every action, in table order (`a as usize` is `a`'s index here).
            pub const ALL: &'static [SnsAction] = &[ $( SnsAction::$name, )* ];

            /// The wire name (`Publish`).
            #[must_use]
            pub fn name(self) -> &'static str {
                match self { $( SnsAction::$name => stringify!($name), )* }
            }

            /// Looks an action up by its exact wire name.
            #[must_use]
            pub fn from_name(name: &str) -> Option<SnsAction> {
                match name { $( stringify!($name) => Some(SnsAction::$name), )* _ => None }
            }

            /// Whether a successful answer carries an `<Action>Result` element.
            #[must_use]
            pub fn has_result(self) -> bool {
                match self { $( SnsAction::$name => has_result!($result), )* }
            }
        }

        /// A decoded SNS request: one variant per action.
        #[derive(Debug, Clone)]
        pub enum SnsCommand {
            $( #[doc = stringify!($name)] $name($name), )*
        }

        impl SnsCommand {
            /// The action this command runs.
            #[must_use]
            pub fn action(&self) -> SnsAction {
                match self { $( SnsCommand::$name(_) => SnsAction::$name, )* }
            }
        }

        /// A successful SNS result: one variant per action.
        #[derive(Debug, Clone)]
        pub enum SnsReply {
            $( #[doc = stringify!($name)] $name($result), )*
        }
    };
}

sns_action_table! {
    AddPermission => (),
    ConfirmSubscription => ConfirmSubscriptionResult,
    CreateTopic => CreateTopicResult,
    DeleteTopic => (),
    GetSubscriptionAttributes => GetSubscriptionAttributesResult,
    GetTopicAttributes => GetTopicAttributesResult,
    ListSubscriptions => ListSubscriptionsResult,
    ListSubscriptionsByTopic => ListSubscriptionsByTopicResult,
    ListTagsForResource => ListTagsForResourceResult,
    ListTopics => ListTopicsResult,
    Publish => PublishResult,
    PublishBatch => PublishBatchResult,
    RemovePermission => (),
    SetSubscriptionAttributes => (),
    SetTopicAttributes => (),
    Subscribe => SubscribeResult,
    TagResource => TagResourceResult,
    Unsubscribe => (),
    UntagResource => UntagResourceResult,
}

/// SNS actions of the service model that this emulator does not serve (SMS, mobile push, data
/// protection, message archives): they answer an error naming what is served (docs/sns.md).
pub const UNSERVED: &[&str] = &[
    "CheckIfPhoneNumberIsOptedOut",
    "CreatePlatformApplication",
    "CreatePlatformEndpoint",
    "CreateSMSSandboxPhoneNumber",
    "DeleteEndpoint",
    "DeletePlatformApplication",
    "DeleteSMSSandboxPhoneNumber",
    "GetDataProtectionPolicy",
    "GetEndpointAttributes",
    "GetPlatformApplicationAttributes",
    "GetSMSAttributes",
    "GetSMSSandboxAccountStatus",
    "ListEndpointsByPlatformApplication",
    "ListOriginationNumbers",
    "ListPhoneNumbersOptedOut",
    "ListPlatformApplications",
    "ListSMSSandboxPhoneNumbers",
    "OptInPhoneNumber",
    "PutDataProtectionPolicy",
    "SetEndpointAttributes",
    "SetPlatformApplicationAttributes",
    "SetSMSAttributes",
    "VerifySMSSandboxPhoneNumber",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_is_listed_once_and_names_round_trip() {
        for (i, a) in SnsAction::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "{a:?}");
            assert_eq!(SnsAction::from_name(a.name()), Some(*a));
            assert!(!UNSERVED.contains(&a.name()));
        }
        assert!(!SnsAction::Unsubscribe.has_result());
        assert!(SnsAction::TagResource.has_result());
        assert_eq!(SnsAction::ALL.len(), 19);
    }
}
