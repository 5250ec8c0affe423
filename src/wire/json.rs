//! Wire layer: the AWS JSON 1.0 response writer and error body (§3.2, §5.2).

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::out::Out;
use crate::command::{MessageAttributes, Pairs};

/// Appends `s` as a JSON string literal, escaped exactly as `serde_json` writes it: `"` and
/// `\` escaped, the control characters U+0000–U+001F as `\b \t \n \f \r` or `\u00xx`, and
/// nothing else (no `/`, no non-ASCII).
pub fn string_into(buf: &mut String, s: &str) {
    buf.reserve(s.len() + 2);
    buf.push('"');
    let bytes = s.as_bytes();
    if !needs_escape(bytes) {
        buf.push_str(s);
        buf.push('"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0C => "\\f",
            0x00..=0x1F => "",
            _ => continue,
        };
        // Every byte matched above is ASCII, so `i` is a character boundary.
        buf.push_str(&s[start..i]);
        if short.is_empty() {
            let _ = write!(buf, "\\u{b:04x}");
        } else {
            buf.push_str(short);
        }
        start = i + 1;
    }
    buf.push_str(&s[start..]);
    buf.push('"');
}

/// Whether any byte of `bytes` must be escaped. Chunks are checked without an early exit, so
/// that the compiler vectorises the common case (ids, MD5s and bodies with nothing to escape).
fn needs_escape(bytes: &[u8]) -> bool {
    bytes.chunks(32).any(|chunk| {
        chunk.iter().fold(false, |any, &b| {
            any | (b < 0x20) | (b == b'"') | (b == b'\\')
        })
    })
}

/// Writes result members straight into the JSON text of one object, in the order they are
/// given: the text `serde_json` would print for the `Map` of the same members (insertion
/// order kept), without building the map.
#[derive(Debug)]
pub struct JsonOut {
    /// The text written so far; [`JsonOut::finish`] closes it.
    buf: String,
    /// Whether the innermost open object has no member yet.
    empty: bool,
}

impl Default for JsonOut {
    fn default() -> Self {
        let mut buf = String::with_capacity(256);
        buf.push('{');
        Self { buf, empty: true }
    }
}

impl JsonOut {
    /// The finished object's text.
    #[must_use]
    pub fn finish(mut self) -> String {
        self.buf.push('}');
        self.buf
    }

    /// Starts a member: its separator and name.
    fn key(&mut self, name: &str) {
        if !std::mem::replace(&mut self.empty, false) {
            self.buf.push(',');
        }
        string_into(&mut self.buf, name);
        self.buf.push(':');
    }

    /// A nested object, filled by `fill`.
    fn object(&mut self, fill: impl FnOnce(&mut Self)) {
        self.buf.push('{');
        let outer = std::mem::replace(&mut self.empty, true);
        fill(self);
        self.empty = outer;
        self.buf.push('}');
    }

    fn strings<'s>(&mut self, items: impl IntoIterator<Item = &'s str>) {
        self.buf.push('[');
        for (i, s) in items.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(',');
            }
            string_into(&mut self.buf, s);
        }
        self.buf.push(']');
    }
}

/// Pairs as a `Map` collected from them holds them: a key given twice keeps its first
/// position and its last value. Borrowed as given when every key is distinct (the usual case).
fn as_map(items: &Pairs) -> Vec<(&str, &str)> {
    let mut out: Vec<(&str, &str)> = Vec::with_capacity(items.len());
    let distinct = items.len() < 2 || {
        let mut keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        keys.windows(2).all(|w| w[0] != w[1])
    };
    if distinct {
        out.extend(items.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        return out;
    }
    let mut at = std::collections::HashMap::with_capacity(items.len());
    for (k, v) in items {
        match at.get(k.as_str()) {
            Some(&i) => out[i] = (k.as_str(), v.as_str()),
            None => {
                at.insert(k.as_str(), out.len());
                out.push((k.as_str(), v.as_str()));
            }
        }
    }
    out
}

impl Out for JsonOut {
    fn string(&mut self, name: &str, v: &str) {
        self.key(name);
        string_into(&mut self.buf, v);
    }

    fn int(&mut self, name: &str, v: i64) {
        self.key(name);
        let _ = write!(self.buf, "{v}");
    }

    fn boolean(&mut self, name: &str, v: bool) {
        self.key(name);
        self.buf.push_str(if v { "true" } else { "false" });
    }

    fn string_list(&mut self, json: &str, _xml: &str, items: &[String]) {
        if !items.is_empty() {
            self.key(json);
            self.strings(items.iter().map(String::as_str));
        }
    }

    fn string_map(&mut self, json: &str, _xml: &str, _key: &str, _value: &str, items: &Pairs) {
        if !items.is_empty() {
            self.key(json);
            self.object(|o| {
                for (k, v) in as_map(items) {
                    o.key(k);
                    string_into(&mut o.buf, v);
                }
            });
        }
    }

    fn struct_list(
        &mut self,
        json: &str,
        _xml: &str,
        n: usize,
        item: &mut dyn FnMut(usize, &mut dyn Out),
    ) {
        if n == 0 {
            return;
        }
        self.key(json);
        self.buf.push('[');
        for i in 0..n {
            if i > 0 {
                self.buf.push(',');
            }
            self.object(|o| item(i, o));
        }
        self.buf.push(']');
    }

    fn message_attributes(&mut self, json: &str, _xml: &str, attrs: &MessageAttributes) {
        if attrs.is_empty() {
            return;
        }
        self.key(json);
        self.object(|o| {
            for (name, v) in attrs {
                o.key(name);
                o.object(|o| {
                    if let Some(s) = &v.string_value {
                        o.string("StringValue", s);
                    }
                    if let Some(b) = &v.binary_value {
                        o.string("BinaryValue", &STANDARD.encode(b));
                    }
                    if !v.string_list_values.is_empty() {
                        o.key("StringListValues");
                        o.strings(v.string_list_values.iter().map(String::as_str));
                    }
                    if !v.binary_list_values.is_empty() {
                        o.key("BinaryListValues");
                        let encoded: Vec<String> = v
                            .binary_list_values
                            .iter()
                            .map(|b| STANDARD.encode(b))
                            .collect();
                        o.strings(encoded.iter().map(String::as_str));
                    }
                    o.string("DataType", &v.data_type);
                });
            }
        });
    }
}

/// The JSON error body: `__type` and, when there is one, a lower-case `message` (§5.2). No
/// `code` member: aws-sdk-rust would prefer it over `__type` (G-25).
#[must_use]
pub fn error_body(json_type: &str, message: &str) -> String {
    let mut out = JsonOut::default();
    out.string("__type", json_type);
    if !message.is_empty() {
        out.string("message", message);
    }
    out.finish()
}

/// Whether a JSON text holds a `\uXXXX` escape of a UTF-16 surrogate that is not half of a
/// well-formed pair (a high one followed by a low one). serde_json refuses such text as a
/// syntax error; SQS treats it as a message-content error (§6.3), whichever half is alone.
#[must_use]
pub fn has_lone_surrogate(text: &[u8]) -> bool {
    fn escape_at(text: &[u8], i: usize) -> Option<u16> {
        let hex = text.get(i..i + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    }
    let (mut i, mut in_string) = (0, false);
    while i < text.len() {
        match text[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if let Some(unit) = escape_at(text, i) {
                    match unit {
                        0xD800..=0xDBFF => match escape_at(text, i + 6) {
                            Some(0xDC00..=0xDFFF) => i += 6,
                            _ => return true,
                        },
                        0xDC00..=0xDFFF => return true,
                        _ => {}
                    }
                    i += 6;
                    continue;
                }
                i += 1; // skip the escaped character
            }
            _ => {}
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::command::MessageAttributeValue;
    use crate::wire::json::*;

    #[test]
    fn lone_surrogates_are_found_whichever_half() {
        assert!(has_lone_surrogate(br#"{"MessageBody":"a\ud800b"}"#));
        assert!(has_lone_surrogate(br#"{"MessageBody":"a\udc00"}"#));
        assert!(has_lone_surrogate(br#"{"MessageBody":"\ud83d\u0041"}"#));
        assert!(!has_lone_surrogate(
            br#"{"MessageBody":"\ud83d\ude00 \u00e9"}"#
        ));
        assert!(!has_lone_surrogate(br#"{"MessageBody":"\\ud800"}"#));
    }

    #[test]
    fn strings_are_escaped_byte_for_byte_as_serde_json_does() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("\u{e9}\u{2028}\u{FFFD}\u{1F600}/");
        // One byte to escape at every offset of a string longer than two 32-byte chunks.
        let long: Vec<String> = ["\"", "\\", "\n", "\u{1}", "\u{1f}"]
            .iter()
            .flat_map(|c| {
                (0..70).map(move |i| format!("{}{c}{}", "a".repeat(i), "b".repeat(69 - i)))
            })
            .collect();
        let fixed = [all.as_str(), "", "plain", "\"\\", "a\u{0}b\u{1f}c\u{7f}"];
        for s in fixed.into_iter().chain(long.iter().map(String::as_str)) {
            let mut buf = String::new();
            string_into(&mut buf, s);
            assert_eq!(buf, serde_json::to_string(s).expect("serialises"), "{s:?}");
        }
    }

    #[test]
    fn empty_collections_are_omitted() {
        let mut o = JsonOut::default();
        o.string_list("QueueUrls", "QueueUrl", &[]);
        o.string_map("Attributes", "Attribute", "Name", "Value", &Vec::new());
        o.struct_list("Messages", "Message", 0, &mut |_, _| {});
        o.message_attributes(
            "MessageAttributes",
            "MessageAttribute",
            &MessageAttributes::new(),
        );
        assert_eq!(o.finish(), "{}");
    }

    #[test]
    fn attributes_shape() {
        let mut attrs = MessageAttributes::new();
        attrs.insert(
            "b".into(),
            MessageAttributeValue::binary("Binary", &[0, 1, 2]),
        );
        let mut o = JsonOut::default();
        o.message_attributes("MessageAttributes", "MessageAttribute", &attrs);
        assert_eq!(
            o.finish(),
            r#"{"MessageAttributes":{"b":{"BinaryValue":"AAEC","DataType":"Binary"}}}"#
        );
        assert_eq!(
            error_body(
                "com.amazonaws.sqs#QueueDoesNotExist",
                "The specified queue does not exist."
            ),
            r#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}"#
        );
        assert_eq!(error_body("t\"", ""), r#"{"__type":"t\""}"#);
    }
}
