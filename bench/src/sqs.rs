//! SQS requests rendered for both protocols, and responses parsed only as far as the bench
//! needs (message ids, receipt handles, bodies, batch failures).

use std::fmt::Write as _;

use hyper::body::Bytes;
use serde::Deserialize;

use crate::http::{Proto, Req, Resp};

/// One received message.
#[derive(Debug, Clone)]
pub struct Msg {
    pub handle: String,
    pub body: String,
}

/// One entry of a send batch: (message group, deduplication id, body).
pub struct Entry<'a> {
    pub group: Option<&'a str>,
    pub dedup: Option<&'a str>,
    pub body: &'a str,
}

fn target(action: &str) -> &'static str {
    match action {
        "CreateQueue" => "AmazonSQS.CreateQueue",
        "DeleteQueue" => "AmazonSQS.DeleteQueue",
        "ListQueues" => "AmazonSQS.ListQueues",
        "GetQueueAttributes" => "AmazonSQS.GetQueueAttributes",
        "SendMessage" => "AmazonSQS.SendMessage",
        "SendMessageBatch" => "AmazonSQS.SendMessageBatch",
        "ReceiveMessage" => "AmazonSQS.ReceiveMessage",
        "DeleteMessage" => "AmazonSQS.DeleteMessage",
        "DeleteMessageBatch" => "AmazonSQS.DeleteMessageBatch",
        _ => "AmazonSQS.Unknown",
    }
}

/// Whether `s` needs no JSON escaping (checked 64 bytes at a time without early exits, so the
/// compiler vectorizes it: 1 MiB bodies stay cheap for the load generator).
fn json_safe(s: &str) -> bool {
    s.as_bytes().chunks(64).all(|c| {
        c.iter()
            .fold(true, |ok, &b| ok & (b >= 0x20) & (b != b'"') & (b != b'\\'))
    })
}

/// Appends `s` as a JSON string literal.
fn jstr(out: &mut String, s: &str) {
    out.push('"');
    if json_safe(s) {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        if b == b'"' || b == b'\\' || b < 0x20 {
            out.push_str(&s[start..i]);
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                _ => {
                    let _ = write!(out, "\\u{b:04x}");
                }
            }
            start = i + 1;
        }
    }
    out.push_str(&s[start..]);
    out.push('"');
}

struct Query(form_urlencoded::Serializer<'static, String>);

impl Query {
    fn new(action: &str) -> Self {
        let mut s = form_urlencoded::Serializer::new(String::new());
        s.append_pair("Action", action);
        Query(s)
    }
    fn pair(&mut self, k: &str, v: &str) -> &mut Self {
        self.0.append_pair(k, v);
        self
    }
    fn done(mut self, action: &str) -> Req {
        self.0.append_pair("Version", "2012-11-05");
        Req {
            target: target(action),
            body: Bytes::from(self.0.finish()),
        }
    }
}

fn json_req(action: &str, body: String) -> Req {
    Req {
        target: target(action),
        body: Bytes::from(body),
    }
}

/// CreateQueue with attributes.
pub fn create_queue(p: Proto, name: &str, attrs: &[(&str, String)]) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::from("{\"QueueName\":");
            jstr(&mut b, name);
            if !attrs.is_empty() {
                b.push_str(",\"Attributes\":{");
                for (i, (k, v)) in attrs.iter().enumerate() {
                    if i > 0 {
                        b.push(',');
                    }
                    jstr(&mut b, k);
                    b.push(':');
                    jstr(&mut b, v);
                }
                b.push('}');
            }
            b.push('}');
            json_req("CreateQueue", b)
        }
        Proto::Query => {
            let mut q = Query::new("CreateQueue");
            q.pair("QueueName", name);
            for (i, (k, v)) in attrs.iter().enumerate() {
                q.pair(&format!("Attribute.{}.Name", i + 1), k);
                q.pair(&format!("Attribute.{}.Value", i + 1), v);
            }
            q.done("CreateQueue")
        }
    }
}

/// A request that names only the queue (DeleteQueue).
pub fn delete_queue(p: Proto, url: &str) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::from("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push('}');
            json_req("DeleteQueue", b)
        }
        Proto::Query => {
            let mut q = Query::new("DeleteQueue");
            q.pair("QueueUrl", url);
            q.done("DeleteQueue")
        }
    }
}

/// ListQueues (the readiness probe).
pub fn list_queues(p: Proto) -> Req {
    match p {
        Proto::Json => json_req("ListQueues", "{}".into()),
        Proto::Query => Query::new("ListQueues").done("ListQueues"),
    }
}

/// GetQueueAttributes for the given names.
pub fn get_attributes(p: Proto, url: &str, names: &[&str]) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::from("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push_str(",\"AttributeNames\":[");
            for (i, n) in names.iter().enumerate() {
                if i > 0 {
                    b.push(',');
                }
                jstr(&mut b, n);
            }
            b.push_str("]}");
            json_req("GetQueueAttributes", b)
        }
        Proto::Query => {
            let mut q = Query::new("GetQueueAttributes");
            q.pair("QueueUrl", url);
            for (i, n) in names.iter().enumerate() {
                q.pair(&format!("AttributeName.{}", i + 1), n);
            }
            q.done("GetQueueAttributes")
        }
    }
}

/// SendMessage.
pub fn send(p: Proto, url: &str, e: &Entry<'_>) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::with_capacity(e.body.len() + url.len() + 96);
            b.push_str("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push_str(",\"MessageBody\":");
            jstr(&mut b, e.body);
            if let Some(g) = e.group {
                b.push_str(",\"MessageGroupId\":");
                jstr(&mut b, g);
            }
            if let Some(d) = e.dedup {
                b.push_str(",\"MessageDeduplicationId\":");
                jstr(&mut b, d);
            }
            b.push('}');
            json_req("SendMessage", b)
        }
        Proto::Query => {
            let mut q = Query::new("SendMessage");
            q.pair("QueueUrl", url).pair("MessageBody", e.body);
            if let Some(g) = e.group {
                q.pair("MessageGroupId", g);
            }
            if let Some(d) = e.dedup {
                q.pair("MessageDeduplicationId", d);
            }
            q.done("SendMessage")
        }
    }
}

/// SendMessageBatch; entry ids are `e0`, `e1`, ….
pub fn send_batch(p: Proto, url: &str, entries: &[Entry<'_>]) -> Req {
    match p {
        Proto::Json => {
            let cap = entries.iter().map(|e| e.body.len() + 96).sum::<usize>() + url.len() + 48;
            let mut b = String::with_capacity(cap);
            b.push_str("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push_str(",\"Entries\":[");
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    b.push(',');
                }
                let _ = write!(b, "{{\"Id\":\"e{i}\",\"MessageBody\":");
                jstr(&mut b, e.body);
                if let Some(g) = e.group {
                    b.push_str(",\"MessageGroupId\":");
                    jstr(&mut b, g);
                }
                if let Some(d) = e.dedup {
                    b.push_str(",\"MessageDeduplicationId\":");
                    jstr(&mut b, d);
                }
                b.push('}');
            }
            b.push_str("]}");
            json_req("SendMessageBatch", b)
        }
        Proto::Query => {
            let mut q = Query::new("SendMessageBatch");
            q.pair("QueueUrl", url);
            for (i, e) in entries.iter().enumerate() {
                let n = i + 1;
                q.pair(
                    &format!("SendMessageBatchRequestEntry.{n}.Id"),
                    &format!("e{i}"),
                );
                q.pair(
                    &format!("SendMessageBatchRequestEntry.{n}.MessageBody"),
                    e.body,
                );
                if let Some(g) = e.group {
                    q.pair(
                        &format!("SendMessageBatchRequestEntry.{n}.MessageGroupId"),
                        g,
                    );
                }
                if let Some(d) = e.dedup {
                    q.pair(
                        &format!("SendMessageBatchRequestEntry.{n}.MessageDeduplicationId"),
                        d,
                    );
                }
            }
            q.done("SendMessageBatch")
        }
    }
}

/// ReceiveMessage with MaxNumberOfMessages and, optionally, WaitTimeSeconds.
pub fn receive(p: Proto, url: &str, max: usize, wait: Option<u32>) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::with_capacity(url.len() + 80);
            b.push_str("{\"QueueUrl\":");
            jstr(&mut b, url);
            let _ = write!(b, ",\"MaxNumberOfMessages\":{max}");
            if let Some(w) = wait {
                let _ = write!(b, ",\"WaitTimeSeconds\":{w}");
            }
            b.push('}');
            json_req("ReceiveMessage", b)
        }
        Proto::Query => {
            let mut q = Query::new("ReceiveMessage");
            q.pair("QueueUrl", url)
                .pair("MaxNumberOfMessages", &max.to_string());
            if let Some(w) = wait {
                q.pair("WaitTimeSeconds", &w.to_string());
            }
            q.done("ReceiveMessage")
        }
    }
}

/// DeleteMessage.
pub fn delete(p: Proto, url: &str, handle: &str) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::with_capacity(url.len() + handle.len() + 48);
            b.push_str("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push_str(",\"ReceiptHandle\":");
            jstr(&mut b, handle);
            b.push('}');
            json_req("DeleteMessage", b)
        }
        Proto::Query => {
            let mut q = Query::new("DeleteMessage");
            q.pair("QueueUrl", url).pair("ReceiptHandle", handle);
            q.done("DeleteMessage")
        }
    }
}

/// DeleteMessageBatch; entry ids are `d0`, `d1`, ….
pub fn delete_batch(p: Proto, url: &str, handles: &[&str]) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::with_capacity(url.len() + handles.len() * 200 + 48);
            b.push_str("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push_str(",\"Entries\":[");
            for (i, h) in handles.iter().enumerate() {
                if i > 0 {
                    b.push(',');
                }
                let _ = write!(b, "{{\"Id\":\"d{i}\",\"ReceiptHandle\":");
                jstr(&mut b, h);
                b.push('}');
            }
            b.push_str("]}");
            json_req("DeleteMessageBatch", b)
        }
        Proto::Query => {
            let mut q = Query::new("DeleteMessageBatch");
            q.pair("QueueUrl", url);
            for (i, h) in handles.iter().enumerate() {
                let n = i + 1;
                q.pair(
                    &format!("DeleteMessageBatchRequestEntry.{n}.Id"),
                    &format!("d{i}"),
                );
                q.pair(
                    &format!("DeleteMessageBatchRequestEntry.{n}.ReceiptHandle"),
                    h,
                );
            }
            q.done("DeleteMessageBatch")
        }
    }
}

// ---------------------------------------------------------------------------------------
// Responses

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

// ---------------------------------------------------------------------------------------
// Message bodies: `<tag:16 hex>.<send time µs:12 hex>.` then filler to the wanted length.

const FILLER: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A body carrying `tag` and the send time, `len` bytes long (at least 30).
pub fn body(tag: u64, sent_us: u64, len: usize) -> String {
    static FILL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let fill = FILL.get_or_init(|| {
        FILLER
            .iter()
            .cycle()
            .take((1 << 20) + 64)
            .map(|&b| char::from(b))
            .collect()
    });
    let mut s = String::with_capacity(len.max(30));
    let _ = write!(s, "{tag:016x}.{:012x}.", sent_us & 0xffff_ffff_ffff);
    while s.len() < len {
        let n = (len - s.len()).min(fill.len());
        s.push_str(&fill[..n]);
    }
    s
}

/// The tag and send time of a body made by [`body`].
pub fn parse_body(b: &str) -> Option<(u64, u64)> {
    let tag = u64::from_str_radix(b.get(0..16)?, 16).ok()?;
    let ts = u64::from_str_radix(b.get(17..29)?, 16).ok()?;
    Some((tag, ts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_round_trip() {
        let b = body(0xdead_beef, 123_456, 200);
        assert_eq!(b.len(), 200);
        assert_eq!(parse_body(&b), Some((0xdead_beef, 123_456)));
        let big = body(7, 9, 1 << 20);
        assert_eq!(big.len(), 1 << 20);
        assert_eq!(parse_body(&big), Some((7, 9)));
    }

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

    #[test]
    fn json_escaping() {
        let mut s = String::new();
        jstr(&mut s, "a\"b\\c\n");
        assert_eq!(s, "\"a\\\"b\\\\c\\u000a\"");
    }
}
