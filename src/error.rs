//! Shared by every layer: the one `SqsError` type and the one `ErrorCode` table.
//!
//! Each code carries its JSON `__type`, its legacy Query code (also the value of the
//! `x-amzn-query-error` header), its HTTP status and its fault, and, for codes whose wording AWS
//! fixes per protocol, both texts. Sources: docs/protocol.md §5.4 (service model
//! `awsQueryError` traits) and §5.5. Depends on nothing else in the crate.

use std::borrow::Cow;
use std::fmt;

/// Who is at fault for an error, as AWS reports it in `<Type>` and the query-error header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The caller sent something wrong (every 4xx).
    Sender,
    /// The service failed (5xx).
    Receiver,
}

impl Fault {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Fault::Sender => "Sender",
            Fault::Receiver => "Receiver",
        }
    }
}

/// The wire facts of one error code.
#[derive(Debug, Clone, Copy)]
pub struct ErrorSpec {
    /// JSON `__type`, namespace included.
    pub json_type: &'static str,
    /// Query `<Code>` and the code part of `x-amzn-query-error`.
    pub legacy_code: &'static str,
    /// HTTP status on both protocols.
    pub status: u16,
    /// Sender or Receiver.
    pub fault: Fault,
    /// The fixed message of this code, as `(JSON text, Query text)`, when AWS words it
    /// differently per protocol; `None` when each error carries its own message.
    pub texts: Option<(&'static str, &'static str)>,
}

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $name:ident => ($json:expr, $legacy:expr, $status:expr, $fault:ident $(, $texts:expr)?) ),* $(,)?) => {
        /// Every error localsqs can answer with. One row per code; see [`ErrorCode::spec`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $( $(#[$doc])* $name, )*
        }

        impl ErrorCode {
            /// All codes, in table order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$name, )* ];

            /// The wire facts of this code.
            #[must_use]
            pub fn spec(self) -> ErrorSpec {
                match self {
                    $( ErrorCode::$name => ErrorSpec {
                        json_type: $json,
                        legacy_code: $legacy,
                        status: $status,
                        fault: Fault::$fault,
                        texts: error_codes!(@texts $($texts)?),
                    }, )*
                }
            }
        }
    };
    (@texts) => { None };
    (@texts $texts:expr) => { Some($texts) };
}

error_codes! {
    /// Queue missing; the message differs per protocol (§5.5, G-12).
    QueueDoesNotExist => ("com.amazonaws.sqs#QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400, Sender,
        (NON_EXISTENT_QUEUE_JSON, NON_EXISTENT_QUEUE_QUERY)),
    /// CreateQueue with a different attribute value.
    QueueNameExists => ("com.amazonaws.sqs#QueueNameExists", "QueueAlreadyExists", 400, Sender),
    /// CreateQueue within 60 s of DeleteQueue.
    QueueDeletedRecently => ("com.amazonaws.sqs#QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently", 400, Sender),
    /// A second PurgeQueue within 60 s.
    PurgeQueueInProgress => ("com.amazonaws.sqs#PurgeQueueInProgress", "AWS.SimpleQueueService.PurgeQueueInProgress", 403, Sender),
    /// Batch with no entries.
    EmptyBatchRequest => ("com.amazonaws.sqs#EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400, Sender),
    /// Batch with more than 10 entries.
    TooManyEntriesInBatchRequest => ("com.amazonaws.sqs#TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400, Sender),
    /// Two batch entries share an Id.
    BatchEntryIdsNotDistinct => ("com.amazonaws.sqs#BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, Sender),
    /// A batch entry Id has bad characters or length.
    InvalidBatchEntryId => ("com.amazonaws.sqs#InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", 400, Sender),
    /// SendMessageBatch over 1 MiB in total.
    BatchRequestTooLong => ("com.amazonaws.sqs#BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", 400, Sender),
    /// Modeled but practically never returned (§6.8).
    MessageNotInflight => ("com.amazonaws.sqs#MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400, Sender),
    /// An action this server does not implement yet.
    UnsupportedOperation => ("com.amazonaws.sqs#UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", 400, Sender),
    /// A receipt handle that is garbage or belongs to another queue.
    ReceiptHandleIsInvalid => ("com.amazonaws.sqs#ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404, Sender),
    /// Deprecated; kept for completeness of the table.
    InvalidIdFormat => ("com.amazonaws.sqs#InvalidIdFormat", "InvalidIdFormat", 400, Sender),
    /// Unknown or misplaced queue attribute name.
    InvalidAttributeName => ("com.amazonaws.sqs#InvalidAttributeName", "InvalidAttributeName", 400, Sender),
    /// Queue attribute value out of range.
    InvalidAttributeValue => ("com.amazonaws.sqs#InvalidAttributeValue", "InvalidAttributeValue", 400, Sender),
    /// Message body with characters outside the allowed set.
    InvalidMessageContents => ("com.amazonaws.sqs#InvalidMessageContents", "InvalidMessageContents", 400, Sender),
    /// A quota was exceeded.
    OverLimit => ("com.amazonaws.sqs#OverLimit", "OverLimit", 403, Sender),
    /// Throttled.
    RequestThrottled => ("com.amazonaws.sqs#RequestThrottled", "RequestThrottled", 403, Sender),
    /// The queue URL points at another endpoint.
    InvalidAddress => ("com.amazonaws.sqs#InvalidAddress", "InvalidAddress", 404, Sender),
    /// LocalStack's developer endpoint (`--compat localstack`) given an action other than
    /// ReceiveMessage \[E: LocalStack's code and text; the namespace is ours\].
    InvalidRequest => ("com.amazonaws.sqs#InvalidRequest", "InvalidRequest", 400, Sender),
    /// Request not over HTTPS or not signed correctly.
    InvalidSecurity => ("com.amazonaws.sqs#InvalidSecurity", "InvalidSecurity", 403, Sender),
    /// Move-task resource missing.
    ResourceNotFoundException => ("com.amazonaws.sqs#ResourceNotFoundException", "ResourceNotFoundException", 404, Sender),
    /// KMS access denied.
    KmsAccessDenied => ("com.amazonaws.sqs#KmsAccessDenied", "KMS.AccessDeniedException", 400, Sender),
    /// KMS key disabled.
    KmsDisabled => ("com.amazonaws.sqs#KmsDisabled", "KMS.DisabledException", 400, Sender),
    /// KMS key usage invalid.
    KmsInvalidKeyUsage => ("com.amazonaws.sqs#KmsInvalidKeyUsage", "KMS.InvalidKeyUsageException", 400, Sender),
    /// KMS key state invalid.
    KmsInvalidState => ("com.amazonaws.sqs#KmsInvalidState", "KMS.InvalidStateException", 400, Sender),
    /// KMS key not found.
    KmsNotFound => ("com.amazonaws.sqs#KmsNotFound", "KMS.NotFoundException", 400, Sender),
    /// KMS opt-in required.
    KmsOptInRequired => ("com.amazonaws.sqs#KmsOptInRequired", "KMS.OptInRequired", 403, Sender),
    /// KMS throttled.
    KmsThrottled => ("com.amazonaws.sqs#KmsThrottled", "KMS.ThrottlingException", 400, Sender),
    /// Generic range/format validation failure (coral shape).
    InvalidParameterValue => ("com.amazon.coral.service#InvalidParameterValueException", "InvalidParameterValue", 400, Sender),
    /// A required parameter is absent (coral shape).
    MissingParameter => ("com.amazon.coral.service#MissingRequiredParameterException", "MissingParameter", 400, Sender),
    /// Access denied (coral shape) \[E\].
    AccessDenied => ("com.amazon.coral.service#AccessDeniedException", "AccessDenied", 403, Sender),
    /// Query: unknown `Action` (§1.4).
    InvalidAction => ("com.amazon.coral.service#InvalidActionException", "InvalidAction", 400, Sender),
    /// JSON: unknown `X-Amz-Target` operation (§1.4) \[E\].
    UnknownOperation => ("com.amazon.coral.service#UnknownOperationException", "UnknownOperationException", 400, Sender),
    /// JSON: a body that is not valid JSON or has wrongly typed members \[E\].
    SerializationException => ("com.amazon.coral.service#SerializationException", "SerializationException", 400, Sender),
    /// The request body is larger than the server accepts \[E\].
    RequestEntityTooLarge => ("com.amazon.coral.service#RequestEntityTooLargeException", "RequestEntityTooLarge", 413, Sender),
    /// The request body did not arrive within the body-read timeout \[E\].
    RequestTimeout => ("com.amazon.coral.service#RequestTimeoutException", "RequestTimeout", 408, Sender),
    /// `--auth sigv4`: the request carries no signature [D: AWS common errors].
    MissingAuthenticationToken => ("com.amazon.coral.service#MissingAuthenticationTokenException", "MissingAuthenticationToken", 403, Sender),
    /// `--auth sigv4`: the access key id is not configured [D: AWS common errors].
    InvalidClientTokenId => ("com.amazon.coral.service#UnrecognizedClientException", "InvalidClientTokenId", 403, Sender),
    /// `--auth sigv4`: the signature is wrong or expired [D: AWS common errors].
    SignatureDoesNotMatch => ("com.amazon.coral.service#InvalidSignatureException", "SignatureDoesNotMatch", 403, Sender),
    /// `--auth sigv4`: the signature is malformed [D: AWS common errors].
    IncompleteSignature => ("com.amazon.coral.service#IncompleteSignatureException", "IncompleteSignature", 400, Sender),
    /// The service cannot answer now (fault injection) \[E\].
    ServiceUnavailable => ("com.amazon.coral.service#ServiceUnavailableException", "ServiceUnavailable", 503, Receiver),
    /// Storage or other internal failure; the cause is logged, never sent.
    InternalError => ("com.amazon.coral.service#InternalFailure", "InternalError", 500, Receiver),
}

impl ErrorCode {
    /// The code as the JSON protocol names it, without its namespace (`QueueDoesNotExist`,
    /// `InvalidParameterValueException`): what current SDKs report, and how `/metrics` and
    /// the debug log name it.
    #[must_use]
    pub fn name(self) -> &'static str {
        let t = self.spec().json_type;
        t.rsplit_once('#').map_or(t, |(_, name)| name)
    }
}

/// An SQS error: a code from the table plus the exact message AWS sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqsError {
    /// Which row of the table.
    pub code: ErrorCode,
    /// The human-readable message, exactly as AWS words it.
    pub message: Cow<'static, str>,
}

/// The JSON-protocol text for a missing queue (§5.5).
pub const NON_EXISTENT_QUEUE_JSON: &str = "The specified queue does not exist.";
/// The Query-protocol text for a missing queue (§5.5, G-12).
pub const NON_EXISTENT_QUEUE_QUERY: &str =
    "The specified queue does not exist for this wsdl version.";

impl SqsError {
    /// An error with the given code and message.
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// `QueueDoesNotExist`; its text per protocol comes from the table.
    #[must_use]
    pub fn queue_does_not_exist() -> Self {
        Self::new(ErrorCode::QueueDoesNotExist, NON_EXISTENT_QUEUE_JSON)
    }

    /// `QueueDoesNotExist` with localsqs's own explanation after AWS's fixed text (which
    /// clients and their users may rely on, so it stays first and whole).
    #[must_use]
    pub fn queue_does_not_exist_because(why: &str) -> Self {
        Self::new(
            ErrorCode::QueueDoesNotExist,
            format!("{NON_EXISTENT_QUEUE_JSON} {why}"),
        )
    }

    /// The message to send: the table's fixed text for this code and protocol when it has one
    /// (AWS's exact words; anything this error's message adds after them is a [`Self::hint`]),
    /// else this error's own message.
    #[must_use]
    pub fn text(&self, query: bool) -> Cow<'_, str> {
        match self.code.spec().texts {
            Some((json, query_text)) => Cow::Borrowed(if query { query_text } else { json }),
            None => Cow::Borrowed(&self.message),
        }
    }

    /// What localsqs adds to AWS's fixed text to explain a miss (a queue of that name in
    /// another region or account): sent beside the error, never in its message, which stays
    /// AWS's own.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        let (json, _) = self.code.spec().texts?;
        self.message
            .strip_prefix(json)
            .map(str::trim)
            .filter(|rest| !rest.is_empty())
    }

    /// `MissingParameter`: `The request must contain the parameter X.`
    #[must_use]
    pub fn missing(param: &str) -> Self {
        Self::new(
            ErrorCode::MissingParameter,
            format!("The request must contain the parameter {param}."),
        )
    }

    /// `InvalidParameterValue` with a free-form message.
    pub fn invalid_value(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidParameterValue, message)
    }

    /// `InvalidParameterValue`: `Value V for parameter P is invalid. Reason: R`
    #[must_use]
    pub fn invalid_param(value: &str, param: &str, reason: &str) -> Self {
        Self::invalid_value(format!(
            "Value {value} for parameter {param} is invalid. Reason: {reason}"
        ))
    }

    /// `InternalError` (500). The cause is logged here and never sent to the client.
    pub fn internal(cause: impl fmt::Display) -> Self {
        tracing::error!(%cause, "internal error");
        Self::new(
            ErrorCode::InternalError,
            "We encountered an internal error. Please try again.",
        )
    }
}

impl fmt::Display for SqsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.spec().legacy_code, self.message)
    }
}

impl std::error::Error for SqsError {}

/// Shorthand used throughout the crate.
pub type SqsResult<T> = Result<T, SqsError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_match_the_model() {
        assert_eq!(ErrorCode::PurgeQueueInProgress.spec().status, 403);
        assert_eq!(ErrorCode::ReceiptHandleIsInvalid.spec().status, 404);
        assert_eq!(ErrorCode::ResourceNotFoundException.spec().status, 404);
        assert_eq!(ErrorCode::OverLimit.spec().status, 403);
        assert_eq!(ErrorCode::InternalError.spec().fault, Fault::Receiver);
    }

    #[test]
    fn per_protocol_texts_come_from_the_table() {
        let e = SqsError::queue_does_not_exist();
        assert_eq!(e.text(false), "The specified queue does not exist.");
        assert_eq!(
            e.text(true),
            "The specified queue does not exist for this wsdl version."
        );
        // An explanation never changes AWS's words; it is a hint beside them.
        let e = SqsError::queue_does_not_exist_because("(localsqs: why.)");
        assert_eq!(
            e.text(true),
            "The specified queue does not exist for this wsdl version."
        );
        assert_eq!(e.text(false), "The specified queue does not exist.");
        assert_eq!(e.hint(), Some("(localsqs: why.)"));
        assert_eq!(SqsError::queue_does_not_exist().hint(), None);
        let other = SqsError::missing("QueueUrl");
        assert_eq!(other.text(true), other.text(false));
    }

    #[test]
    fn names_drop_the_namespace() {
        assert_eq!(ErrorCode::QueueDoesNotExist.name(), "QueueDoesNotExist");
        assert_eq!(
            ErrorCode::InvalidParameterValue.name(),
            "InvalidParameterValueException"
        );
        for code in ErrorCode::ALL {
            assert!(!code.name().is_empty() && !code.name().contains('#'));
        }
    }

    #[test]
    fn every_sqs_shape_is_namespaced() {
        for code in ErrorCode::ALL {
            let spec = code.spec();
            assert!(spec.json_type.contains('#'), "{code:?}");
            assert!(!spec.legacy_code.is_empty());
            assert_eq!(
                spec.status >= 500,
                spec.fault == Fault::Receiver,
                "{code:?}"
            );
        }
    }
}
