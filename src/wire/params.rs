//! Wire layer: the `Params` trait that every action decoder reads from, with its Query
//! (flattened form fields) and JSON 1.0 (object members) implementations.
//!
//! Decoders ask for *model member names* (`Attributes`, `MessageAttributes`, `Entries`); only
//! the Query reader knows how those are flattened (`Attribute.N.Name`, §2.1). Imports
//! `command` and `error`; never `engine`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::form::Form;
use super::json_tree::{self, Jv};
use crate::command::{MessageAttributeValue, MessageAttributes, Pairs};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Typed access to request members, independent of protocol.
pub trait Params {
    /// A scalar string member.
    fn string(&self, member: &str) -> SqsResult<Option<String>>;
    /// An integer member.
    fn int(&self, member: &str) -> SqsResult<Option<i64>>;
    /// A list of strings (`AttributeNames`, `TagKeys`, …).
    fn string_list(&self, member: &str) -> SqsResult<Vec<String>>;
    /// A string→string map (`Attributes`, `tags`, `Tags`), in request order.
    fn string_map(&self, member: &str) -> SqsResult<Pairs>;
    /// A map of message attribute values (`MessageAttributes`, `MessageSystemAttributes`).
    fn message_attributes(&self, member: &str) -> SqsResult<MessageAttributes>;
    /// A list of structures (batch `Entries`); `None` when the member is absent.
    fn entries(&self, member: &str) -> SqsResult<Option<Vec<Box<dyn Params + '_>>>>;
}

fn bad_base64(member: &str) -> SqsError {
    // [E] wording.
    SqsError::invalid_value(format!(
        "The value of {member} is not valid base64-encoded binary data."
    ))
}

fn serialization(msg: String) -> SqsError {
    SqsError::new(ErrorCode::SerializationException, msg)
}

// ---------------------------------------------------------------------------------------------
// Query

/// The Query (form-encoded) reader over the merged fields of one request ([`Form`]), with a
/// prefix for nested structures (`SendMessageBatchRequestEntry.2.`).
#[derive(Debug, Clone)]
pub struct QueryParams<'f, 'a> {
    fields: &'f Form<'a>,
    prefix: String,
    action: &'f str,
}

/// A flattened name in two parts, the second often empty (`Attribute`,
/// `SendMessageBatch` + `RequestEntry`), so that it is never built.
type Flat<'n> = [&'n str; 2];

impl<'f, 'a> QueryParams<'f, 'a> {
    /// A reader over the merged fields of one request.
    #[must_use]
    pub fn new(fields: &'f Form<'a>, action: &'f str) -> Self {
        Self {
            fields,
            prefix: String::new(),
            action,
        }
    }

    /// The field named by the concatenation of `parts`, under the prefix.
    fn at(&self, parts: &[&str]) -> Option<&'f str> {
        match parts {
            [a] => self.fields.joined(&[&self.prefix, a]),
            [a, b] => self.fields.joined(&[&self.prefix, a, b]),
            [a, b, c] => self.fields.joined(&[&self.prefix, a, b, c]),
            [a, b, c, d] => self.fields.joined(&[&self.prefix, a, b, c, d]),
            _ => self
                .fields
                .joined(&[&[self.prefix.as_str()], parts].concat()),
        }
    }

    fn get(&self, key: &str) -> Option<&'f str> {
        self.at(&[key])
    }

    /// Indices N (ascending) for which some key starts with `<prefix><name>.N`, with the
    /// remainder of each key after `N`.
    fn indexed(&self, name: Flat<'_>) -> BTreeMap<u32, Vec<(&'f str, &'f str)>> {
        let mut out: BTreeMap<u32, Vec<(&'f str, &'f str)>> = BTreeMap::new();
        for (rest, v) in self.fields.under(&[&self.prefix, name[0], name[1], "."]) {
            let (idx, tail) = rest.split_once('.').unwrap_or((rest, ""));
            if let Some(n) = list_index(idx) {
                out.entry(n).or_default().push((tail, v));
            }
        }
        out
    }

    /// The flattened name of a list or map member (§2.1 table).
    fn flat_name<'n>(&'n self, member: &'n str) -> Flat<'n> {
        match member {
            "Attributes" => ["Attribute", ""],
            "tags" | "Tags" => ["Tag", ""],
            "AttributeNames" | "MessageSystemAttributeNames" => ["AttributeName", ""],
            "MessageAttributeNames" => ["MessageAttributeName", ""],
            "TagKeys" => ["TagKey", ""],
            "AWSAccountIds" => ["AWSAccountId", ""],
            "Actions" => ["ActionName", ""],
            "MessageAttributes" => ["MessageAttribute", ""],
            "MessageSystemAttributes" => ["MessageSystemAttribute", ""],
            "Entries" => [self.action, "RequestEntry"],
            other => [other, ""],
        }
    }
}

/// A Query list index: plain decimal digits, so `Attribute.+1.Name` and `Attribute.01.Name`
/// are not read as `Attribute.1.Name` (Rust's integer parser would accept both).
fn list_index(s: &str) -> Option<u32> {
    let canonical =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().ok()).flatten()
}

fn field<'a>(rows: &'a [(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    rows.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn list_field(rows: &[(&str, &str)], prefix: &str) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = rows
        .iter()
        .filter_map(|(k, val)| {
            let n = list_index(k.strip_prefix(prefix)?.strip_prefix('.')?)?;
            Some((n, (*val).to_owned()))
        })
        .collect();
    v.sort_by_key(|(n, _)| *n);
    v
}

impl Params for QueryParams<'_, '_> {
    fn string(&self, member: &str) -> SqsResult<Option<String>> {
        Ok(self.get(member).map(str::to_owned))
    }

    fn int(&self, member: &str) -> SqsResult<Option<i64>> {
        match self.get(member) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| {
                // [E] wording.
                SqsError::invalid_param(v, member, "Value must be an integer.")
            }),
        }
    }

    fn string_list(&self, member: &str) -> SqsResult<Vec<String>> {
        let name = self.flat_name(member);
        let mut out: Vec<String> = self
            .indexed(name)
            .into_values()
            .filter_map(|rows| field(&rows, "").map(str::to_owned))
            .collect();
        // Some hand-written clients omit the index (`AttributeName=All`).
        if let Some(bare) = self.at(&name) {
            out.push(bare.to_owned());
        }
        Ok(out)
    }

    fn string_map(&self, member: &str) -> SqsResult<Pairs> {
        let name = self.flat_name(member);
        let (key, value) = if name == ["Tag", ""] {
            ("Key", "Value")
        } else {
            ("Name", "Value")
        };
        let mut out: Pairs = self
            .indexed(name)
            .into_values()
            .filter_map(|rows| {
                let k = field(&rows, key)?;
                Some((k.to_owned(), field(&rows, value).unwrap_or("").to_owned()))
            })
            .collect();
        // boto 2 sends one entry without an index (`Attribute.Name=…&Attribute.Value=…`).
        if let Some(k) = self.at(&[name[0], name[1], ".", key]) {
            let v = self.at(&[name[0], name[1], ".", value]).unwrap_or("");
            if !out.iter().any(|(existing, _)| existing == k) {
                out.push((k.to_owned(), v.to_owned()));
            }
        }
        Ok(out)
    }

    fn message_attributes(&self, member: &str) -> SqsResult<MessageAttributes> {
        let name = self.flat_name(member);
        let mut out = MessageAttributes::new();
        for rows in self.indexed(name).into_values() {
            let Some(n) = field(&rows, "Name") else {
                continue;
            };
            let binary = match field(&rows, "Value.BinaryValue") {
                Some(b) => Some(STANDARD.decode(b).map_err(|_| bad_base64(n))?),
                None => None,
            };
            let binary_list = list_field(&rows, "Value.BinaryListValue")
                .into_iter()
                .map(|(_, b)| STANDARD.decode(b).map_err(|_| bad_base64(n)))
                .collect::<SqsResult<Vec<_>>>()?;
            out.insert(
                n.to_owned(),
                MessageAttributeValue {
                    data_type: field(&rows, "Value.DataType").unwrap_or("").to_owned(),
                    string_value: field(&rows, "Value.StringValue").map(str::to_owned),
                    binary_value: binary,
                    string_list_values: list_field(&rows, "Value.StringListValue")
                        .into_iter()
                        .map(|(_, s)| s)
                        .collect(),
                    binary_list_values: binary_list,
                },
            );
        }
        Ok(out)
    }

    fn entries(&self, member: &str) -> SqsResult<Option<Vec<Box<dyn Params + '_>>>> {
        let name = self.flat_name(member);
        let indexed = self.indexed(name);
        if indexed.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            indexed
                .into_keys()
                .map(|n| {
                    Box::new(QueryParams {
                        fields: self.fields,
                        prefix: format!("{}{}{}.{n}.", self.prefix, name[0], name[1]),
                        action: self.action,
                    }) as Box<dyn Params>
                })
                .collect(),
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

/// The JSON 1.0 reader over one request object (or one batch entry), read as
/// `serde_json::Value` would be: a member given twice has its last value, `null` is absent.
#[derive(Debug, Clone, Copy)]
pub struct JsonParams<'m, 'a> {
    obj: &'m [(Cow<'a, str>, Jv<'a>)],
}

impl<'m, 'a> JsonParams<'m, 'a> {
    /// A reader over a parsed JSON object's members.
    #[must_use]
    pub fn new(obj: &'m [(Cow<'a, str>, Jv<'a>)]) -> Self {
        Self { obj }
    }

    /// A member, with JSON `null` treated as absent (§2.2).
    fn get(&self, member: &str) -> Option<&'m Jv<'a>> {
        json_tree::member(self.obj, member).filter(|v| !v.is_null())
    }
}

fn expect_str<'v>(v: &'v Jv<'_>, member: &str) -> SqsResult<&'v str> {
    v.as_str()
        .ok_or_else(|| serialization(format!("Expected a string for {member}.")))
}

fn json_attr_value(name: &str, v: &Jv<'_>) -> SqsResult<MessageAttributeValue> {
    let o = v
        .as_object()
        .ok_or_else(|| serialization(format!("Expected an object for attribute {name}.")))?;
    let get = |k: &str| json_tree::member(o, k);
    let s = |k: &str| -> SqsResult<Option<String>> {
        get(k)
            .filter(|v| !v.is_null())
            .map(|v| expect_str(v, k).map(str::to_owned))
            .transpose()
    };
    let b64 = |v: &Jv<'_>| -> SqsResult<Vec<u8>> {
        STANDARD
            .decode(expect_str(v, "BinaryValue")?)
            .map_err(|_| bad_base64(name))
    };
    let list = |k: &str| -> &[Jv<'_>] { get(k).and_then(Jv::as_array).unwrap_or_default() };
    Ok(MessageAttributeValue {
        data_type: s("DataType")?.unwrap_or_default(),
        string_value: s("StringValue")?,
        binary_value: get("BinaryValue")
            .filter(|v| !v.is_null())
            .map(b64)
            .transpose()?,
        string_list_values: list("StringListValues")
            .iter()
            .map(|v| expect_str(v, "StringListValues").map(str::to_owned))
            .collect::<SqsResult<_>>()?,
        binary_list_values: list("BinaryListValues")
            .iter()
            .map(b64)
            .collect::<SqsResult<_>>()?,
    })
}

impl Params for JsonParams<'_, '_> {
    fn string(&self, member: &str) -> SqsResult<Option<String>> {
        self.get(member)
            .map(|v| expect_str(v, member).map(str::to_owned))
            .transpose()
    }

    fn int(&self, member: &str) -> SqsResult<Option<i64>> {
        self.get(member)
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| serialization(format!("Expected an integer for {member}.")))
            })
            .transpose()
    }

    fn string_list(&self, member: &str) -> SqsResult<Vec<String>> {
        match self.get(member) {
            None => Ok(Vec::new()),
            Some(Jv::Arr(a)) => a
                .iter()
                .map(|v| expect_str(v, member).map(str::to_owned))
                .collect(),
            Some(_) => Err(serialization(format!("Expected a list for {member}."))),
        }
    }

    fn string_map(&self, member: &str) -> SqsResult<Pairs> {
        match self.get(member) {
            None => Ok(Vec::new()),
            Some(Jv::Obj(o)) => json_tree::unique(o)
                .into_iter()
                .map(|(k, v)| Ok((k.to_owned(), expect_str(v, k)?.to_owned())))
                .collect(),
            Some(_) => Err(serialization(format!("Expected a map for {member}."))),
        }
    }

    fn message_attributes(&self, member: &str) -> SqsResult<MessageAttributes> {
        match self.get(member) {
            None => Ok(MessageAttributes::new()),
            Some(Jv::Obj(o)) => json_tree::unique(o)
                .into_iter()
                .map(|(k, v)| Ok((k.to_owned(), json_attr_value(k, v)?)))
                .collect(),
            Some(_) => Err(serialization(format!("Expected a map for {member}."))),
        }
    }

    fn entries(&self, member: &str) -> SqsResult<Option<Vec<Box<dyn Params + '_>>>> {
        match self.get(member) {
            None => Ok(None),
            Some(Jv::Arr(a)) => a
                .iter()
                .map(|v| {
                    v.as_object()
                        .map(|o| Box::new(JsonParams::new(o)) as Box<dyn Params>)
                        .ok_or_else(|| serialization(format!("Expected objects in {member}.")))
                })
                .collect::<SqsResult<Vec<_>>>()
                .map(Some),
            Some(_) => Err(serialization(format!("Expected a list for {member}."))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unindexed_map_entry_is_read() {
        let fields: Form<'_> = [
            ("Attribute.Name", "VisibilityTimeout"),
            ("Attribute.Value", "7"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "SetQueueAttributes");
        assert_eq!(
            p.string_map("Attributes").expect("decodes"),
            vec![("VisibilityTimeout".to_owned(), "7".to_owned())]
        );
    }

    #[test]
    fn list_indices_are_plain_digits() {
        assert_eq!(list_index("1"), Some(1));
        assert_eq!(list_index("10"), Some(10));
        assert_eq!(list_index("+1"), None);
        assert_eq!(list_index("01"), None);
        assert_eq!(list_index(""), None);
        assert_eq!(list_index("1a"), None);
        let fields: Form<'_> = [
            ("Action", "CreateQueue"),
            ("Attribute.1.Name", "DelaySeconds"),
            ("Attribute.1.Value", "1"),
            ("Attribute.+1.Name", "VisibilityTimeout"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "CreateQueue");
        let attrs = p.string_map("Attributes").expect("decodes");
        assert_eq!(attrs.len(), 1, "{attrs:?}");
        assert_eq!(attrs, vec![("DelaySeconds".to_owned(), "1".to_owned())]);
    }

    fn form<'a>(pairs: &[(&'a str, &'a str)]) -> Form<'a> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn query_maps_lists_and_numbers() {
        let f = form(&[
            ("Attribute.2.Name", "DelaySeconds"),
            ("Attribute.2.Value", "5"),
            ("Attribute.1.Name", "VisibilityTimeout"),
            ("Attribute.1.Value", "60"),
            ("Attribute.10.Name", "MaximumMessageSize"),
            ("Attribute.10.Value", "2048"),
            ("AttributeName.1", "All"),
            ("AttributeName.2", "QueueArn"),
            ("MaxNumberOfMessages", "10"),
            ("Tag.1.Key", "team"),
            ("Tag.1.Value", ""),
        ]);
        let p = QueryParams::new(&f, "CreateQueue");
        assert_eq!(
            p.string_map("Attributes").unwrap(),
            vec![
                ("VisibilityTimeout".to_owned(), "60".to_owned()),
                ("DelaySeconds".to_owned(), "5".to_owned()),
                ("MaximumMessageSize".to_owned(), "2048".to_owned()),
            ]
        );
        assert_eq!(
            p.string_list("AttributeNames").unwrap(),
            vec!["All", "QueueArn"]
        );
        assert_eq!(
            p.string_list("MessageSystemAttributeNames").unwrap(),
            vec!["All", "QueueArn"]
        );
        assert_eq!(p.int("MaxNumberOfMessages").unwrap(), Some(10));
        assert_eq!(
            p.string_map("tags").unwrap(),
            vec![("team".to_owned(), String::new())]
        );
        let bad = form(&[("MaxNumberOfMessages", "x")]);
        assert!(
            QueryParams::new(&bad, "ReceiveMessage")
                .int("MaxNumberOfMessages")
                .is_err()
        );
    }

    #[test]
    fn query_message_attributes_and_entries() {
        let f = form(&[
            ("SendMessageBatchRequestEntry.1.Id", "a"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "x"),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                "n",
            ),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType",
                "Number.int",
            ),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue",
                "42",
            ),
            ("SendMessageBatchRequestEntry.2.Id", "b"),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Name",
                "bin",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType",
                "Binary",
            ),
            (
                "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.BinaryValue",
                "AAEC",
            ),
        ]);
        let p = QueryParams::new(&f, "SendMessageBatch");
        let entries = p.entries("Entries").unwrap().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].string("Id").unwrap().as_deref(), Some("a"));
        let a = entries[0].message_attributes("MessageAttributes").unwrap();
        assert_eq!(a["n"], MessageAttributeValue::string("Number.int", "42"));
        let b = entries[1].message_attributes("MessageAttributes").unwrap();
        assert_eq!(
            b["bin"],
            MessageAttributeValue::binary("Binary", &[0, 1, 2])
        );
        let none = form(&[]);
        assert!(
            QueryParams::new(&none, "SendMessageBatch")
                .entries("Entries")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn json_members() {
        let v = Jv::parse(
            br#"{"QueueUrl":"u","MaxNumberOfMessages":3,"AttributeNames":["All"],
                "Attributes":{"DelaySeconds":"1"},"ReceiptHandle":null,
                "MessageAttributes":{"b":{"DataType":"Binary","BinaryValue":"AAEC"}}}"#,
        )
        .unwrap();
        let p = JsonParams::new(v.as_object().unwrap());
        assert_eq!(p.string("QueueUrl").unwrap().as_deref(), Some("u"));
        assert_eq!(p.string("ReceiptHandle").unwrap(), None);
        assert_eq!(p.int("MaxNumberOfMessages").unwrap(), Some(3));
        assert_eq!(p.string_list("AttributeNames").unwrap(), vec!["All"]);
        assert_eq!(
            p.string_map("Attributes").unwrap(),
            vec![("DelaySeconds".into(), "1".into())]
        );
        assert_eq!(
            p.message_attributes("MessageAttributes").unwrap()["b"].binary_value,
            Some(vec![0, 1, 2])
        );
        assert_eq!(
            p.int("QueueUrl").unwrap_err().code,
            ErrorCode::SerializationException
        );
    }
}
