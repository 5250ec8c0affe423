//! Wire layer: the `Params` trait that every action decoder reads from, with its Query
//! (numbered form fields) and JSON 1.0 (object members) implementations.
//!
//! Decoders ask for *model member names* (`Attributes`, `MessageAttributes`, `Entries`); only
//! the Query reader knows how those are numbered, and it asks the service's [`Flattening`]
//! table (SQS's is `sqs/names.rs`: `Attribute.N.Name`, §2.1; another service, such as SNS's
//! `Attributes.entry.N.key`, brings its own). Imports `command` and `error`; never `engine`.

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

/// How a service's Query protocol numbers one list, map or structure-list member: the name
/// its entries are numbered under (`<name>.N`), and for a map the members of an entry that
/// hold its key and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flat<'n> {
    /// The name, in two parts, the second often empty (`Attribute`, `SendMessageBatch` +
    /// `RequestEntry`), so that it is never built.
    pub name: [&'n str; 2],
    /// A map entry's key member (`Name`, `Key`).
    pub key: &'static str,
    /// A map entry's value member (`Value`).
    pub value: &'static str,
}

/// A service's Query flattening table: how `member` is numbered in a request to `action`.
pub type Flattening = for<'n> fn(member: &'n str, action: &'n str) -> Flat<'n>;

/// The Query (form-encoded) reader over the merged fields of one request ([`Form`]), with a
/// prefix for nested structures (`SendMessageBatchRequestEntry.2.`).
#[derive(Debug, Clone)]
pub struct QueryParams<'f, 'a> {
    fields: &'f Form<'a>,
    prefix: String,
    action: &'f str,
    names: Flattening,
}

impl<'f, 'a> QueryParams<'f, 'a> {
    /// A reader over the merged fields of one request to `action`, numbered as `names` says.
    #[must_use]
    pub fn new(fields: &'f Form<'a>, action: &'f str, names: Flattening) -> Self {
        Self {
            fields,
            prefix: String::new(),
            action,
            names,
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
    fn indexed(&self, name: [&str; 2]) -> BTreeMap<u32, Vec<(&'f str, &'f str)>> {
        let mut out: BTreeMap<u32, Vec<(&'f str, &'f str)>> = BTreeMap::new();
        for (rest, v) in self.fields.under(&[&self.prefix, name[0], name[1], "."]) {
            let (idx, tail) = rest.split_once('.').unwrap_or((rest, ""));
            if let Some(n) = list_index(idx) {
                out.entry(n).or_default().push((tail, v));
            }
        }
        out
    }

    /// How a list or map member is numbered, from the service's table.
    fn flat_name<'n>(&'n self, member: &'n str) -> Flat<'n> {
        (self.names)(member, self.action)
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
        let name = self.flat_name(member).name;
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
        let Flat { name, key, value } = self.flat_name(member);
        let entries = |name: [&str; 2]| -> Pairs {
            self.indexed(name)
                .into_values()
                .filter_map(|rows| {
                    let k = field(&rows, key)?;
                    Some((k.to_owned(), field(&rows, value).unwrap_or("").to_owned()))
                })
                .collect()
        };
        let mut out = entries(name);
        // A map is also read under its member's own name. The AWS SDKs for Java (v1, and v2
        // before it moved to JSON) number a map that way when its wire name is set on the map's
        // shape rather than on the member: SQS's TagQueue gets `Tags.N.Key` where botocore
        // sends `Tag.N.Key`, and SQS takes both.
        if out.is_empty() && name != [member, ""] {
            out = entries([member, ""]);
        }
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
        let name = self.flat_name(member).name;
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
        let name = self.flat_name(member).name;
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
                        names: self.names,
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

/// AWS's answer to a JSON `null` as the value of a string map entry (`{"Tags": {"k": null}}`)
/// [V: a capture from eu-west-1 quoted in floci-io/floci PR #905, for TagQueue] (§2.2).
pub const NULL_MAP_VALUE: &str = "the parameter 'value' may not be null";

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
                .map(|(k, v)| {
                    if v.is_null() {
                        // AWS's own check of a map value, before SQS sees it (§2.2).
                        return Err(SqsError::invalid_value(NULL_MAP_VALUE));
                    }
                    Ok((k.to_owned(), expect_str(v, k)?.to_owned()))
                })
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
    use crate::wire::params::*;

    #[test]
    fn list_indices_are_plain_digits() {
        assert_eq!(list_index("1"), Some(1));
        assert_eq!(list_index("10"), Some(10));
        assert_eq!(list_index("+1"), None);
        assert_eq!(list_index("01"), None);
        assert_eq!(list_index(""), None);
        assert_eq!(list_index("1a"), None);
    }

    /// A table numbered as SNS's Query protocol is (lists `Name.member.N`, maps
    /// `Name.entry.N.key` / `.value`): the reader needs nothing else from a service.
    fn member_entry<'n>(member: &'n str, _action: &'n str) -> Flat<'n> {
        match member {
            "Attributes" => Flat {
                name: ["Attributes", ".entry"],
                key: "key",
                value: "value",
            },
            other => Flat {
                name: [other, ".member"],
                key: "Key",
                value: "Value",
            },
        }
    }

    #[test]
    fn the_reader_numbers_members_as_the_table_says() {
        let fields: Form<'_> = [
            ("Attributes.entry.2.key", "DisplayName"),
            ("Attributes.entry.2.value", "d"),
            ("Attributes.entry.1.key", "Policy"),
            ("Attributes.entry.1.value", "{}"),
            ("Tags.member.1.Key", "team"),
            ("Tags.member.1.Value", "core"),
            ("TagKeys.member.1", "a"),
            ("TagKeys.member.2", "b"),
            ("Entries.member.1.Id", "e1"),
            ("Entries.member.1.MessageAttributes.entry.1.Name", "n"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "CreateTopic", member_entry);
        assert_eq!(
            p.string_map("Attributes").expect("decodes"),
            vec![
                ("Policy".to_owned(), "{}".to_owned()),
                ("DisplayName".to_owned(), "d".to_owned()),
            ]
        );
        assert_eq!(
            p.string_map("Tags").expect("decodes"),
            vec![("team".to_owned(), "core".to_owned())]
        );
        assert_eq!(p.string_list("TagKeys").expect("decodes"), vec!["a", "b"]);
        let entries = p.entries("Entries").expect("decodes").expect("present");
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries[0].string("Id").expect("decodes").as_deref(),
            Some("e1")
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
