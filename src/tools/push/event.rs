//! Tools layer: the Lambda SQS event a push target receives, and how its answer is read.
//!
//! Records have Lambda's shape exactly: `messageId`, `receiptHandle`, `body`, `attributes` (the
//! SQS system attributes by their API names), `messageAttributes` in lower camel case,
//! `md5OfBody`, `eventSource`, `eventSourceARN`, `awsRegion`. An answer is a function error when
//! the invoke API says so (`X-Amz-Function-Error`) or when its payload is the error object the
//! Runtime Interface Emulator answers for a failed function (`errorMessage`/`errorType`); with
//! `report_batch_item_failures` a `batchItemFailures` list names the messages to keep, and an
//! invalid one fails the whole batch, as Lambda does.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::command::Message;

/// One record of the event.
#[must_use]
pub fn record(m: &Message, queue_arn: &str, region: &str) -> Value {
    let attributes: Map<String, Value> = m
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let message_attributes: Map<String, Value> = m
        .message_attributes
        .iter()
        .map(|(name, v)| {
            let mut a = Map::new();
            if let Some(s) = &v.string_value {
                a.insert("stringValue".into(), json!(s));
            }
            if let Some(b) = &v.binary_value {
                a.insert("binaryValue".into(), json!(STANDARD.encode(b)));
            }
            a.insert("stringListValues".into(), json!(v.string_list_values));
            let binaries: Vec<String> = v
                .binary_list_values
                .iter()
                .map(|b| STANDARD.encode(b))
                .collect();
            a.insert("binaryListValues".into(), json!(binaries));
            a.insert("dataType".into(), json!(v.data_type));
            (name.clone(), Value::Object(a))
        })
        .collect();
    json!({
        "messageId": m.message_id,
        "receiptHandle": m.receipt_handle,
        "body": m.body,
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": m.md5_of_body,
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    })
}

/// The event around its records.
#[must_use]
pub fn event(records: Vec<Value>) -> Vec<u8> {
    json!({ "Records": records }).to_string().into_bytes()
}

/// What a handler answered, once it answered at all.
#[derive(Debug, Default)]
pub struct Answer {
    /// `X-Amz-Function-Error`, when the invoke API set it.
    pub function_error: Option<String>,
    /// The payload (HTTP body, or a command's standard output).
    pub payload: Vec<u8>,
}

/// How an invocation ended, for the messages of its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every message is done: delete them all.
    Success,
    /// These message ids failed (`batchItemFailures`): delete all others.
    Partial(Vec<String>),
    /// The whole batch failed: leave every message to become visible again.
    Failure(String),
}

/// The payload as JSON: all of it, or else its last non-empty line (a command may log before
/// printing its result). `None` when neither parses.
fn payload_json(payload: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(payload);
    serde_json::from_str(&text).ok().or_else(|| {
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str(l).ok())
    })
}

fn short(s: &str) -> String {
    const MAX: usize = 300;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The text of a function error payload (`errorType: errorMessage`), when it is one.
fn function_error(json: Option<&Value>) -> Option<String> {
    let obj = json?.as_object()?;
    if obj.contains_key("batchItemFailures") {
        return None;
    }
    let kind = obj.get("errorType").and_then(Value::as_str);
    let message = obj.get("errorMessage").and_then(Value::as_str);
    match (kind, message) {
        (None, None) => None,
        (Some(k), Some(m)) => Some(short(&format!("{k}: {m}"))),
        (k, m) => Some(short(k.or(m).unwrap_or_default())),
    }
}

/// Reads an answer for a batch of `ids`.
#[must_use]
pub fn verdict(answer: &Answer, ids: &HashSet<&str>, report_item_failures: bool) -> Verdict {
    let text = String::from_utf8_lossy(&answer.payload);
    let json = payload_json(&answer.payload);
    if let Some(kind) = &answer.function_error {
        let detail = function_error(json.as_ref()).unwrap_or_else(|| short(text.trim()));
        return Verdict::Failure(format!("function error ({kind}): {detail}"));
    }
    if let Some(detail) = function_error(json.as_ref()) {
        return Verdict::Failure(format!("function error: {detail}"));
    }
    if !report_item_failures || text.trim().is_empty() {
        return Verdict::Success;
    }
    let invalid = |why: &str| Verdict::Failure(format!("invalid batchItemFailures answer: {why}"));
    let failures = match json {
        None => return invalid("not JSON"),
        Some(Value::Null) => return Verdict::Success,
        Some(Value::Object(mut obj)) => match obj.remove("batchItemFailures") {
            None | Some(Value::Null) => return Verdict::Success,
            Some(Value::Array(items)) => items,
            Some(_) => return invalid("batchItemFailures is not a list"),
        },
        Some(_) => return invalid("expected an object"),
    };
    let mut failed = Vec::new();
    for item in &failures {
        match item.get("itemIdentifier") {
            Some(Value::String(id)) if ids.contains(id.as_str()) => {
                if !failed.contains(id) {
                    failed.push(id.clone());
                }
            }
            Some(Value::String(id)) if id.is_empty() => return invalid("empty itemIdentifier"),
            Some(Value::String(id)) => {
                return invalid(&format!(
                    "itemIdentifier {id:?} is not a message of the batch"
                ));
            }
            _ => return invalid("an entry has no itemIdentifier string"),
        }
    }
    if failed.is_empty() {
        Verdict::Success
    } else {
        Verdict::Partial(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::MessageAttributeValue;

    fn answer(payload: &str) -> Answer {
        Answer {
            function_error: None,
            payload: payload.as_bytes().to_vec(),
        }
    }

    #[test]
    fn records_have_lambdas_shape() {
        let mut m = Message {
            message_id: "id-1".into(),
            receipt_handle: "rh".into(),
            md5_of_body: "md5".into(),
            body: "hello".into(),
            attributes: vec![("ApproximateReceiveCount".into(), "1".into())],
            ..Message::default()
        };
        m.message_attributes
            .insert("s".into(), MessageAttributeValue::string("String", "v"));
        m.message_attributes.insert(
            "b".into(),
            MessageAttributeValue::binary("Binary", b"\x01\x02"),
        );
        let r = record(&m, "arn:aws:sqs:us-east-1:000000000000:q", "us-east-1");
        assert_eq!(r["messageId"], "id-1");
        assert_eq!(r["attributes"]["ApproximateReceiveCount"], "1");
        assert_eq!(
            r["messageAttributes"]["s"],
            json!({ "stringValue": "v", "stringListValues": [], "binaryListValues": [], "dataType": "String" })
        );
        assert_eq!(r["messageAttributes"]["b"]["binaryValue"], "AQI=");
        assert_eq!(r["eventSource"], "aws:sqs");
        assert_eq!(r["awsRegion"], "us-east-1");
    }

    #[test]
    fn answers_and_batch_item_failures() {
        let ids: HashSet<&str> = ["a", "b"].into_iter().collect();
        let v = |p: &str| verdict(&answer(p), &ids, true);
        assert_eq!(v(""), Verdict::Success);
        assert_eq!(v("null"), Verdict::Success);
        assert_eq!(v("{}"), Verdict::Success);
        assert_eq!(v(r#"{"batchItemFailures":[]}"#), Verdict::Success);
        assert_eq!(
            v(r#"{"batchItemFailures":[{"itemIdentifier":"b"},{"itemIdentifier":"b"}]}"#),
            Verdict::Partial(vec!["b".into()])
        );
        assert_eq!(
            v("log line\n{\"batchItemFailures\":[{\"itemIdentifier\":\"a\"}]}\n"),
            Verdict::Partial(vec!["a".into()])
        );
        for bad in [
            "not json",
            r#"{"batchItemFailures":[{"itemIdentifier":"zz"}]}"#,
            r#"{"batchItemFailures":[{"itemIdentifier":""}]}"#,
            r#"{"batchItemFailures":[{"id":"a"}]}"#,
            r#"{"batchItemFailures":"a"}"#,
            r#""ok""#,
        ] {
            assert!(matches!(v(bad), Verdict::Failure(_)), "{bad}");
        }
        assert_eq!(verdict(&answer("not json"), &ids, false), Verdict::Success);
        let rie = r#"{"errorMessage":"boom","errorType":"ValueError","stackTrace":[]}"#;
        assert_eq!(
            verdict(&answer(rie), &ids, false),
            Verdict::Failure("function error: ValueError: boom".into())
        );
        let header = Answer {
            function_error: Some("Unhandled".into()),
            payload: b"oops".to_vec(),
        };
        assert_eq!(
            verdict(&header, &ids, true),
            Verdict::Failure("function error (Unhandled): oops".into())
        );
    }
}
