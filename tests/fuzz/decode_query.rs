//! AWS Query forms for every action: the real flattened names (`Attribute.N.Name`,
//! `MessageAttribute.N.Value.DataType`, `SendMessageBatchRequestEntry.N.*`, …) with random
//! indices (`1`, `10`, `+1`, `01`, `0`, past u32, empty), plausible and random values, and
//! random percent-encoding (proper, raw, broken escapes, bytes that are not UTF-8), in the body
//! or the query string. Decoding never panics; a refusal is a well-formed XML (or Query-JSON)
//! error; an accepted request runs and is answered without a 5xx.

use localsqs::command::Action;
use localsqs::wire::Protocol;
use proptest::prelude::*;
use proptest::sample::select;

use super::config;
use super::pipeline::Pipeline;
use super::strategies::{
    action_name, attribute_name, attribute_value, envelope, member_string, nasty_string, query_int,
    request,
};

/// What kind of value a flattened name takes.
#[derive(Debug, Clone, Copy)]
enum Hint {
    /// A string, plausible for this member.
    Member(&'static str),
    Int,
    AttrName,
    AttrValue,
}

const SEND: &[(&str, Hint)] = &[
    ("MessageBody", Hint::Member("MessageBody")),
    ("DelaySeconds", Hint::Int),
    (
        "MessageDeduplicationId",
        Hint::Member("MessageDeduplicationId"),
    ),
    ("MessageGroupId", Hint::Member("MessageGroupId")),
    ("MessageAttribute.{N}.Name", Hint::Member("Id")),
    (
        "MessageAttribute.{N}.Value.DataType",
        Hint::Member("DataType"),
    ),
    (
        "MessageAttribute.{N}.Value.StringValue",
        Hint::Member("StringValue"),
    ),
    (
        "MessageAttribute.{N}.Value.BinaryValue",
        Hint::Member("BinaryValue"),
    ),
    (
        "MessageAttribute.{N}.Value.StringListValue.{N}",
        Hint::Member("StringValue"),
    ),
    (
        "MessageAttribute.{N}.Value.BinaryListValue.{N}",
        Hint::Member("BinaryValue"),
    ),
    (
        "MessageSystemAttribute.{N}.Name",
        Hint::Member("MessageGroupId"),
    ),
    (
        "MessageSystemAttribute.{N}.Value.DataType",
        Hint::Member("DataType"),
    ),
    (
        "MessageSystemAttribute.{N}.Value.StringValue",
        Hint::Member("StringValue"),
    ),
];

/// The flattened names of each action (docs/protocol.md §2.1), besides `QueueUrl`.
fn names(action: Action) -> Vec<(String, Hint)> {
    use Hint::*;
    let own = |v: &[(&'static str, Hint)]| -> Vec<(String, Hint)> {
        v.iter().map(|(k, h)| ((*k).to_owned(), *h)).collect()
    };
    let entries = |entry: &str, fields: &[(&'static str, Hint)]| -> Vec<(String, Hint)> {
        let mut v: Vec<(String, Hint)> = fields
            .iter()
            .map(|(k, h)| (format!("{entry}.{{N}}.{k}"), *h))
            .collect();
        v.push(("Entries".to_owned(), Member("Id")));
        v
    };
    let attrs = [
        ("Attribute.{N}.Name", AttrName),
        ("Attribute.{N}.Value", AttrValue),
    ];
    let tags = [
        ("Tag.{N}.Key", Member("TagKey")),
        ("Tag.{N}.Value", Member("TagKey")),
    ];
    match action {
        Action::CreateQueue => {
            let mut v = own(&[("QueueName", Member("QueueName"))]);
            v.extend(own(&attrs));
            v.extend(own(&tags));
            v
        }
        Action::GetQueueUrl => own(&[
            ("QueueName", Member("QueueName")),
            ("QueueOwnerAWSAccountId", Member("QueueOwnerAWSAccountId")),
        ]),
        Action::ListQueues | Action::ListDeadLetterSourceQueues => own(&[
            ("QueueNamePrefix", Member("QueueNamePrefix")),
            ("NextToken", Member("NextToken")),
            ("MaxResults", Int),
        ]),
        Action::GetQueueAttributes => {
            own(&[("AttributeName.{N}", AttrName), ("AttributeName", AttrName)])
        }
        Action::SetQueueAttributes => own(&attrs),
        Action::TagQueue => own(&tags),
        Action::UntagQueue => own(&[("TagKey.{N}", Member("TagKey"))]),
        Action::AddPermission => own(&[
            ("Label", Member("Label")),
            ("AWSAccountId.{N}", Member("AWSAccountIds")),
            ("ActionName.{N}", Member("Actions")),
        ]),
        Action::RemovePermission => own(&[("Label", Member("Label"))]),
        Action::SendMessage => own(SEND),
        Action::ReceiveMessage => own(&[
            ("AttributeName.{N}", Member("AttributeNames")),
            ("MessageAttributeName.{N}", Member("MessageAttributeNames")),
            ("MaxNumberOfMessages", Int),
            ("VisibilityTimeout", Int),
            ("WaitTimeSeconds", Int),
            ("ReceiveRequestAttemptId", Member("ReceiveRequestAttemptId")),
        ]),
        Action::DeleteMessage => own(&[("ReceiptHandle", Member("ReceiptHandle"))]),
        Action::ChangeMessageVisibility => own(&[
            ("ReceiptHandle", Member("ReceiptHandle")),
            ("VisibilityTimeout", Int),
        ]),
        Action::SendMessageBatch => {
            let mut fields = vec![("Id", Member("Id"))];
            fields.extend_from_slice(SEND);
            entries("SendMessageBatchRequestEntry", &fields)
        }
        Action::DeleteMessageBatch => entries(
            "DeleteMessageBatchRequestEntry",
            &[
                ("Id", Member("Id")),
                ("ReceiptHandle", Member("ReceiptHandle")),
            ],
        ),
        Action::ChangeMessageVisibilityBatch => entries(
            "ChangeMessageVisibilityBatchRequestEntry",
            &[
                ("Id", Member("Id")),
                ("ReceiptHandle", Member("ReceiptHandle")),
                ("VisibilityTimeout", Int),
            ],
        ),
        Action::StartMessageMoveTask => own(&[
            ("SourceArn", Member("SourceArn")),
            ("DestinationArn", Member("DestinationArn")),
            ("MaxNumberOfMessagesPerSecond", Int),
        ]),
        Action::CancelMessageMoveTask => own(&[("TaskHandle", Member("TaskHandle"))]),
        Action::ListMessageMoveTasks => {
            own(&[("SourceArn", Member("SourceArn")), ("MaxResults", Int)])
        }
        Action::DeleteQueue | Action::PurgeQueue | Action::ListQueueTags => Vec::new(),
    }
}

/// A list index as written: canonical most of the time.
fn index() -> BoxedStrategy<String> {
    prop_oneof![
        6 => (1u32..4).prop_map(|n| n.to_string()),
        1 => Just("10".to_owned()),
        1 => Just("11".to_owned()),
        2 => select(vec![
            "+1", "01", "0", "", "-1", "1.5", " 1", "4294967296", "99999999999999999999", "1e1",
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

fn value(hint: Hint) -> BoxedStrategy<String> {
    match hint {
        Hint::Member(m) => member_string(m),
        Hint::Int => query_int(),
        Hint::AttrName => attribute_name(),
        Hint::AttrValue => attribute_value(),
    }
}

/// How one name or value is percent-encoded.
#[derive(Debug, Clone)]
enum Enc {
    /// As a form encoder writes it.
    Proper,
    /// Unencoded.
    Raw,
    /// Properly, with a broken or non-UTF-8 escape inserted at a position.
    Broken(usize, &'static str),
}

fn enc() -> impl Strategy<Value = Enc> {
    prop_oneof![
        1 => Just(Enc::Raw),
        1 => (any::<usize>(), select(vec![
            "%", "%G1", "%F", "%FF%FE", "%C3", "%C3%28", "%ED%A0%80", "%F4%90%80%80", "%00",
            "%2", "+", "%25", "%26", "%3D",
        ]))
        .prop_map(|(i, e)| Enc::Broken(i, e)),
    ]
}

fn encode(s: &str, e: &Enc) -> String {
    let proper = || form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    match e {
        Enc::Proper => proper(),
        Enc::Raw => s.to_owned(),
        Enc::Broken(i, bad) => {
            let mut p = proper();
            // Insert on a character boundary of the (ASCII) encoded text.
            let at = i % (p.len() + 1);
            p.insert_str(at, bad);
            p
        }
    }
}

/// One form field before encoding.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    value: String,
    in_query: bool,
}

fn field(template: String, hint: Hint) -> BoxedStrategy<Field> {
    let slots = template.matches("{N}").count();
    (
        proptest::collection::vec(index(), slots),
        value(hint),
        proptest::bool::weighted(0.2),
    )
        .prop_map(move |(idx, value, in_query)| {
            let mut name = template.clone();
            for i in idx {
                name = name.replacen("{N}", &i, 1);
            }
            Field {
                name,
                value,
                in_query,
            }
        })
        .boxed()
}

/// One damaged component of a form: which field, its name or its value, and how.
#[derive(Debug, Clone)]
struct Damage {
    field: usize,
    name: bool,
    enc: Enc,
}

/// A form: the fields naming `action` (its own names, each possibly several times with
/// different indices, `QueueUrl`, `Action`, `Version`, a stray random field), and at most one
/// component encoded badly, so that most forms reach the action's decoder.
fn form(action_name: String) -> BoxedStrategy<(Vec<Field>, Option<Damage>)> {
    let own: Vec<BoxedStrategy<Field>> =
        names(Action::from_name(&action_name).unwrap_or(Action::ListQueues))
            .into_iter()
            .map(|(t, h)| field(t, h))
            .collect();
    let own = if own.is_empty() {
        Just(Vec::new()).boxed()
    } else {
        proptest::collection::vec(select_field(own), 0..10).boxed()
    };
    let fixed = |name: &'static str, value: BoxedStrategy<String>, p: f64| {
        proptest::option::weighted(
            p,
            (value, proptest::bool::weighted(0.2)).prop_map(move |(value, in_query)| Field {
                name: name.to_owned(),
                value,
                in_query,
            }),
        )
    };
    let action = fixed("Action", Just(action_name).boxed(), 0.95);
    let queue_url = fixed("QueueUrl", member_string("QueueUrl"), 0.85);
    let version = fixed("Version", Just("2012-11-05".to_owned()).boxed(), 0.5);
    let stray = proptest::option::weighted(
        0.15,
        (nasty_string(8), nasty_string(8)).prop_map(|(name, value)| Field {
            name,
            value,
            in_query: false,
        }),
    );
    let damage = proptest::option::weighted(
        0.25,
        (any::<usize>(), any::<bool>(), enc()).prop_map(|(field, name, enc)| Damage {
            field,
            name,
            enc,
        }),
    );
    (own, action, queue_url, version, stray, damage)
        .prop_map(|(mut fields, action, queue_url, version, stray, damage)| {
            fields.extend(queue_url);
            fields.extend(action);
            fields.extend(version);
            fields.extend(stray);
            (fields, damage)
        })
        .boxed()
}

/// One field, drawn from one of several field strategies.
fn select_field(choices: Vec<BoxedStrategy<Field>>) -> BoxedStrategy<Field> {
    proptest::strategy::Union::new(choices).boxed()
}

proptest! {
    #![proptest_config(config(super::DEFAULT_CASES * 2))]

    #[test]
    fn query_forms_decode_or_are_refused_well(
        (fields, damage) in action_name().prop_flat_map(form),
        proto in select(vec![Protocol::Query, Protocol::QueryJson]),
        env in envelope(),
    ) {
        let pipeline = Pipeline::new();
        let (mut query, mut body) = (Vec::new(), Vec::new());
        let damaged = damage.as_ref().map(|d| (d.field % fields.len().max(1), d.name, &d.enc));
        for (i, f) in fields.iter().enumerate() {
            let enc = |is_name: bool| match damaged {
                Some((j, n, e)) if j == i && n == is_name => e.clone(),
                _ => Enc::Proper,
            };
            let pair = format!(
                "{}={}",
                encode(&pipeline.fill(&f.name), &enc(true)),
                encode(&pipeline.fill(&f.value), &enc(false))
            );
            if f.in_query { query.push(pair) } else { body.push(pair) }
        }
        let query = (!query.is_empty()).then(|| query.join("&"));
        let req = request(proto, &env, None, query, body.join("&").into_bytes());
        pipeline.run(&req.wire());
    }
}
