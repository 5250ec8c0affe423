//! Command layer: queue attributes checked and normalised as text: which names may be read or
//! written, the numeric ranges, the accepted values, and AWS's errors for the rest
//! (docs/protocol.md §6.1). Imports neither `wire` nor `engine`.

use crate::error::{ErrorCode, SqsError, SqsResult};

/// Attributes that are computed and may only be read.
pub const READ_ONLY: &[&str] = &[
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesDelayed",
    "ApproximateNumberOfMessagesNotVisible",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "QueueArn",
];

/// Attributes that may be written (some only on FIFO queues, `FifoQueue` only at creation).
pub const WRITABLE: &[&str] = &[
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

const FIFO_ONLY: &[&str] = &["FifoQueue", "ContentBasedDeduplication"];
const FIFO_ONLY_EXPLAINED: &[&str] = &["DeduplicationScope", "FifoThroughputLimit"];

/// Integer ranges of the numeric attributes.
const RANGES: &[(&str, i64, i64)] = &[
    ("DelaySeconds", 0, 900),
    ("MaximumMessageSize", 1024, 1_048_576),
    ("MessageRetentionPeriod", 60, 1_209_600),
    ("ReceiveMessageWaitTimeSeconds", 0, 20),
    ("VisibilityTimeout", 0, 43_200),
    ("KmsDataKeyReusePeriodSeconds", 60, 86_400),
];

pub(super) fn unknown(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeName,
        format!("Unknown Attribute {name}."),
    )
}

/// The largest Policy, in bytes: AWS's quota (developer guide, "Amazon SQS policy quotas").
pub const MAX_POLICY_BYTES: usize = 8192;
/// The longest KmsMasterKeyId: KMS takes key ids, aliases and ARNs of up to 2,048 characters.
const MAX_KMS_KEY_ID_BYTES: usize = 2048;

pub(super) fn bad_value(name: &str) -> SqsError {
    SqsError::new(
        ErrorCode::InvalidAttributeValue,
        format!("Invalid value for the parameter {name}."),
    )
}

/// Normalises one written value, or returns AWS's error for it.
fn normalise(name: &str, value: &str) -> SqsResult<String> {
    if let Some((_, lo, hi)) = RANGES.iter().find(|(n, ..)| *n == name) {
        let ok = !value.is_empty()
            && value.bytes().all(|b| b.is_ascii_digit())
            && value.parse::<i64>().is_ok_and(|v| (*lo..=*hi).contains(&v));
        return if ok {
            Ok(value.trim_start_matches('0').to_owned())
                .map(|v| if v.is_empty() { "0".into() } else { v })
        } else {
            Err(bad_value(name))
        };
    }
    match name {
        "SqsManagedSseEnabled" | "ContentBasedDeduplication" | "FifoQueue" => {
            match value.to_ascii_lowercase().as_str() {
                v @ ("true" | "false") => Ok(v.to_owned()),
                _ => Err(bad_value(name)),
            }
        }
        "DeduplicationScope" => match value {
            "queue" | "messageGroup" => Ok(value.to_owned()),
            _ => Err(bad_value(name)),
        },
        "FifoThroughputLimit" => match value {
            "perQueue" | "perMessageGroupId" => Ok(value.to_owned()),
            _ => Err(bad_value(name)),
        },
        // [E] KMS's own limit on a key id, alias or ARN; without one a client could store up to
        // a request's size on every queue.
        "KmsMasterKeyId" if value.len() > MAX_KMS_KEY_ID_BYTES => Err(bad_value(name)),
        "Policy" if value.len() > MAX_POLICY_BYTES => Err(SqsError::new(
            ErrorCode::InvalidAttributeValue,
            format!(
                "Invalid value for the parameter Policy. Reason: The policy is {} bytes, maximum allowed is {MAX_POLICY_BYTES}.",
                value.len()
            ),
        )),
        "Policy" | "RedrivePolicy" | "RedriveAllowPolicy" if !value.is_empty() => {
            serde_json::from_str::<serde_json::Value>(value)
                .ok()
                .filter(serde_json::Value::is_object)
                .map(|_| value.to_owned())
                .ok_or_else(|| bad_value(name))
        }
        _ => Ok(value.to_owned()),
    }
}

/// Whether the request asks for a FIFO queue (`FifoQueue=true`, any case).
#[must_use]
pub fn requests_fifo(attrs: &[(String, String)]) -> bool {
    attrs
        .iter()
        .any(|(k, v)| k == "FifoQueue" && v.eq_ignore_ascii_case("true"))
}

/// Validates attributes for CreateQueue (`creating`) or SetQueueAttributes, and returns them
/// normalised, in request order, as text for `Setting::parse`. `fifo` is the queue's type.
/// The two redrive policies are only checked to be JSON objects here; their own rules come with
/// `Setting::parse`, after the checks that need the request's other parts.
pub fn validate(
    attrs: &[(String, String)],
    fifo: bool,
    creating: bool,
) -> SqsResult<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(attrs.len());
    for (name, value) in attrs {
        if !WRITABLE.contains(&name.as_str()) {
            return Err(unknown(name));
        }
        if !fifo && FIFO_ONLY.contains(&name.as_str()) {
            return Err(unknown(name));
        }
        if !fifo && FIFO_ONLY_EXPLAINED.contains(&name.as_str()) {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                format!("You can specify the {name} only when FifoQueue is set to true."),
            ));
        }
        let v = normalise(name, value)?;
        if name == "FifoQueue" && !creating && v != "true" {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeValue,
                "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
            ));
        }
        out.push((name.clone(), v));
    }
    let kms = out
        .iter()
        .any(|(k, v)| k == "KmsMasterKeyId" && !v.is_empty());
    let sqs_sse = out
        .iter()
        .any(|(k, v)| k == "SqsManagedSseEnabled" && v == "true");
    if kms && sqs_sse {
        return Err(SqsError::new(
            ErrorCode::InvalidAttributeName,
            "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.",
        ));
    }
    Ok(out)
}

/// Validates the names of a GetQueueAttributes request.
pub fn validate_names(names: &[String]) -> SqsResult<()> {
    for n in names {
        if n != "All" && !WRITABLE.contains(&n.as_str()) && !READ_ONLY.contains(&n.as_str()) {
            return Err(unknown(n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::command::attributes::check::*;

    fn p(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.into(), v.into())]
    }

    #[test]
    fn ranges_and_texts() {
        let e = validate(&p("VisibilityTimeout", "99999"), false, true).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(
            e.message,
            "Invalid value for the parameter VisibilityTimeout."
        );
        assert!(validate(&p("MaximumMessageSize", "1048576"), false, true).is_ok());
        assert!(validate(&p("MaximumMessageSize", "1048577"), false, true).is_err());
        assert!(validate(&p("MaximumMessageSize", "1023"), false, true).is_err());
        assert!(validate(&p("DelaySeconds", "-1"), false, true).is_err());
        assert!(validate(&p("DelaySeconds", "abc"), false, true).is_err());
        assert!(validate(&p("KmsMasterKeyId", &"k".repeat(2048)), false, true).is_ok());
        let e = validate(&p("KmsMasterKeyId", &"k".repeat(2049)), false, true).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert_eq!(e.message, "Invalid value for the parameter KmsMasterKeyId.");
    }

    #[test]
    fn fifo_attributes_on_standard_queues() {
        let e = validate(&p("FifoQueue", "false"), false, true).unwrap_err();
        assert_eq!(e.message, "Unknown Attribute FifoQueue.");
        let e = validate(&p("DeduplicationScope", "queue"), false, true).unwrap_err();
        assert_eq!(
            e.message,
            "You can specify the DeduplicationScope only when FifoQueue is set to true."
        );
        let e = validate(&p("FifoQueue", "false"), true, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidAttributeValue);
        assert!(validate(&p("FifoQueue", "true"), true, false).is_ok());
    }

    #[test]
    fn read_only_and_unknown() {
        assert_eq!(
            validate(&p("QueueArn", "x"), false, true)
                .unwrap_err()
                .message,
            "Unknown Attribute QueueArn."
        );
        assert_eq!(
            validate(&p("Foobar", "x"), false, true).unwrap_err().code,
            ErrorCode::InvalidAttributeName
        );
        assert!(validate_names(&["All".into(), "QueueArn".into()]).is_ok());
        assert_eq!(
            validate_names(&["Foobar".into()]).unwrap_err().message,
            "Unknown Attribute Foobar."
        );
    }

    #[test]
    fn one_kind_of_encryption() {
        let both = vec![
            ("KmsMasterKeyId".to_owned(), "k".to_owned()),
            ("SqsManagedSseEnabled".to_owned(), "true".to_owned()),
        ];
        assert_eq!(
            validate(&both, false, true).unwrap_err().code,
            ErrorCode::InvalidAttributeName
        );
    }
}
