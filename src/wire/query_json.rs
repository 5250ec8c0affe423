//! Wire layer: the JSON rendering of Query responses. Two dialects share one writer:
//!
//! - **AWS's**: a Query request (GET or form POST) with `Accept: application/json` is answered
//!   `{"<Action>Response": {"<Action>Result": …, "ResponseMetadata": {"RequestId": …}}}`; list
//!   members take the lower-camel model name (`queueUrls`, `messages`), maps become lists of
//!   `{"Name","Value"}` objects under the model name (`Attributes`) (§3.1, [V: LST] for
//!   `queueUrls` and `messages`; [E] for the rest of the naming). Errors are
//!   `{"Error": {"Code","Message","Type"}, "RequestId": …}` with the Query status.
//! - **LocalStack's peek** (`/_aws/sqs/messages` with `Accept: application/json`): the XML
//!   document turned into JSON, element names kept (`Message`, `Attribute`), every repeated
//!   element a list, which is what suites written against LocalStack read.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::out::Out;
use crate::command::{MessageAttributes, Pairs};

/// Which naming the writer follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// AWS's JSON answer to a Query request.
    Aws,
    /// The XML element names, as LocalStack's peek endpoint answers in JSON.
    XmlNames,
}

/// Writes result members into a JSON object, in one [`Dialect`].
#[derive(Debug)]
pub struct QueryJsonOut {
    /// The object built so far.
    pub obj: Map<String, Value>,
    dialect: Dialect,
}

impl QueryJsonOut {
    /// An empty result in `dialect`.
    #[must_use]
    pub fn new(dialect: Dialect) -> Self {
        Self {
            obj: Map::new(),
            dialect,
        }
    }

    /// The key of a list member.
    fn list_key(&self, json: &str, xml: &str) -> String {
        match self.dialect {
            Dialect::Aws => lower_camel(json),
            Dialect::XmlNames => xml.to_owned(),
        }
    }

    /// The key of a map member.
    fn map_key(&self, json: &str, xml: &str) -> String {
        match self.dialect {
            Dialect::Aws => json.to_owned(),
            Dialect::XmlNames => xml.to_owned(),
        }
    }
}

fn lower_camel(name: &str) -> String {
    let mut c = name.chars();
    c.next()
        .map_or_else(String::new, |first| first.to_lowercase().chain(c).collect())
}

impl Out for QueryJsonOut {
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

    fn string_list(&mut self, json: &str, xml: &str, items: &[String]) {
        if !items.is_empty() {
            let key = self.list_key(json, xml);
            self.obj
                .insert(key, items.iter().cloned().map(Value::String).collect());
        }
    }

    fn string_map(&mut self, json: &str, xml: &str, key: &str, value: &str, items: &Pairs) {
        if !items.is_empty() {
            let entries = items
                .iter()
                .map(|(k, v)| json!({ key: k, value: v }))
                .collect();
            let name = self.map_key(json, xml);
            self.obj.insert(name, Value::Array(entries));
        }
    }

    fn struct_list(
        &mut self,
        json: &str,
        xml: &str,
        n: usize,
        item: &mut dyn FnMut(usize, &mut dyn Out),
    ) {
        if n == 0 {
            return;
        }
        let list = (0..n)
            .map(|i| {
                let mut o = QueryJsonOut::new(self.dialect);
                item(i, &mut o);
                Value::Object(o.obj)
            })
            .collect();
        let key = self.list_key(json, xml);
        self.obj.insert(key, Value::Array(list));
    }

    fn message_attributes(&mut self, json: &str, xml: &str, attrs: &MessageAttributes) {
        if attrs.is_empty() {
            return;
        }
        let list = attrs
            .iter()
            .map(|(name, v)| {
                let mut value = Map::new();
                if let Some(s) = &v.string_value {
                    value.insert("StringValue".into(), Value::String(s.clone()));
                }
                if let Some(b) = &v.binary_value {
                    value.insert("BinaryValue".into(), Value::String(STANDARD.encode(b)));
                }
                value.insert("DataType".into(), Value::String(v.data_type.clone()));
                json!({ "Name": name, "Value": value })
            })
            .collect();
        let key = self.map_key(json, xml);
        self.obj.insert(key, Value::Array(list));
    }
}

/// Wraps a result in the `<Action>Response` envelope; `result` is `None` for actions without
/// output.
#[must_use]
pub fn envelope(action: &str, result: Option<Map<String, Value>>, request_id: &str) -> String {
    let mut response = Map::new();
    if let Some(r) = result {
        response.insert(format!("{action}Result"), Value::Object(r));
    }
    response.insert(
        "ResponseMetadata".into(),
        json!({ "RequestId": request_id }),
    );
    json!({ format!("{action}Response"): response }).to_string()
}

/// LocalStack's JSON rendering of a Query document (its developer endpoint under `--compat
/// localstack`): the XML read by xmltodict, where an element that occurs once is an object (or
/// its text), only a repeated one a list, and an empty one `null`. Applied to a value written
/// in [`Dialect::XmlNames`], whose lists are exactly the repeated elements.
#[must_use]
pub fn xmltodict(v: Value) -> Value {
    match v {
        Value::Array(mut items) if items.len() == 1 => xmltodict(items.remove(0)),
        Value::Array(items) => Value::Array(items.into_iter().map(xmltodict).collect()),
        Value::Object(o) if o.is_empty() => Value::Null,
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, xmltodict(v))).collect()),
        Value::String(s) if s.is_empty() => Value::Null,
        other => other,
    }
}

/// LocalStack's error document in that rendering:
/// `{"ErrorResponse": {"Error": {"Code", "Message", "Type"}, "RequestId"}}`.
#[must_use]
pub fn xmltodict_error_body(fault: &str, code: &str, message: &str, request_id: &str) -> String {
    json!({
        "ErrorResponse": {
            "Error": { "Code": code, "Message": message, "Type": fault },
            "RequestId": request_id,
        }
    })
    .to_string()
}

/// The error document.
#[must_use]
pub fn error_body(fault: &str, code: &str, message: &str, request_id: &str) -> String {
    json!({
        "Error": { "Code": code, "Message": message, "Type": fault },
        "RequestId": request_id,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use crate::wire::query_json::*;

    #[test]
    fn xmltodict_collapses_single_elements() {
        let v = json!({
            "Message": [{ "Body": "b", "Attribute": [{ "Name": "a", "Value": "1" }, { "Name": "b", "Value": "2" }], "MessageAttribute": [{ "Name": "x", "Value": { "StringValue": "s" } }] }],
        });
        assert_eq!(
            xmltodict(v),
            json!({
                "Message": { "Body": "b", "Attribute": [{ "Name": "a", "Value": "1" }, { "Name": "b", "Value": "2" }], "MessageAttribute": { "Name": "x", "Value": { "StringValue": "s" } } },
            })
        );
        assert_eq!(xmltodict(json!({})), Value::Null, "an empty element");
        let err = xmltodict_error_body("Sender", "InvalidAddress", "m", "r");
        assert_eq!(
            serde_json::from_str::<Value>(&err).expect("json"),
            json!({ "ErrorResponse": { "Error": { "Code": "InvalidAddress", "Message": "m", "Type": "Sender" }, "RequestId": "r" } })
        );
    }

    #[test]
    fn envelopes_and_errors() {
        let body = envelope("DeleteQueue", None, "r1");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json"),
            json!({ "DeleteQueueResponse": { "ResponseMetadata": { "RequestId": "r1" } } })
        );
        let err = error_body("Sender", "InvalidAction", "bad", "r2");
        assert_eq!(
            serde_json::from_str::<Value>(&err).expect("json"),
            json!({ "Error": { "Code": "InvalidAction", "Message": "bad", "Type": "Sender" }, "RequestId": "r2" })
        );
    }
}
