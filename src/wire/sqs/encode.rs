//! Wire layer, SQS: one encoder per result, written once against the [`Out`] writer trait,
//! which the XML and JSON writers implement.
//!
//! Omission rules (§3.2, G-2, G-3, G-8): absent optional members and empty lists and maps are
//! never written, in either protocol.

use crate::command::*;
use crate::error::Fault;
use crate::wire::out::Out;

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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::command::*;
    use crate::wire::json::JsonOut;
    use crate::wire::query_json::{Dialect, QueryJsonOut};
    use crate::wire::sqs::encode::*;

    #[test]
    fn a_received_message_is_the_text_of_its_map_in_member_order() {
        let mut attrs = MessageAttributes::new();
        attrs.insert("s".into(), MessageAttributeValue::string("String", "v\n"));
        let mut lists = MessageAttributeValue::string("String.x", "w");
        lists.string_list_values = vec!["a".into(), "b".into()];
        lists.binary_list_values = vec![vec![1], vec![]];
        attrs.insert("l".into(), lists);
        let message = Message {
            message_id: "id".into(),
            receipt_handle: "rh".into(),
            md5_of_body: "m".into(),
            body: "say \"hi\"\r\n\u{1}".into(),
            attributes: vec![
                ("SentTimestamp".into(), "1".into()),
                ("ApproximateReceiveCount".into(), "2".into()),
                ("SentTimestamp".into(), "3".into()),
            ],
            md5_of_message_attributes: Some("ma".into()),
            message_attributes: attrs,
        };
        let reply = Reply::ReceiveMessage(ReceiveMessageResult {
            messages: vec![message.clone(), Message::default()],
        });
        let mut out = JsonOut::default();
        encode_reply(&reply, &mut out);
        let text = out.finish();
        let want = json!({"Messages": [
            {
                "MessageId": "id", "ReceiptHandle": "rh", "MD5OfBody": "m",
                "Body": "say \"hi\"\r\n\u{1}",
                "Attributes": {"SentTimestamp": "3", "ApproximateReceiveCount": "2"},
                "MD5OfMessageAttributes": "ma",
                "MessageAttributes": {
                    "l": {"StringValue": "w", "StringListValues": ["a", "b"],
                          "BinaryListValues": ["AQ==", ""], "DataType": "String.x"},
                    "s": {"StringValue": "v\n", "DataType": "String"},
                },
            },
            {"MessageId": "", "ReceiptHandle": "", "MD5OfBody": "", "Body": ""},
        ]});
        assert_eq!(text, want.to_string());
        assert_eq!(serde_json::from_str::<Value>(&text).expect("parses"), want);
    }

    #[test]
    fn aws_dialect_names_lists_lower_camel_and_maps_as_name_value_lists() {
        let mut out = QueryJsonOut::new(Dialect::Aws);
        encode_reply(
            &Reply::ListQueues(ListQueuesResult {
                queue_urls: vec!["http://h/1/a".into()],
                next_token: None,
            }),
            &mut out,
        );
        assert_eq!(
            Value::Object(out.obj),
            json!({ "queueUrls": ["http://h/1/a"] })
        );
        let mut out = QueryJsonOut::new(Dialect::Aws);
        encode_reply(
            &Reply::GetQueueAttributes(GetQueueAttributesResult {
                attributes: vec![("DelaySeconds".into(), "0".into())],
            }),
            &mut out,
        );
        assert_eq!(
            Value::Object(out.obj),
            json!({ "Attributes": [{ "Name": "DelaySeconds", "Value": "0" }] })
        );
    }
}
