//! SQS responses of both protocols, parsed only as far as the bench needs: queue URLs,
//! message ids, receipt handles, bodies, batch failures, numeric attributes.

use serde::Deserialize;

use super::Msg;
use crate::http::{Proto, Resp};

/// A short description of an unexpected response, for violation reports.
pub fn describe(r: &Resp) -> String {
    let text = String::from_utf8_lossy(&r.body);
    let text: String = text.chars().take(300).collect();
    format!("HTTP {}: {}", r.status, text.replace('\n', " "))
}

fn utf8(r: &Resp) -> Result<&str, String> {
    if r.status != 200 {
        return Err(describe(r));
    }
    std::str::from_utf8(&r.body).map_err(|_| "response is not UTF-8".to_owned())
}

/// The text of the first `<name>…</name>` in `xml`.
fn xml_tag<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&close)?;
    Some(&xml[start..start + len])
}

/// Every `<name>…</name>` block in `xml`.
fn xml_blocks<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let start = i + open.len();
        let Some(len) = rest[start..].find(&close) else {
            break;
        };
        out.push(&rest[start..start + len]);
        rest = &rest[start + len + close.len()..];
    }
    out
}

fn xml_unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#xD;", "\r")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JQueueUrl {
    queue_url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JSend {
    message_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JMsg {
    receipt_handle: String,
    body: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JReceive {
    #[serde(default)]
    messages: Vec<JMsg>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JFailed {
    id: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JBatch {
    #[serde(default)]
    successful: Vec<serde_json::Value>,
    #[serde(default)]
    failed: Vec<JFailed>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JAttrs {
    #[serde(default)]
    attributes: std::collections::HashMap<String, String>,
}

/// The QueueUrl of a CreateQueue response.
pub fn parse_queue_url(p: Proto, r: &Resp) -> Result<String, String> {
    let text = utf8(r)?;
    match p {
        Proto::Json => serde_json::from_str::<JQueueUrl>(text)
            .map(|v| v.queue_url)
            .map_err(|e| format!("CreateQueue response: {e}")),
        Proto::Query => xml_tag(text, "QueueUrl")
            .map(xml_unescape)
            .ok_or_else(|| "CreateQueue response has no QueueUrl".into()),
    }
}

/// Checks a SendMessage response: 200 with a MessageId.
pub fn check_send(p: Proto, r: &Resp) -> Result<(), String> {
    let text = utf8(r)?;
    let ok = match p {
        Proto::Json => serde_json::from_str::<JSend>(text).is_ok_and(|s| !s.message_id.is_empty()),
        Proto::Query => xml_tag(text, "MessageId").is_some_and(|s| !s.is_empty()),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "SendMessage response without MessageId: {}",
            describe(r)
        ))
    }
}

/// Checks a batch response: how many entries succeeded; every failure is an error.
pub fn check_batch(p: Proto, r: &Resp, want: usize) -> Result<usize, String> {
    let text = utf8(r)?;
    let (ok, failed): (usize, Vec<String>) = match p {
        Proto::Json => {
            let b: JBatch =
                serde_json::from_str(text).map_err(|e| format!("batch response: {e}"))?;
            (
                b.successful.len(),
                b.failed
                    .iter()
                    .map(|f| format!("{}: {} {}", f.id, f.code, f.message))
                    .collect(),
            )
        }
        Proto::Query => {
            let ok = xml_blocks(text, "SendMessageBatchResultEntry").len()
                + xml_blocks(text, "DeleteMessageBatchResultEntry").len();
            let failed = xml_blocks(text, "BatchResultErrorEntry")
                .iter()
                .map(|b| {
                    format!(
                        "{}: {}",
                        xml_tag(b, "Id").unwrap_or("?"),
                        xml_tag(b, "Code").unwrap_or("?")
                    )
                })
                .collect();
            (ok, failed)
        }
    };
    if !failed.is_empty() {
        return Err(format!("batch entries failed: {}", failed.join("; ")));
    }
    if ok != want {
        return Err(format!("batch answered {ok} of {want} entries"));
    }
    Ok(ok)
}

/// The messages of a ReceiveMessage response.
pub fn parse_receive(p: Proto, r: &Resp) -> Result<Vec<Msg>, String> {
    let text = utf8(r)?;
    match p {
        Proto::Json => {
            let v: JReceive =
                serde_json::from_str(text).map_err(|e| format!("ReceiveMessage response: {e}"))?;
            Ok(v.messages
                .into_iter()
                .map(|m| Msg {
                    handle: m.receipt_handle,
                    body: m.body,
                })
                .collect())
        }
        Proto::Query => xml_blocks(text, "Message")
            .into_iter()
            .map(|b| {
                let handle = xml_tag(b, "ReceiptHandle")
                    .ok_or_else(|| "message without ReceiptHandle".to_owned())?;
                let body = xml_tag(b, "Body").ok_or_else(|| "message without Body".to_owned())?;
                Ok(Msg {
                    handle: xml_unescape(handle),
                    body: xml_unescape(body),
                })
            })
            .collect(),
    }
}

/// One attribute of a GetQueueAttributes response, as a number.
pub fn parse_attribute(p: Proto, r: &Resp, name: &str) -> Result<u64, String> {
    let text = utf8(r)?;
    let v = match p {
        Proto::Json => serde_json::from_str::<JAttrs>(text)
            .map_err(|e| format!("GetQueueAttributes response: {e}"))?
            .attributes
            .get(name)
            .cloned(),
        Proto::Query => xml_blocks(text, "Attribute")
            .into_iter()
            .find(|b| xml_tag(b, "Name") == Some(name))
            .and_then(|b| xml_tag(b, "Value"))
            .map(str::to_owned),
    };
    v.ok_or_else(|| format!("no attribute {name}"))?
        .parse()
        .map_err(|_| format!("attribute {name} is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::Bytes;

    #[test]
    fn xml_parsing() {
        let x = "<R><Message><MessageId>a</MessageId><ReceiptHandle>h+/=</ReceiptHandle>\
                 <Body>x&amp;y</Body></Message><Message><ReceiptHandle>k</ReceiptHandle>\
                 <Body>z</Body></Message></R>";
        let r = Resp {
            status: 200,
            body: Bytes::from(x),
        };
        let m = parse_receive(Proto::Query, &r).unwrap_or_default();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].handle, "h+/=");
        assert_eq!(m[0].body, "x&y");
    }
}
