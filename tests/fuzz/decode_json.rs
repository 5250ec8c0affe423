//! AWS JSON 1.0 bodies for every action: objects with the action's real member names, each
//! holding a well-typed value or garbage (wrong types, nested objects, numbers past every
//! integer type, lone surrogate escapes, raw control characters), written as text by hand so
//! that invalid JSON is possible too, sometimes cut short. Decoding never panics; a refusal is
//! a well-formed JSON error; an accepted request runs and is answered without a 5xx.

use localsqs::command::Action;
use localsqs::wire::Protocol;
use localsqs::wire::json_tree::{self, Jv};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

use super::config;
use super::pipeline::Pipeline;
use super::strategies::{
    action_name, attribute_name, attribute_value, envelope, member_string, nasty_string,
    number_token, request, target_for,
};

/// A JSON value as written on the wire, including ways of writing it wrongly.
#[derive(Debug, Clone)]
pub enum J {
    Null,
    Bool(bool),
    /// A number token, written as is.
    Num(String),
    Str(Vec<Piece>),
    Arr(Vec<J>),
    Obj(Vec<(Vec<Piece>, J)>),
}

/// Part of a JSON string.
#[derive(Debug, Clone)]
pub enum Piece {
    /// Text, escaped as JSON requires.
    Text(String),
    /// Written as is: escapes (valid or not) and raw bytes JSON forbids in strings.
    Raw(&'static str),
}

fn text(s: &str) -> Vec<Piece> {
    vec![Piece::Text(s.to_owned())]
}

const RAW_PIECES: &[&str] = &[
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\ud800\\u0041",
    "\\uDFFF\\uD800",
    "\\u0000",
    "\\u001f",
    "\\ufffe",
    "\\\"",
    "\\\\",
    "\\/",
    "\\b\\f\\n\\r\\t",
    "\u{1}",
    "\n",
    "\\x",
    "\\u12",
    "\\",
];

fn piece() -> BoxedStrategy<Piece> {
    prop_oneof![
        4 => nasty_string(8).prop_map(Piece::Text),
        1 => select(RAW_PIECES).prop_map(Piece::Raw),
    ]
    .boxed()
}

fn json_string() -> BoxedStrategy<Vec<Piece>> {
    proptest::collection::vec(piece(), 0..4).boxed()
}

/// Any JSON value, nested a few levels.
pub fn garbage() -> BoxedStrategy<J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        number_token().prop_map(J::Num),
        json_string().prop_map(J::Str),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            proptest::collection::vec((json_string(), inner), 0..4).prop_map(J::Obj),
        ]
    })
    .boxed()
}

/// How a member is typed in the service model.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Int,
    StrList,
    StrMap,
    Attrs,
    Entries(&'static [(&'static str, Kind)]),
}

/// The members of a message to send after `$first` (`QueueUrl` for SendMessage, `Id` for a
/// batch entry): listed once for both, as `command::MessageToSend` holds them.
macro_rules! send_members {
    ($first:expr) => {
        &[
            $first,
            ("MessageBody", Kind::Str),
            ("DelaySeconds", Kind::Int),
            ("MessageAttributes", Kind::Attrs),
            ("MessageSystemAttributes", Kind::Attrs),
            ("MessageDeduplicationId", Kind::Str),
            ("MessageGroupId", Kind::Str),
        ]
    };
}

const SEND_ENTRY: &[(&str, Kind)] = send_members!(("Id", Kind::Str));
const DELETE_ENTRY: &[(&str, Kind)] = &[("Id", Kind::Str), ("ReceiptHandle", Kind::Str)];
const VISIBILITY_ENTRY: &[(&str, Kind)] = &[
    ("Id", Kind::Str),
    ("ReceiptHandle", Kind::Str),
    ("VisibilityTimeout", Kind::Int),
];

/// The members of each action's request (docs/protocol.md §2.1, JSON names).
fn members(action: Action) -> &'static [(&'static str, Kind)] {
    use Kind::*;
    match action {
        Action::CreateQueue => &[("QueueName", Str), ("Attributes", StrMap), ("tags", StrMap)],
        Action::GetQueueUrl => &[("QueueName", Str), ("QueueOwnerAWSAccountId", Str)],
        Action::ListQueues => &[
            ("QueueNamePrefix", Str),
            ("NextToken", Str),
            ("MaxResults", Int),
        ],
        Action::DeleteQueue | Action::PurgeQueue | Action::ListQueueTags => &[("QueueUrl", Str)],
        Action::GetQueueAttributes => &[("QueueUrl", Str), ("AttributeNames", StrList)],
        Action::SetQueueAttributes => &[("QueueUrl", Str), ("Attributes", StrMap)],
        Action::TagQueue => &[("QueueUrl", Str), ("Tags", StrMap)],
        Action::UntagQueue => &[("QueueUrl", Str), ("TagKeys", StrList)],
        Action::AddPermission => &[
            ("QueueUrl", Str),
            ("Label", Str),
            ("AWSAccountIds", StrList),
            ("Actions", StrList),
        ],
        Action::RemovePermission => &[("QueueUrl", Str), ("Label", Str)],
        Action::SendMessage => send_members!(("QueueUrl", Str)),
        Action::ReceiveMessage => &[
            ("QueueUrl", Str),
            ("AttributeNames", StrList),
            ("MessageSystemAttributeNames", StrList),
            ("MessageAttributeNames", StrList),
            ("MaxNumberOfMessages", Int),
            ("VisibilityTimeout", Int),
            ("WaitTimeSeconds", Int),
            ("ReceiveRequestAttemptId", Str),
        ],
        Action::DeleteMessage => &[("QueueUrl", Str), ("ReceiptHandle", Str)],
        Action::ChangeMessageVisibility => &[
            ("QueueUrl", Str),
            ("ReceiptHandle", Str),
            ("VisibilityTimeout", Int),
        ],
        Action::SendMessageBatch => &[("QueueUrl", Str), ("Entries", Entries(SEND_ENTRY))],
        Action::DeleteMessageBatch => &[("QueueUrl", Str), ("Entries", Entries(DELETE_ENTRY))],
        Action::ChangeMessageVisibilityBatch => {
            &[("QueueUrl", Str), ("Entries", Entries(VISIBILITY_ENTRY))]
        }
        Action::ListDeadLetterSourceQueues => {
            &[("QueueUrl", Str), ("NextToken", Str), ("MaxResults", Int)]
        }
        Action::StartMessageMoveTask => &[
            ("SourceArn", Str),
            ("DestinationArn", Str),
            ("MaxNumberOfMessagesPerSecond", Int),
        ],
        Action::CancelMessageMoveTask => &[("TaskHandle", Str)],
        Action::ListMessageMoveTasks => &[("SourceArn", Str), ("MaxResults", Int)],
    }
}

/// One message attribute value: the real members, well typed or not.
fn attribute_value_object() -> BoxedStrategy<J> {
    // (JSON member, the member whose plausible values it takes, whether it is a list)
    let member = |name: &'static str, values: &'static str, list: bool| {
        let typed = if list {
            proptest::collection::vec(member_string(values).prop_map(|s| J::Str(text(&s))), 0..3)
                .prop_map(J::Arr)
                .boxed()
        } else {
            member_string(values).prop_map(|s| J::Str(text(&s))).boxed()
        };
        proptest::option::weighted(0.6, prop_oneof![4 => typed, 1 => garbage()])
            .prop_map(move |v| v.map(|v| (text(name), v)))
    };
    (
        member("DataType", "DataType", false),
        member("StringValue", "StringValue", false),
        member("BinaryValue", "BinaryValue", false),
        member("StringListValues", "StringValue", true),
        member("BinaryListValues", "BinaryValue", true),
    )
        .prop_map(|(a, b, c, d, e)| J::Obj([a, b, c, d, e].into_iter().flatten().collect()))
        .boxed()
}

/// A well-typed value of `kind` for `member`.
fn typed(member: &'static str, kind: Kind, depth: u32) -> BoxedStrategy<J> {
    let str_of = |m: &'static str| member_string(m).prop_map(|s| J::Str(text(&s)));
    match kind {
        Kind::Str => str_of(member).boxed(),
        Kind::Int => number_token().prop_map(J::Num).boxed(),
        Kind::StrList => proptest::collection::vec(str_of(member), 0..4)
            .prop_map(J::Arr)
            .boxed(),
        Kind::StrMap => proptest::collection::vec(
            (
                attribute_name(),
                attribute_value().prop_map(|v| J::Str(text(&v))),
            ),
            0..4,
        )
        .prop_map(|kv| J::Obj(kv.into_iter().map(|(k, v)| (text(&k), v)).collect()))
        .boxed(),
        Kind::Attrs => proptest::collection::vec(
            (
                prop_oneof![
                    3 => select(vec!["a", "b.c", "AWSTraceHeader", "Name", "", "AWS.x", ".a"])
                        .prop_map(str::to_owned),
                    1 => nasty_string(6),
                ],
                attribute_value_object(),
            ),
            0..3,
        )
        .prop_map(|kv| J::Obj(kv.into_iter().map(|(k, v)| (text(&k), v)).collect()))
        .boxed(),
        Kind::Entries(fields) if depth == 0 => {
            let entry = object(fields, depth + 1);
            proptest::collection::vec(prop_oneof![8 => entry, 1 => garbage()], 0..12)
                .prop_map(J::Arr)
                .boxed()
        }
        Kind::Entries(_) => garbage(),
    }
}

/// One member of an object: its name and value.
type Member = (Vec<Piece>, J);

/// An object with some of `fields`, each well typed or garbage, and perhaps a stray member.
fn object(fields: &'static [(&'static str, Kind)], depth: u32) -> BoxedStrategy<J> {
    let parts: Vec<BoxedStrategy<Option<Member>>> = fields
        .iter()
        .map(|&(name, kind)| {
            proptest::option::weighted(
                0.75,
                prop_oneof![5 => typed(name, kind, depth), 1 => garbage()],
            )
            .prop_map(move |v| v.map(|v| (text(name), v)))
            .boxed()
        })
        .collect();
    let stray = proptest::option::weighted(0.2, (json_string(), garbage()));
    (parts, stray)
        .prop_map(|(parts, stray)| J::Obj(parts.into_iter().flatten().chain(stray).collect()))
        .boxed()
}

/// Writes `j` as JSON text, replacing receipt-handle placeholders through `fill`.
pub fn write(j: &J, fill: &dyn Fn(&str) -> String, out: &mut String) {
    let write_str = |pieces: &[Piece], out: &mut String| {
        out.push('"');
        for p in pieces {
            match p {
                Piece::Text(t) => {
                    let quoted = serde_json::to_string(&fill(t)).expect("a string serialises");
                    out.push_str(&quoted[1..quoted.len() - 1]);
                }
                Piece::Raw(r) => out.push_str(r),
            }
        }
        out.push('"');
    };
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(n) => out.push_str(n),
        J::Str(p) => write_str(p, out),
        J::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, fill, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, out);
                out.push(':');
                write(v, fill, out);
            }
            out.push('}');
        }
    }
}

/// A request document for `action`: usually its object, sometimes any value at all.
fn document(action: Option<Action>) -> BoxedStrategy<J> {
    let fields = action.map_or(&[][..], members);
    prop_oneof![
        9 => object(fields, 0),
        1 => garbage(),
    ]
    .boxed()
}

/// `body` with `damage` done to it.
fn damaged(mut body: Vec<u8>, damage: &Damage) -> Vec<u8> {
    match *damage {
        Damage::None => {}
        Damage::Truncate(i) => body.truncate(i % (body.len() + 1)),
        Damage::Byte(i, b) => {
            if !body.is_empty() {
                let n = body.len();
                body[i % n] = b;
            }
        }
        Damage::Whitespace => body = b" \t\r\n".to_vec(),
    }
    body
}

/// What `Value::as_i64` cannot read, as the comparison below writes it.
const NOT_I64: &str = "<a number that is not an i64>";

/// A `Value` as the request decoders see it: numbers reduced to what `as_i64` gives.
fn seen_in_value(v: &Value) -> Value {
    match v {
        Value::Number(n) => n.as_i64().map_or_else(|| Value::from(NOT_I64), Value::from),
        Value::Array(a) => a.iter().map(seen_in_value).collect(),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), seen_in_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The borrowed tree in the same terms, duplicate keys resolved as its readers resolve them.
fn seen_in_tree(v: &Jv<'_>) -> Value {
    match v {
        Jv::Null => Value::Null,
        Jv::Bool(b) => Value::Bool(*b),
        Jv::Num(n) => n.map_or_else(|| Value::from(NOT_I64), Value::from),
        Jv::Str(s) => Value::from(s.as_ref()),
        Jv::Arr(a) => a.iter().map(seen_in_tree).collect(),
        Jv::Obj(m) => Value::Object(
            json_tree::unique(m)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), seen_in_tree(v)))
                .collect(),
        ),
    }
}

/// How the written text is damaged, if at all.
#[derive(Debug, Clone)]
enum Damage {
    None,
    Truncate(usize),
    Byte(usize, u8),
    Whitespace,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        12 => Just(Damage::None),
        1 => any::<usize>().prop_map(Damage::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::Byte(i, b)),
        1 => Just(Damage::Whitespace),
    ]
}

proptest! {
    #![proptest_config(config(super::DEFAULT_CASES * 2))]

    #[test]
    fn json_documents_decode_or_are_refused_well(
        (target, doc) in action_name().prop_flat_map(|a| {
            let action = Action::from_name(&a);
            (target_for(a), document(action))
        }),
        damage in damage(),
        env in envelope(),
    ) {
        let pipeline = Pipeline::new();
        let mut text = String::new();
        write(&doc, &|s| pipeline.fill(s), &mut text);
        let body = damaged(text.into_bytes(), &damage);
        let req = request(Protocol::Json, &env, target, None, body);
        pipeline.run(&req.wire());
    }

    /// The decoders read bodies through a borrowed tree (`wire::json_tree`) rather than
    /// `serde_json::Value`; both must accept and refuse the same texts and hold the same
    /// members, or error fidelity would drift.
    #[test]
    fn the_borrowed_tree_reads_what_value_reads(
        doc in action_name().prop_flat_map(|a| document(Action::from_name(&a))),
        damage in damage(),
    ) {
        let mut text = String::new();
        write(&doc, &str::to_owned, &mut text);
        let body = damaged(text.into_bytes(), &damage);
        match (serde_json::from_slice::<Value>(&body), Jv::parse(&body)) {
            (Ok(want), Ok(got)) => prop_assert_eq!(seen_in_tree(&got), seen_in_value(&want)),
            (Err(_), Err(_)) => {}
            (want, got) => prop_assert!(false, "Value {:?}, tree {:?}", want, got),
        }
    }
}
