//! Wire layer: the AWS JSON 1.0 response writer and error body (§3.2, §5.2).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::encode::Out;
use crate::command::{MessageAttributes, Pairs};

/// Writes result members into a JSON object.
#[derive(Debug, Default)]
pub struct JsonOut {
    /// The object built so far.
    pub obj: Map<String, Value>,
}

impl Out for JsonOut {
    fn string(&mut self, name: &str, v: &str) {
        self.obj
            .insert(name.to_owned(), Value::String(v.to_owned()));
    }

    fn int(&mut self, name: &str, v: i64) {
        self.obj.insert(name.to_owned(), Value::from(v));
    }

    fn boolean(&mut self, name: &str, v: bool) {
        self.obj.insert(name.to_owned(), Value::Bool(v));
    }

    fn string_list(&mut self, json: &str, _xml: &str, items: &[String]) {
        if !items.is_empty() {
            self.obj.insert(
                json.to_owned(),
                Value::Array(items.iter().cloned().map(Value::String).collect()),
            );
        }
    }

    fn string_map(&mut self, json: &str, _xml: &str, _key: &str, _value: &str, items: &Pairs) {
        if !items.is_empty() {
            let m: Map<String, Value> = items
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            self.obj.insert(json.to_owned(), Value::Object(m));
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
        let list = (0..n)
            .map(|i| {
                let mut o = JsonOut::default();
                item(i, &mut o);
                Value::Object(o.obj)
            })
            .collect();
        self.obj.insert(json.to_owned(), Value::Array(list));
    }

    fn message_attributes(&mut self, json: &str, _xml: &str, attrs: &MessageAttributes) {
        if attrs.is_empty() {
            return;
        }
        let m: Map<String, Value> = attrs
            .iter()
            .map(|(name, v)| {
                let mut o = Map::new();
                if let Some(s) = &v.string_value {
                    o.insert("StringValue".into(), Value::String(s.clone()));
                }
                if let Some(b) = &v.binary_value {
                    o.insert("BinaryValue".into(), Value::String(STANDARD.encode(b)));
                }
                if !v.string_list_values.is_empty() {
                    o.insert(
                        "StringListValues".into(),
                        v.string_list_values
                            .iter()
                            .cloned()
                            .map(Value::String)
                            .collect(),
                    );
                }
                if !v.binary_list_values.is_empty() {
                    o.insert(
                        "BinaryListValues".into(),
                        v.binary_list_values
                            .iter()
                            .map(|b| Value::String(STANDARD.encode(b)))
                            .collect(),
                    );
                }
                o.insert("DataType".into(), Value::String(v.data_type.clone()));
                (name.clone(), Value::Object(o))
            })
            .collect();
        self.obj.insert(json.to_owned(), Value::Object(m));
    }
}

/// The JSON error body: `__type` and, when there is one, a lower-case `message` (§5.2). No
/// `code` member: aws-sdk-rust would prefer it over `__type` (G-25).
#[must_use]
pub fn error_body(json_type: &str, message: &str) -> String {
    let mut m = Map::new();
    m.insert("__type".into(), Value::String(json_type.to_owned()));
    if !message.is_empty() {
        m.insert("message".into(), Value::String(message.to_owned()));
    }
    Value::Object(m).to_string()
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
    use super::*;
    use crate::command::MessageAttributeValue;

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
        assert!(o.obj.is_empty());
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
            Value::Object(o.obj).to_string(),
            r#"{"MessageAttributes":{"b":{"BinaryValue":"AAEC","DataType":"Binary"}}}"#
        );
        assert_eq!(
            error_body(
                "com.amazonaws.sqs#QueueDoesNotExist",
                "The specified queue does not exist."
            ),
            r#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}"#
        );
    }
}
