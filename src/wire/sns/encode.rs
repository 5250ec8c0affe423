//! Wire layer, SNS: one encoder per result, writing SNS's XML members (docs/sns.md §1.3):
//! wrapped lists of `<member>`, attribute maps of `<entry><key/><value/></entry>`, and empty
//! lists as empty elements (AWS sends `<Subscriptions/>`, `<Failed/>`).

use crate::command::Pairs;
use crate::command::sns::*;
use crate::wire::xml::escape_into;

fn element(buf: &mut String, name: &str, text: &str) {
    buf.push('<');
    buf.push_str(name);
    buf.push('>');
    escape_into(buf, text);
    buf.push_str("</");
    buf.push_str(name);
    buf.push('>');
}

/// `<name>` + members + `</name>`, or `<name/>` when `n == 0`.
fn wrapped(buf: &mut String, name: &str, n: usize, mut item: impl FnMut(&mut String, usize)) {
    if n == 0 {
        buf.push('<');
        buf.push_str(name);
        buf.push_str("/>");
        return;
    }
    buf.push('<');
    buf.push_str(name);
    buf.push('>');
    for i in 0..n {
        buf.push_str("<member>");
        item(buf, i);
        buf.push_str("</member>");
    }
    buf.push_str("</");
    buf.push_str(name);
    buf.push('>');
}

fn attributes(buf: &mut String, attrs: &Pairs) {
    buf.push_str("<Attributes>");
    for (k, v) in attrs {
        buf.push_str("<entry>");
        element(buf, "key", k);
        element(buf, "value", v);
        buf.push_str("</entry>");
    }
    buf.push_str("</Attributes>");
}

fn subscriptions(buf: &mut String, r: &ListSubscriptionsResult) {
    wrapped(buf, "Subscriptions", r.subscriptions.len(), |buf, i| {
        let s = &r.subscriptions[i];
        element(buf, "SubscriptionArn", &s.subscription_arn);
        element(buf, "Owner", &s.owner);
        element(buf, "Protocol", &s.protocol);
        element(buf, "Endpoint", &s.endpoint);
        element(buf, "TopicArn", &s.topic_arn);
    });
    if let Some(t) = &r.next_token {
        element(buf, "NextToken", t);
    }
}

/// Writes `reply`'s members into the result element being written in `buf`.
pub fn encode_reply(reply: &SnsReply, buf: &mut String) {
    match reply {
        SnsReply::CreateTopic(r) => element(buf, "TopicArn", &r.topic_arn),
        SnsReply::Subscribe(r) => element(buf, "SubscriptionArn", &r.subscription_arn),
        SnsReply::ConfirmSubscription(r) => element(buf, "SubscriptionArn", &r.subscription_arn),
        SnsReply::GetTopicAttributes(r) => attributes(buf, &r.attributes),
        SnsReply::GetSubscriptionAttributes(r) => attributes(buf, &r.attributes),
        SnsReply::ListTopics(r) => {
            wrapped(buf, "Topics", r.topics.len(), |buf, i| {
                element(buf, "TopicArn", &r.topics[i]);
            });
            if let Some(t) = &r.next_token {
                element(buf, "NextToken", t);
            }
        }
        SnsReply::ListSubscriptions(r) | SnsReply::ListSubscriptionsByTopic(r) => {
            subscriptions(buf, r);
        }
        SnsReply::Publish(r) => {
            element(buf, "MessageId", &r.message_id);
            if let Some(n) = &r.sequence_number {
                element(buf, "SequenceNumber", n);
            }
        }
        SnsReply::PublishBatch(r) => {
            wrapped(buf, "Successful", r.successful.len(), |buf, i| {
                let s = &r.successful[i];
                element(buf, "Id", &s.id);
                element(buf, "MessageId", &s.message_id);
                if let Some(n) = &s.sequence_number {
                    element(buf, "SequenceNumber", n);
                }
            });
            wrapped(buf, "Failed", r.failed.len(), |buf, i| {
                let f = &r.failed[i];
                element(buf, "Id", &f.id);
                element(buf, "Code", &f.code);
                element(buf, "Message", &f.message);
                element(
                    buf,
                    "SenderFault",
                    if f.sender_fault { "true" } else { "false" },
                );
            });
        }
        SnsReply::ListTagsForResource(r) => {
            wrapped(buf, "Tags", r.tags.len(), |buf, i| {
                element(buf, "Key", &r.tags[i].0);
                element(buf, "Value", &r.tags[i].1);
            });
        }
        SnsReply::TagResource(_)
        | SnsReply::UntagResource(_)
        | SnsReply::AddPermission(())
        | SnsReply::RemovePermission(())
        | SnsReply::DeleteTopic(())
        | SnsReply::SetTopicAttributes(())
        | SnsReply::SetSubscriptionAttributes(())
        | SnsReply::Unsubscribe(()) => {}
    }
}
