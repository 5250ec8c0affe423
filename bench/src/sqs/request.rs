//! SQS requests, rendered for AWS JSON 1.0 and AWS Query (docs/protocol.md §2).

use std::fmt::Write as _;

use hyper::body::Bytes;

use super::Entry;
use crate::http::{Proto, Req};

fn target(action: &str) -> &'static str {
    match action {
        "CreateQueue" => "AmazonSQS.CreateQueue",
        "DeleteQueue" => "AmazonSQS.DeleteQueue",
        "PurgeQueue" => "AmazonSQS.PurgeQueue",
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

/// A request that names only the queue.
fn queue_only(p: Proto, action: &str, url: &str) -> Req {
    match p {
        Proto::Json => {
            let mut b = String::from("{\"QueueUrl\":");
            jstr(&mut b, url);
            b.push('}');
            json_req(action, b)
        }
        Proto::Query => {
            let mut q = Query::new(action);
            q.pair("QueueUrl", url);
            q.done(action)
        }
    }
}

/// DeleteQueue.
pub fn delete_queue(p: Proto, url: &str) -> Req {
    queue_only(p, "DeleteQueue", url)
}

/// PurgeQueue.
pub fn purge_queue(p: Proto, url: &str) -> Req {
    queue_only(p, "PurgeQueue", url)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escaping() {
        let mut s = String::new();
        jstr(&mut s, "a\"b\\c\n");
        assert_eq!(s, "\"a\\\"b\\\\c\\u000a\"");
    }

    #[test]
    fn purge_queue_names_the_queue_in_both_protocols() {
        let j = purge_queue(Proto::Json, "http://h/1/q");
        assert_eq!(j.target, "AmazonSQS.PurgeQueue");
        assert_eq!(&j.body[..], br#"{"QueueUrl":"http://h/1/q"}"#);
        let q = purge_queue(Proto::Query, "http://h/1/q");
        assert_eq!(
            &q.body[..],
            b"Action=PurgeQueue&QueueUrl=http%3A%2F%2Fh%2F1%2Fq&Version=2012-11-05"
        );
    }
}
