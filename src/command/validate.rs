//! Command layer: validation of names and message-level input (queue names, body, attributes,
//! ids, tags), with AWS's texts.
//!
//! Rules from docs/protocol.md §6.2, §6.3, §6.4, §6.6, §6.9 and §6.14. Texts tagged \[E\] there
//! are guesses and are kept together here so they are easy to change. Imports neither `wire`
//! nor `engine`.

use crate::error::{ErrorCode, SqsError, SqsResult};

use super::types::{MessageAttributeValue, MessageAttributes};

/// Most user attributes a message may carry.
pub const MAX_MESSAGE_ATTRIBUTES: usize = 10;

/// The InvalidMessageContents text. \[E\] wording (LocalStack's); the code is verified.
pub const INVALID_CHARACTERS: &str = "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF";

/// Whether a character may appear in a body or a string attribute (§6.3).
#[must_use]
pub fn allowed_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// Whether every character of `s` is allowed. Printable ASCII, tab, LF and CR are checked as
/// bytes; only text with other bytes is decoded character by character.
#[must_use]
pub fn allowed_text(s: &str) -> bool {
    plain_ascii(s.as_bytes()) || s.chars().all(allowed_char)
}

/// Whether every byte is printable ASCII, tab, LF or CR. Each 32-byte chunk is checked without
/// an early exit, which the compiler turns into vector instructions: a 200-byte body took
/// about 1,800 instructions byte by byte.
fn plain_ascii(bytes: &[u8]) -> bool {
    bytes.chunks(32).all(|chunk| {
        chunk.iter().fold(true, |ok, &b| {
            ok & ((0x20..=0x7e).contains(&b) | (b == b'\t') | (b == b'\n') | (b == b'\r'))
        })
    })
}

/// Checks a message body: present, non-empty, only allowed characters.
pub fn body(body: &str) -> SqsResult<()> {
    if body.is_empty() {
        return Err(SqsError::missing("MessageBody"));
    }
    if !allowed_text(body) {
        return Err(SqsError::new(
            ErrorCode::InvalidMessageContents,
            INVALID_CHARACTERS,
        ));
    }
    Ok(())
}

fn valid_attribute_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !name.is_empty()
        && name.len() <= 256
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The base type of a DataType (`String`, `Number`, `Binary`), or `None` when invalid.
#[must_use]
pub fn base_type(data_type: &str) -> Option<&'static str> {
    if data_type.len() > 256 {
        return None;
    }
    ["String", "Number", "Binary"].into_iter().find(|base| {
        data_type == *base
            || data_type
                .strip_prefix(base)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|label| !label.is_empty())
    })
}

fn valid_number(s: &str) -> bool {
    // Up to 38 significant digits, a decimal number with optional sign and exponent (§6.4).
    let t = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    if let Some(e) = exp {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        if e.is_empty() || !e.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    if int.is_empty() && frac.is_empty() {
        return false;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return false;
    }
    let digits: String = int.chars().chain(frac.chars()).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len() <= 38
}

/// Checks one user attribute (§6.4).
pub fn attribute(name: &str, value: &MessageAttributeValue) -> SqsResult<()> {
    if !valid_attribute_name(name) {
        // [E] wording.
        return Err(SqsError::invalid_value(format!(
            "Message (user) attribute name '{name}' is invalid. Names can only include alphanumeric characters, hyphens, underscores, or dots, may not start with 'AWS.' or 'Amazon.', may not start or end with a dot or contain two consecutive dots, and can be up to 256 characters long."
        )));
    }
    if value.data_type.is_empty() {
        // [E] wording.
        return Err(SqsError::invalid_value(format!(
            "The message attribute '{name}' must contain non-empty message attribute type."
        )));
    }
    if value.data_type.chars().any(char::is_control) || !allowed_text(&value.data_type) {
        // A type label is echoed back in every receive; a control character in it would
        // reach clients that cannot carry it (Query XML). [E] wording.
        return Err(SqsError::invalid_value(format!(
            "The type of message (user) attribute '{name}' contains invalid characters."
        )));
    }
    // The reserved list members (§6.4) are kept and echoed like the scalar ones, so they are
    // held to the same character rule.
    if value.string_list_values.iter().any(|s| !allowed_text(s)) {
        // [E] wording.
        return Err(SqsError::invalid_value(format!(
            "Message (user) attribute '{name}' contains invalid characters."
        )));
    }
    let Some(base) = base_type(&value.data_type) else {
        // [E] moto 5's text; its code (MessageAttributesInvalid) is no SQS code, so the
        // model's InvalidParameterValue stays.
        return Err(SqsError::invalid_value(format!(
            "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
        )));
    };
    let empty = || {
        SqsError::invalid_value(format!(
            "Message (user) attribute '{name}' must contain a non-empty value of type '{base}'."
        ))
    };
    match base {
        "Binary" => match &value.binary_value {
            Some(b) if !b.is_empty() => Ok(()),
            _ => Err(empty()),
        },
        _ => {
            let Some(s) = value.string_value.as_deref().filter(|s| !s.is_empty()) else {
                return Err(empty());
            };
            if !allowed_text(s) {
                // Control characters in values are InvalidParameterValue, not
                // InvalidMessageContents (§6.4). [E] wording.
                return Err(SqsError::invalid_value(format!(
                    "Message (user) attribute '{name}' contains invalid characters."
                )));
            }
            if base == "Number" && !valid_number(s) {
                // [E] wording.
                return Err(SqsError::invalid_value(format!(
                    "Can't cast the value of message (user) attribute '{name}' to a number."
                )));
            }
            Ok(())
        }
    }
}

/// Checks a whole user-attribute map: count, then each attribute.
pub fn attributes(attrs: &MessageAttributes) -> SqsResult<()> {
    if attrs.len() > MAX_MESSAGE_ATTRIBUTES {
        // [E] wording (aws-sdk-js #2876 title).
        return Err(SqsError::invalid_value(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{MAX_MESSAGE_ATTRIBUTES}].",
            attrs.len()
        )));
    }
    attrs.iter().try_for_each(|(n, v)| attribute(n, v))
}

/// Checks message system attributes: only `AWSTraceHeader`, typed `String` (§6.5).
pub fn system_attributes(attrs: &MessageAttributes) -> SqsResult<()> {
    for (name, value) in attrs {
        if name != "AWSTraceHeader" {
            // [E] wording.
            return Err(SqsError::invalid_value(format!(
                "Message system attribute name '{name}' is invalid."
            )));
        }
        if value.data_type != "String" || value.string_value.as_deref().is_none_or(str::is_empty) {
            // [E] wording.
            return Err(SqsError::invalid_value(format!(
                "Message system attribute '{name}' must contain a non-empty value of type 'String'."
            )));
        }
        // An X-Ray trace header is printable ASCII (`Root=…;Parent=…;Sampled=1`).
        if value
            .string_value
            .as_deref()
            .is_some_and(|v| v.chars().any(|c| c.is_control()))
        {
            // [E] wording.
            return Err(SqsError::invalid_value(format!(
                "Message system attribute '{name}' contains invalid characters."
            )));
        }
    }
    Ok(())
}

/// Bytes a message counts against MaximumMessageSize: body plus each attribute's name, type and
/// value (§6.3). System attributes do not count.
#[must_use]
pub fn message_size(body: &str, attrs: &MessageAttributes) -> usize {
    body.len()
        + attrs
            .iter()
            .map(|(n, v)| {
                n.len()
                    + v.data_type.len()
                    + v.string_value.as_ref().map_or(0, String::len)
                    + v.binary_value.as_ref().map_or(0, Vec::len)
                    + v.string_list_values.iter().map(String::len).sum::<usize>()
                    + v.binary_list_values.iter().map(Vec::len).sum::<usize>()
            })
            .sum::<usize>()
}

/// Whether `s` is a valid MessageGroupId / MessageDeduplicationId / ReceiveRequestAttemptId:
/// 1–128 characters, alphanumeric or ASCII punctuation (§6.9).
#[must_use]
pub fn fifo_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b.is_ascii_punctuation())
}

/// Checks a FIFO-style token and builds AWS's error for a bad one (§5.5).
pub fn fifo_param(value: &str, param: &str) -> SqsResult<()> {
    if fifo_token(value) {
        Ok(())
    } else {
        Err(SqsError::invalid_param(
            value,
            param,
            &format!(
                "{param} can only include alphanumeric and punctuation characters. 1 to 128 in length."
            ),
        ))
    }
}

/// Checks a per-message DelaySeconds on a standard queue. \[E\] wording.
pub fn delay_seconds(delay: i64) -> SqsResult<()> {
    if (0..=900).contains(&delay) {
        Ok(())
    } else {
        Err(SqsError::invalid_param(
            &delay.to_string(),
            "DelaySeconds",
            "DelaySeconds must be >= 0 and <= 900.",
        ))
    }
}

/// Whether `s` is 1–80 of `[A-Za-z0-9_-]`: the rule for queue names (before any `.fifo`),
/// batch entry ids and permission labels.
#[must_use]
pub fn short_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 80
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks a queue name: [`short_name`] rules, 80 characters in all, and the `.fifo` suffix
/// exactly for FIFO queues (§6.2).
pub fn queue_name(name: &str, fifo: bool) -> SqsResult<()> {
    let ok = name.len() <= 80
        && match (fifo, name.strip_suffix(".fifo")) {
            (true, Some(stem)) => short_name(stem),
            (true, None) | (false, Some(_)) => false,
            (false, None) => short_name(name),
        };
    if ok {
        Ok(())
    } else if fifo {
        // [E] wording.
        Err(SqsError::invalid_value(
            "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length",
        ))
    } else {
        // [E] wording.
        Err(SqsError::invalid_value(
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ))
    }
}

/// Most tags a queue may carry [E: AWS only "recommends" 50; LocalStack and moto enforce it].
pub const MAX_TAGS: usize = 50;

fn tag_chars_ok(s: &str) -> bool {
    s.chars().all(|c| {
        c.is_alphanumeric()
            || c.is_whitespace()
            || matches!(c, '_' | '.' | ':' | '/' | '=' | '+' | '-' | '@')
    })
}

/// Checks tags for TagQueue and CreateQueue (§6.14): keys 1–128 characters, values up to 256,
/// letters, digits, whitespace and `_ . : / = + - @`, no `aws:` prefix. \[E\] wordings.
pub fn tags(tags: &[(String, String)]) -> SqsResult<()> {
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 || !tag_chars_ok(k) {
            return Err(SqsError::invalid_param(
                k,
                "TagKey",
                "Tag keys must be between 1 and 128 characters and contain only letters, numbers, spaces and _ . : / = + - @.",
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            return Err(SqsError::invalid_param(
                k,
                "TagKey",
                "Tag keys beginning with aws: are reserved for AWS use.",
            ));
        }
        if v.chars().count() > 256 || !tag_chars_ok(v) {
            return Err(SqsError::invalid_param(
                v,
                "TagValue",
                "Tag values must be at most 256 characters and contain only letters, numbers, spaces and _ . : / = + - @.",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::command::validate::*;

    #[test]
    fn body_characters() {
        assert!(body("hello\r\n\t").is_ok());
        assert_eq!(body("").unwrap_err().code, ErrorCode::MissingParameter);
        for bad in ["\u{0}", "\u{8}", "\u{13}", "\u{FFFF}"] {
            assert_eq!(
                body(bad).unwrap_err().code,
                ErrorCode::InvalidMessageContents,
                "{bad:?}"
            );
        }
    }

    /// The chunked ASCII check agrees with the character rule for a byte at every offset
    /// across chunk boundaries.
    #[test]
    fn text_checks_agree_at_every_offset() {
        for c in [
            '\u{0}', '\u{8}', '\t', '\u{1f}', ' ', '~', '\u{7f}', '\u{e9}', '\u{FFFE}',
        ] {
            for i in 0..70 {
                let s = format!("{}{c}{}", "a".repeat(i), "b".repeat(69 - i));
                assert_eq!(allowed_text(&s), allowed_char(c), "{c:?} at {i}");
            }
        }
    }

    #[test]
    fn attribute_names() {
        for good in ["a", "attr.1", "a-b_c", "attr.1øßä"] {
            assert!(valid_attribute_name(good), "{good}");
        }
        for bad in [
            "",
            "aWs.x",
            "AMAZON.x",
            ".a",
            "a.",
            "a..b",
            "a!",
            "a\"",
            "a§",
            "a(",
            "a?",
            &"x".repeat(257),
        ] {
            assert!(!valid_attribute_name(bad), "{bad}");
        }
    }

    #[test]
    fn data_types() {
        assert_eq!(base_type("Number.java.lang.Long"), Some("Number"));
        assert_eq!(base_type("String"), Some("String"));
        assert_eq!(base_type("Binary.gif"), Some("Binary"));
        assert_eq!(base_type("Invalid"), None);
        assert_eq!(base_type("String."), None);
        assert_eq!(base_type("string"), None);
        assert_eq!(base_type("StringX"), None);
    }

    #[test]
    fn numbers() {
        for good in [
            "0",
            "-1",
            "1.5",
            "1e10",
            "00012",
            ".5",
            "12345678901234567890123456789012345678000",
        ] {
            assert!(valid_number(good), "{good}");
        }
        for bad in [
            "",
            "abc",
            "1.2.3",
            "1e",
            "--1",
            "1234567890123456789012345678901234567891",
        ] {
            assert!(!valid_number(bad), "{bad}");
        }
    }

    #[test]
    fn empty_string_attribute_text() {
        let e =
            attribute("ErrorDetails", &MessageAttributeValue::string("String", "")).unwrap_err();
        assert_eq!(
            e.message,
            "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."
        );
    }

    #[test]
    fn fifo_tokens_and_batch_ids() {
        assert!(fifo_token("group-1!"));
        assert!(!fifo_token("group 123"));
        assert!(!fifo_token(""));
        let e = fifo_param("group 123", "MessageGroupId").unwrap_err();
        assert_eq!(
            e.message,
            "Value group 123 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
        );
        assert!(short_name("id_1-a"));
        assert!(!short_name("id.1"));
        assert!(!short_name(""));
        assert!(!short_name(&"a".repeat(81)));
    }

    #[test]
    fn queue_names() {
        assert!(queue_name("jobs-1_a", false).is_ok());
        assert!(queue_name("jobs.fifo", true).is_ok());
        assert!(queue_name("jobs.fifo", false).is_err());
        assert!(queue_name("jobs", true).is_err());
        assert!(queue_name(".fifo", true).is_err());
        assert!(queue_name("a/b", false).is_err());
        assert!(queue_name(&"a".repeat(80), false).is_ok());
        assert!(queue_name(&"a".repeat(81), false).is_err());
        assert!(queue_name(&format!("{}.fifo", "a".repeat(75)), true).is_ok());
        assert!(queue_name(&format!("{}.fifo", "a".repeat(76)), true).is_err());
    }

    #[test]
    fn tag_rules() {
        let t = |k: &str, v: &str| tags(&[(k.to_owned(), v.to_owned())]);
        assert!(t("team", "").is_ok());
        assert!(t("a b:c/d=e+f-g@h_i.j", "ok value").is_ok());
        assert!(t("", "v").is_err());
        assert!(t("aws:x", "v").is_err());
        assert!(t(&"k".repeat(129), "v").is_err());
        assert!(t("k", &"v".repeat(257)).is_err());
        assert!(t("k#", "v").is_err());
    }

    #[test]
    fn size_counts_names_types_and_values() {
        let mut m = MessageAttributes::new();
        m.insert("k".into(), MessageAttributeValue::string("String", "x"));
        assert_eq!(message_size("abc", &m), 3 + 1 + 6 + 1);
    }
}
