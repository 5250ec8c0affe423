//! Wire layer, SNS: how SNS's Query protocol numbers list, map and entry members (docs/sns.md
//! §1.2): not flattened, unlike SQS's: lists `Name.member.N`, maps `Name.entry.N.key` /
//! `.value` (`Attributes`), `Tags.member.N.Key` / `.Value`, message attributes
//! `MessageAttributes.entry.N.Name` / `.Value.*`.

use crate::wire::params::Flat;

/// How `member` is numbered in any SNS request.
#[must_use]
pub fn flat_name<'n>(member: &'n str, _action: &'n str) -> Flat<'n> {
    let (suffix, key, value) = match member {
        "Attributes" => (".entry", "key", "value"),
        "MessageAttributes" => (".entry", "Name", "Value"),
        _ => (".member", "Key", "Value"),
    };
    Flat {
        name: [member, suffix],
        key,
        value,
    }
}

#[cfg(test)]
mod tests {
    use crate::command::MessageAttributeValue;
    use crate::wire::form::Form;
    use crate::wire::params::{Params, QueryParams};
    use crate::wire::sns::names::flat_name;

    #[test]
    fn sns_members_are_read_as_botocore_writes_them() {
        let fields: Form<'_> = [
            ("Attributes.entry.1.key", "RawMessageDelivery"),
            ("Attributes.entry.1.value", "true"),
            ("Tags.member.1.Key", "team"),
            ("Tags.member.1.Value", "core"),
            ("TagKeys.member.1", "a"),
            ("PublishBatchRequestEntries.member.1.Id", "e1"),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Name",
                "n",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.DataType",
                "Number",
            ),
            (
                "PublishBatchRequestEntries.member.1.MessageAttributes.entry.1.Value.StringValue",
                "5",
            ),
        ]
        .into_iter()
        .collect();
        let p = QueryParams::new(&fields, "Subscribe", flat_name);
        assert_eq!(
            p.string_map("Attributes").unwrap(),
            vec![("RawMessageDelivery".to_owned(), "true".to_owned())]
        );
        assert_eq!(p.string_map("Tags").unwrap().len(), 1);
        assert_eq!(p.string_list("TagKeys").unwrap(), vec!["a"]);
        let e = p.entries("PublishBatchRequestEntries").unwrap().unwrap();
        let a = e[0].message_attributes("MessageAttributes").unwrap();
        assert_eq!(a["n"], MessageAttributeValue::string("Number", "5"));
    }
}
