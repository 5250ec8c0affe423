//! Command layer, SNS: the checks that need no state: topic names and ARNs, message attributes,
//! what a publish may carry, PublishBatch entries (docs/sns.md §3.2, §4.1, §6). Each error text
//! is AWS's where it was recorded ([V]); the others are marked [E] with their source.

use super::error::{SnsError, SnsErrorCode, SnsResult};
use super::types::{MessageToPublish, PublishBatchRequestEntry};
use crate::command::{MessageAttributeValue, MessageAttributes};

/// Largest message, counting the message and every attribute's name, type and value (§6.2).
pub const MAX_MESSAGE_BYTES: usize = 262_144;
/// Most entries in one PublishBatch (§6.5).
pub const MAX_BATCH_ENTRIES: usize = 10;

/// Whether `name` is a valid topic name: 1–256 of `A-Z a-z 0-9 _ -`, `.fifo` allowed at the
/// end for FIFO topics (counted in the 256, [E]). Which suffix goes with which kind is checked
/// by the caller.
#[must_use]
pub fn topic_name_ok(name: &str) -> bool {
    let base = name.strip_suffix(".fifo").unwrap_or(name);
    !base.is_empty()
        && name.len() <= 256
        && base
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A parsed SNS ARN: `arn:aws:sns:<region>:<account>:<name>[:<subscription id>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnsArn<'a> {
    /// Region.
    pub region: &'a str,
    /// Account id.
    pub account: &'a str,
    /// Topic name.
    pub topic: &'a str,
    /// The subscription id, for a subscription ARN.
    pub subscription: Option<&'a str>,
}

impl<'a> SnsArn<'a> {
    /// Parses an ARN given as `param` (`TopicArn`, `SubscriptionArn`, `ResourceArn`), with
    /// AWS's texts: fewer than six parts say how many there were (§3.2); six or more that are
    /// not an SNS ARN are `Invalid parameter: <param>`.
    pub fn parse(arn: &'a str, param: &str) -> SnsResult<Self> {
        let parts: Vec<&str> = arn.split(':').collect();
        if parts.len() < 6 {
            return Err(SnsError::invalid(format!(
                "Invalid parameter: {param} Reason: An ARN must have at least 6 elements, not {}",
                parts.len()
            )));
        }
        if parts[0] != "arn" || parts[2] != "sns" || parts.len() > 7 {
            return Err(SnsError::invalid_parameter(param));
        }
        Ok(Self {
            region: parts[3],
            account: parts[4],
            topic: parts[5],
            subscription: parts.get(6).copied(),
        })
    }

    /// The topic's ARN.
    #[must_use]
    pub fn topic_arn(&self) -> String {
        topic_arn(self.region, self.account, self.topic)
    }
}

/// `arn:aws:sns:<region>:<account>:<name>`.
#[must_use]
pub fn topic_arn(region: &str, account: &str, name: &str) -> String {
    format!("arn:aws:sns:{region}:{account}:{name}")
}

/// The message-attribute checks of Publish and of each PublishBatch entry (§6.3). `at` is the
/// member path of the attribute map in a `ValidationError` (`messageAttributes`, or
/// `publishBatchRequestEntries.1.member.messageAttributes`).
pub fn message_attributes(attrs: &MessageAttributes, at: &str) -> SnsResult<()> {
    for (name, v) in attrs {
        attribute_name(name)?;
        attribute_value(name, v, at)?;
    }
    Ok(())
}

fn attribute_name(name: &str) -> SnsResult<()> {
    if name.len() > 256 {
        return Err(SnsError::value_invalid(
            "Length of message attribute name must be less than 256 bytes.",
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(SnsError::value_invalid(format!(
            "Invalid non-alphanumeric character '#x{:X}' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.",
            c as u32
        )));
    }
    if name.starts_with('.') {
        return Err(SnsError::value_invalid(
            "Invalid message attribute name starting with character '.' was found.",
        ));
    }
    if name.ends_with('.') {
        return Err(SnsError::value_invalid(
            "Invalid message attribute name ending with character '.' was found.",
        ));
    }
    if name.contains("..") {
        return Err(SnsError::value_invalid(
            "Message attribute name can not have successive '.' character.",
        ));
    }
    Ok(())
}

/// The base type of a DataType (`String`, `Number`, `Binary`), if it has a valid one: the base
/// alone, or the base, a dot and a non-empty custom part (§6.3, [V]).
#[must_use]
pub fn base_type(data_type: &str) -> Option<&'static str> {
    ["String", "Number", "Binary"].into_iter().find(|base| {
        data_type
            .strip_prefix(base)
            .is_some_and(|rest| rest.is_empty() || rest.len() > 1 && rest.starts_with('.'))
    })
}

fn attribute_value(name: &str, v: &MessageAttributeValue, at: &str) -> SnsResult<()> {
    if v.data_type.is_empty() {
        return Err(SnsError::new(
            SnsErrorCode::ValidationError,
            format!(
                "1 validation error detected: Value null at '{at}.{name}.member.dataType' failed to satisfy constraint: Member must not be null"
            ),
        ));
    }
    let Some(base) = base_type(&v.data_type) else {
        return Err(SnsError::value_invalid(format!(
            "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
        )));
    };
    let must_use = |field: &str| {
        SnsError::value_invalid(format!(
            "The message attribute '{name}' with type '{base}' must use field '{field}'."
        ))
    };
    let empty = || {
        SnsError::value_invalid(format!(
            "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{base}'."
        ))
    };
    match base {
        "Binary" => {
            if v.string_value.is_some() {
                return Err(must_use("Binary"));
            }
            if v.binary_value.as_ref().is_none_or(Vec::is_empty) {
                return Err(empty());
            }
        }
        _ => {
            if v.binary_value.is_some() {
                return Err(must_use("String"));
            }
            let Some(s) = v.string_value.as_deref().filter(|s| !s.is_empty()) else {
                return Err(empty());
            };
            if base == "Number" && s.trim().parse::<f64>().is_err() {
                // [E] moto 5.x's text for a Number that is not one.
                return Err(SnsError::value_invalid(format!(
                    "An error occurred (ParameterValueInvalid) when calling the Publish operation: Could not cast message attribute '{name}' value to number."
                )));
            }
        }
    }
    Ok(())
}

/// The bytes a message counts against the 256 KiB limit: the message, and each attribute's
/// name, DataType and value (§6.2).
#[must_use]
pub fn message_size(message: &str, attrs: &MessageAttributes) -> usize {
    message.len()
        + attrs
            .iter()
            .map(|(k, v)| {
                k.len()
                    + v.data_type.len()
                    + v.string_value.as_ref().map_or(0, String::len)
                    + v.binary_value.as_ref().map_or(0, Vec::len)
            })
            .sum::<usize>()
}

/// The checks of one message that need no topic (§6.1): a message, a subject that is not
/// empty, its size, its attributes. Answers the message.
pub fn publish_message<'m>(m: &'m MessageToPublish, attrs_at: &str) -> SnsResult<&'m str> {
    let message = m.message.as_deref().unwrap_or_default();
    if message.is_empty() {
        return Err(SnsError::invalid_parameter("Empty message"));
    }
    if let Some(s) = &m.subject
        && (s.is_empty() || s.chars().count() >= 100 || s.chars().any(char::is_control))
    {
        // [V] for the empty subject; [E] the same text for the documented other limits.
        return Err(SnsError::invalid_parameter("Subject"));
    }
    if message_size(message, &m.message_attributes) > MAX_MESSAGE_BYTES {
        return Err(SnsError::invalid_parameter("Message too long"));
    }
    message_attributes(&m.message_attributes, attrs_at)?;
    for (what, id) in [
        ("MessageGroupId", &m.message_group_id),
        ("MessageDeduplicationId", &m.message_deduplication_id),
    ] {
        if let Some(id) = id
            && (id.is_empty() || id.len() > 128 || !id.bytes().all(|b| b.is_ascii_graphic()))
        {
            // [E] wording, after SQS's.
            return Err(SnsError::invalid(format!(
                "Invalid parameter: {what} Reason: {what} can only include alphanumeric and punctuation characters. 1 to 128 in length."
            )));
        }
    }
    Ok(message)
}

/// The whole-request checks of a PublishBatch (§6.5): entries present, at most ten, distinct
/// well-formed ids, 256 KiB in total.
pub fn batch_entries(entries: &[PublishBatchRequestEntry]) -> SnsResult<()> {
    if entries.is_empty() {
        // [E] SQS's wording (§6.5).
        return Err(SnsError::new(
            SnsErrorCode::EmptyBatchRequest,
            "The batch request doesn't contain any entries.",
        ));
    }
    if entries.len() > MAX_BATCH_ENTRIES {
        return Err(SnsError::new(
            SnsErrorCode::TooManyEntriesInBatchRequest,
            "The batch request contains more entries than permissible.",
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        if e.id.len() > 80 {
            return Err(SnsError::new(
                SnsErrorCode::InvalidBatchEntryId,
                format!(
                    "The Id of a batch entry in the batch request is too long: {}",
                    e.id
                ),
            ));
        }
        if e.id.is_empty()
            || !e
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(SnsError::new(
                SnsErrorCode::InvalidBatchEntryId,
                format!(
                    "The Id of a batch entry in the batch request contains an impermissible character: {}",
                    e.id
                ),
            ));
        }
        if entries[..i].iter().any(|o| o.id == e.id) {
            return Err(SnsError::new(
                SnsErrorCode::BatchEntryIdsNotDistinct,
                "Two or more batch entries in the request have the same Id.",
            ));
        }
    }
    let total: usize = entries
        .iter()
        .map(|e| {
            message_size(
                e.message.message.as_deref().unwrap_or_default(),
                &e.message.message_attributes,
            )
        })
        .sum();
    if total > MAX_MESSAGE_BYTES {
        return Err(SnsError::new(
            SnsErrorCode::BatchRequestTooLong,
            "The length of all the messages put together is more than the limit.",
        ));
    }
    Ok(())
}

/// The per-protocol messages of `MessageStructure=json` (§6.4): the JSON object's string
/// members by key; `default` must be one.
pub fn message_structure(message: &str) -> SnsResult<Vec<(String, String)>> {
    let v: serde_json::Value = serde_json::from_str(message).map_err(|_| {
        SnsError::invalid_parameter("Message Structure - JSON message body failed to parse")
    })?;
    let obj = v.as_object().ok_or_else(|| {
        SnsError::invalid_parameter("Message Structure - JSON message body failed to parse")
    })?;
    let out: Vec<(String, String)> = obj
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
        .collect();
    if !out.iter().any(|(k, _)| k == "default") {
        return Err(SnsError::invalid_parameter(
            "Message Structure - No default entry in JSON message body",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_and_arns() {
        assert!(topic_name_ok("orders"));
        assert!(topic_name_ok("orders.fifo"));
        assert!(topic_name_ok(&"a".repeat(256)));
        assert!(!topic_name_ok(&"a".repeat(257)));
        assert!(!topic_name_ok(""));
        assert!(!topic_name_ok(".fifo"));
        assert!(!topic_name_ok("a:b"));
        let e = SnsArn::parse("nope", "TopicArn").unwrap_err();
        assert_eq!(
            e.message,
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
        );
        let a = SnsArn::parse("arn:aws:sns:us-east-1:000000000000:t:abc", "x").unwrap();
        assert_eq!(
            (a.region, a.topic, a.subscription),
            ("us-east-1", "t", Some("abc"))
        );
        assert_eq!(a.topic_arn(), "arn:aws:sns:us-east-1:000000000000:t");
        assert!(SnsArn::parse("arn:aws:sqs:us-east-1:0:q", "TopicArn").is_err());
    }

    #[test]
    fn attribute_errors_are_aws_texts() {
        let mut a = MessageAttributes::new();
        a.insert("a^*?".into(), MessageAttributeValue::string("String", "x"));
        let e = message_attributes(&a, "messageAttributes").unwrap_err();
        assert!(e.message.contains("'#x5E'"), "{}", e.message);
        let mut a = MessageAttributes::new();
        a.insert("attr1".into(), MessageAttributeValue::string("String", ""));
        let e = message_attributes(&a, "messageAttributes").unwrap_err();
        assert_eq!(e.code, SnsErrorCode::ParameterValueInvalid);
        assert_eq!(base_type("String.prefixed"), Some("String"));
        assert_eq!(base_type("String."), None);
        assert_eq!(base_type("Stringprefixed"), None);
        let mut a = MessageAttributes::new();
        a.insert("attr1".into(), MessageAttributeValue::string("", "x"));
        let e = message_attributes(&a, "messageAttributes").unwrap_err();
        assert_eq!(e.code, SnsErrorCode::ValidationError);
    }

    #[test]
    fn message_structure_needs_a_string_default() {
        assert!(message_structure(r#"{"default":"d","sqs":"s","x":{}}"#).is_ok());
        let e = message_structure(r#"{"sqs":"s"}"#).unwrap_err();
        assert!(e.message.ends_with("No default entry in JSON message body"));
        assert!(message_structure("{").is_err());
    }
}
