//! Wire layer, SQS: how SQS's Query protocol numbers list, map and entry members (§2.1):
//! `Attribute.N.Name` / `.Value`, `Tag.N.Key`, `AttributeName.N`, `<Action>RequestEntry.N.`.
//!
//! The table [`QueryParams`](crate::wire::params::QueryParams) reads SQS requests with; a
//! member a decoder asks for that is not here is numbered under its own name.

use crate::wire::params::Flat;

/// How `member` of a request to `action` is numbered (§2.1 table).
#[must_use]
pub fn flat_name<'n>(member: &'n str, action: &'n str) -> Flat<'n> {
    let (name, key) = match member {
        "Attributes" => (["Attribute", ""], "Name"),
        "tags" | "Tags" => (["Tag", ""], "Key"),
        "AttributeNames" | "MessageSystemAttributeNames" => (["AttributeName", ""], "Name"),
        "MessageAttributeNames" => (["MessageAttributeName", ""], "Name"),
        "TagKeys" => (["TagKey", ""], "Name"),
        "AWSAccountIds" => (["AWSAccountId", ""], "Name"),
        "Actions" => (["ActionName", ""], "Name"),
        "MessageAttributes" => (["MessageAttribute", ""], "Name"),
        "MessageSystemAttributes" => (["MessageSystemAttribute", ""], "Name"),
        "Entries" => ([action, "RequestEntry"], "Name"),
        other => ([other, ""], "Name"),
    };
    Flat {
        name,
        key,
        value: "Value",
    }
}

#[cfg(test)]
mod tests {
    use crate::command::MessageAttributeValue;
    use crate::wire::form::Form;
    use crate::wire::params::{Params, QueryParams};
    use crate::wire::sqs::names::*;

    #[test]
    fn an_unindexed_map_entry_is_read() {
        let fields: Form<'_> = [
            ("Attribute.Name", "VisibilityTimeout"),
            ("Attribute.Value", "7"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "SetQueueAttributes", flat_name);
        assert_eq!(
            p.string_map("Attributes").expect("decodes"),
            vec![("VisibilityTimeout".to_owned(), "7".to_owned())]
        );
    }

    #[test]
    fn tag_queue_tags_under_the_member_name_as_the_java_sdks_send_them() {
        let fields: Form<'_> = [
            ("Tags.1.Key", "team"),
            ("Tags.1.Value", "core"),
            ("Tags.2.Key", "env"),
            ("Tags.2.Value", ""),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "TagQueue", flat_name);
        assert_eq!(
            p.string_map("Tags").expect("decodes"),
            vec![
                ("team".to_owned(), "core".to_owned()),
                ("env".to_owned(), String::new()),
            ]
        );
        // The documented name wins when both are there.
        let both: Form<'_> = [
            ("Tag.1.Key", "a"),
            ("Tag.1.Value", "1"),
            ("Tags.1.Key", "b"),
            ("Tags.1.Value", "2"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&both, "TagQueue", flat_name);
        assert_eq!(
            p.string_map("Tags").expect("decodes"),
            vec![("a".to_owned(), "1".to_owned())]
        );
    }

    #[test]
    fn list_indices_are_plain_digits() {
        let fields: Form<'_> = [
            ("Action", "CreateQueue"),
            ("Attribute.1.Name", "DelaySeconds"),
            ("Attribute.1.Value", "1"),
            ("Attribute.+1.Name", "VisibilityTimeout"),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "CreateQueue", flat_name);
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
        let p = QueryParams::new(&f, "CreateQueue", flat_name);
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
            QueryParams::new(&bad, "ReceiveMessage", flat_name)
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
        let p = QueryParams::new(&f, "SendMessageBatch", flat_name);
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
            QueryParams::new(&none, "SendMessageBatch", flat_name)
                .entries("Entries")
                .unwrap()
                .is_none()
        );
    }
}
