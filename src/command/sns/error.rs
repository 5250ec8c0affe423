//! Command layer, SNS: the one `SnsError` type and SNS's own error-code table (docs/sns.md §3):
//! each code's `<Code>`, HTTP status and fault. Kept apart from SQS's `ErrorCode` table: the two
//! services share no code whose wire facts agree.

use std::borrow::Cow;
use std::fmt;

use crate::error::{ErrorCode, Fault, SqsError};

macro_rules! sns_codes {
    ($( $(#[$doc:meta])* $name:ident => ($status:expr, $fault:ident) ),* $(,)?) => {
        /// Every error SNS answers with here. One row per code; `<Code>` is the variant's name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum SnsErrorCode {
            $( $(#[$doc])* $name, )*
        }

        impl SnsErrorCode {
            /// All codes, in table order.
            pub const ALL: &'static [SnsErrorCode] = &[ $( SnsErrorCode::$name, )* ];

            /// The `<Code>` text.
            #[must_use]
            pub fn code(self) -> &'static str {
                match self { $( SnsErrorCode::$name => stringify!($name), )* }
            }

            /// HTTP status.
            #[must_use]
            pub fn status(self) -> u16 {
                match self { $( SnsErrorCode::$name => $status, )* }
            }

            /// Sender or Receiver.
            #[must_use]
            pub fn fault(self) -> Fault {
                match self { $( SnsErrorCode::$name => Fault::$fault, )* }
            }
        }
    };
}

sns_codes! {
    /// Almost every validation failure [M][V].
    InvalidParameter => (400, Sender),
    /// Message-attribute validation on Publish/PublishBatch [M][V].
    ParameterValueInvalid => (400, Sender),
    /// A required nested member is null [V].
    ValidationError => (400, Sender),
    /// Topic or subscription missing [M][V].
    NotFound => (404, Sender),
    /// Tag APIs on an unknown resource [M].
    ResourceNotFound => (404, Sender),
    /// Access denied by policy [M].
    AuthorizationError => (403, Sender),
    /// Request not signed as required [M].
    InvalidSecurity => (403, Sender),
    /// Too many topics [M].
    TopicLimitExceeded => (403, Sender),
    /// Too many subscriptions [M].
    SubscriptionLimitExceeded => (403, Sender),
    /// Too many filter policies [M].
    FilterPolicyLimitExceeded => (403, Sender),
    /// Too many tags [M].
    TagLimitExceeded => (400, Sender),
    /// PublishBatch with more than 10 entries [M][V].
    TooManyEntriesInBatchRequest => (400, Sender),
    /// Two batch entries share an Id [M][V].
    BatchEntryIdsNotDistinct => (400, Sender),
    /// A batch over 256 KiB in total [M][V].
    BatchRequestTooLong => (400, Sender),
    /// A batch without entries [M].
    EmptyBatchRequest => (400, Sender),
    /// A batch entry Id too long or with bad characters [M][V].
    InvalidBatchEntryId => (400, Sender),
    /// An unknown action, or one this emulator does not implement [E].
    InvalidAction => (400, Sender),
    /// Throttled (fault injection) [M].
    Throttled => (429, Sender),
    /// The service cannot answer now (storage recovering) [E].
    ServiceUnavailable => (503, Receiver),
    /// Storage or other internal failure; the cause is logged, never sent [M].
    InternalError => (500, Receiver),
}

/// An SNS error: a code from the table and the exact message AWS sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnsError {
    /// Which row of the table.
    pub code: SnsErrorCode,
    /// The message, exactly as AWS words it.
    pub message: Cow<'static, str>,
}

/// The result of an SNS action.
pub type SnsResult<T> = Result<T, SnsError>;

impl SnsError {
    /// An error with this code and message.
    pub fn new(code: SnsErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// `InvalidParameter` with this message.
    pub fn invalid(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(SnsErrorCode::InvalidParameter, message)
    }

    /// `InvalidParameter` `Invalid parameter: <what>`.
    #[must_use]
    pub fn invalid_parameter(what: &str) -> Self {
        Self::invalid(format!("Invalid parameter: {what}"))
    }

    /// `NotFound` `Topic does not exist` (§3.2).
    #[must_use]
    pub fn topic_not_found() -> Self {
        Self::new(SnsErrorCode::NotFound, "Topic does not exist")
    }

    /// `NotFound` `Subscription does not exist` (§3.2).
    #[must_use]
    pub fn subscription_not_found() -> Self {
        Self::new(SnsErrorCode::NotFound, "Subscription does not exist")
    }

    /// `ParameterValueInvalid` with this message.
    pub fn value_invalid(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(SnsErrorCode::ParameterValueInvalid, message)
    }
}

impl fmt::Display for SnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.code(), self.message)
    }
}

impl std::error::Error for SnsError {}

impl From<SqsError> for SnsError {
    /// An error of the shared machinery (storage, the front door) as SNS reports it: the
    /// storage failure stays a 503, anything else is an internal error.
    fn from(e: SqsError) -> Self {
        let code = match e.code {
            ErrorCode::ServiceUnavailable => SnsErrorCode::ServiceUnavailable,
            _ => SnsErrorCode::InternalError,
        };
        Self::new(code, e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_themselves_and_only_internal_faults_are_the_receivers() {
        for c in SnsErrorCode::ALL {
            assert!(!c.code().is_empty());
            let receiver = c.fault() == Fault::Receiver;
            assert_eq!(receiver, c.status() >= 500, "{c:?}");
        }
        assert_eq!(SnsErrorCode::NotFound.status(), 404);
        assert_eq!(SnsError::topic_not_found().message, "Topic does not exist");
    }
}
