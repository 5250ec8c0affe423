//! Wire layer: one encoder per result, written once against the [`Out`] writer trait, which
//! the XML and JSON writers implement.
//!
//! Omission rules (§3.2, G-2, G-3, G-8): absent optional members and empty lists and maps are
//! never written, in either protocol.

use crate::command::*;
use crate::error::Fault;

/// A sink for result members. Names are given in both spellings where the protocols differ:
/// `json` is the model member name, `xml` the flattened element name.
pub trait Out {
    /// A string member.
    fn string(&mut self, name: &str, v: &str);
    /// An integer member (a JSON number).
    fn int(&mut self, name: &str, v: i64);
    /// A boolean member.
    fn boolean(&mut self, name: &str, v: bool);
    /// A list of strings; nothing is written when empty.
    fn string_list(&mut self, json: &str, xml: &str, items: &[String]);
    /// A string map; XML writes `<xml><key>k</key><value>v</value></xml>` per entry.
    fn string_map(&mut self, json: &str, xml: &str, key: &str, value: &str, items: &Pairs);
    /// A list of structures; nothing is written when `n == 0`.
    fn struct_list(
        &mut self,
        json: &str,
        xml: &str,
        n: usize,
        item: &mut dyn FnMut(usize, &mut dyn Out),
    );
    /// A map of message attributes; nothing is written when empty.
    fn message_attributes(&mut self, json: &str, xml: &str, attrs: &MessageAttributes);
}

fn opt(out: &mut dyn Out, name: &str, v: Option<&String>) {
    if let Some(v) = v {
        out.string(name, v);
    }
}

fn failed(out: &mut dyn Out, failed: &[BatchResultErrorEntry]) {
    out.struct_list(
        "Failed",
        "BatchResultErrorEntry",
        failed.len(),
        &mut |i, o| {
            let f = &failed[i];
            o.string("Id", &f.id);
            let spec = f.code.spec();
            o.boolean("SenderFault", spec.fault == Fault::Sender);
            o.string("Code", spec.legacy_code);
            o.string("Message", &f.message);
        },
    );
}

fn ids(out: &mut dyn Out, xml: &str, ids: &[String]) {
    out.struct_list("Successful", xml, ids.len(), &mut |i, o| {
        o.string("Id", &ids[i])
    });
}

fn message(o: &mut dyn Out, m: &Message) {
    o.string("MessageId", &m.message_id);
    o.string("ReceiptHandle", &m.receipt_handle);
    o.string("MD5OfBody", &m.md5_of_body);
    o.string("Body", &m.body);
    o.string_map("Attributes", "Attribute", "Name", "Value", &m.attributes);
    opt(
        o,
        "MD5OfMessageAttributes",
        m.md5_of_message_attributes.as_ref(),
    );
    o.message_attributes(
        "MessageAttributes",
        "MessageAttribute",
        &m.message_attributes,
    );
}

/// Writes the members of a successful reply.
pub fn encode_reply(reply: &Reply, out: &mut dyn Out) {
    match reply {
        Reply::CreateQueue(r) => out.string("QueueUrl", &r.queue_url),
        Reply::GetQueueUrl(r) => out.string("QueueUrl", &r.queue_url),
        Reply::ListQueues(r) => {
            out.string_list("QueueUrls", "QueueUrl", &r.queue_urls);
            opt(out, "NextToken", r.next_token.as_ref());
        }
        Reply::GetQueueAttributes(r) => {
            out.string_map("Attributes", "Attribute", "Name", "Value", &r.attributes);
        }
        Reply::ListQueueTags(r) => out.string_map("Tags", "Tag", "Key", "Value", &r.tags),
        Reply::SendMessage(r) => {
            out.string("MD5OfMessageBody", &r.md5_of_message_body);
            opt(
                out,
                "MD5OfMessageAttributes",
                r.md5_of_message_attributes.as_ref(),
            );
            opt(
                out,
                "MD5OfMessageSystemAttributes",
                r.md5_of_message_system_attributes.as_ref(),
            );
            out.string("MessageId", &r.message_id);
            opt(out, "SequenceNumber", r.sequence_number.as_ref());
        }
        Reply::ReceiveMessage(r) => {
            out.struct_list("Messages", "Message", r.messages.len(), &mut |i, o| {
                message(o, &r.messages[i]);
            });
        }
        Reply::SendMessageBatch(r) => {
            out.struct_list(
                "Successful",
                "SendMessageBatchResultEntry",
                r.successful.len(),
                &mut |i, o| {
                    let s = &r.successful[i];
                    o.string("Id", &s.id);
                    o.string("MessageId", &s.message_id);
                    o.string("MD5OfMessageBody", &s.md5_of_message_body);
                    opt(
                        o,
                        "MD5OfMessageAttributes",
                        s.md5_of_message_attributes.as_ref(),
                    );
                    opt(
                        o,
                        "MD5OfMessageSystemAttributes",
                        s.md5_of_message_system_attributes.as_ref(),
                    );
                    opt(o, "SequenceNumber", s.sequence_number.as_ref());
                },
            );
            failed(out, &r.failed);
        }
        Reply::DeleteMessageBatch(r) => {
            ids(out, "DeleteMessageBatchResultEntry", &r.successful);
            failed(out, &r.failed);
        }
        Reply::ChangeMessageVisibilityBatch(r) => {
            ids(
                out,
                "ChangeMessageVisibilityBatchResultEntry",
                &r.successful,
            );
            failed(out, &r.failed);
        }
        Reply::ListDeadLetterSourceQueues(r) => {
            out.string_list("queueUrls", "QueueUrl", &r.queue_urls);
            opt(out, "NextToken", r.next_token.as_ref());
        }
        Reply::StartMessageMoveTask(r) => out.string("TaskHandle", &r.task_handle),
        Reply::CancelMessageMoveTask(r) => {
            out.int(
                "ApproximateNumberOfMessagesMoved",
                r.approximate_number_of_messages_moved,
            );
        }
        Reply::ListMessageMoveTasks(r) => {
            out.struct_list(
                "Results",
                "ListMessageMoveTasksResultEntry",
                r.results.len(),
                &mut |i, o| {
                    let t = &r.results[i];
                    opt(o, "TaskHandle", t.task_handle.as_ref());
                    o.string("Status", &t.status);
                    o.string("SourceArn", &t.source_arn);
                    opt(o, "DestinationArn", t.destination_arn.as_ref());
                    if let Some(n) = t.max_number_of_messages_per_second {
                        o.int("MaxNumberOfMessagesPerSecond", n);
                    }
                    o.int(
                        "ApproximateNumberOfMessagesMoved",
                        t.approximate_number_of_messages_moved,
                    );
                    if let Some(n) = t.approximate_number_of_messages_to_move {
                        o.int("ApproximateNumberOfMessagesToMove", n);
                    }
                    opt(o, "FailureReason", t.failure_reason.as_ref());
                    o.int("StartedTimestamp", t.started_timestamp);
                },
            );
        }
        Reply::AddPermission(())
        | Reply::ChangeMessageVisibility(())
        | Reply::DeleteMessage(())
        | Reply::DeleteQueue(())
        | Reply::PurgeQueue(())
        | Reply::RemovePermission(())
        | Reply::SetQueueAttributes(())
        | Reply::TagQueue(())
        | Reply::UntagQueue(()) => {}
    }
}
