//! `wire::encode` on random replies and errors: strings with XML specials, control characters
//! and noncharacters, random attribute maps, numbers of every size. The XML must parse with
//! quick-xml and give back every value through its unescaper (a character XML cannot carry as
//! U+FFFD); the JSON must parse with serde_json and hold exactly the values given; the
//! Query-as-JSON envelope must parse and carry the request id. The expected documents are built
//! here from the service model's member names, independently of `src/wire/sqs/encode.rs`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use localsqs::command::*;
use localsqs::error::{ErrorCode, Fault, SqsError};
use localsqs::wire::{self, Protocol};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

use super::check::{Node, assert_error, assert_success, parse_xml, xml_visible};
use super::config;
use super::strategies::nasty_string;

fn s() -> BoxedStrategy<String> {
    nasty_string(16)
}

fn opt_s() -> BoxedStrategy<Option<String>> {
    proptest::option::of(s()).boxed()
}

fn list<T: std::fmt::Debug>(item: impl Strategy<Value = T> + 'static) -> BoxedStrategy<Vec<T>> {
    proptest::collection::vec(item, 0..4).boxed()
}

/// Pairs with distinct keys (the engine never returns a key twice).
fn pairs() -> BoxedStrategy<Pairs> {
    list((s(), s()))
        .prop_map(|v| {
            let mut seen = std::collections::HashSet::new();
            v.into_iter()
                .filter(|(k, _)| seen.insert(k.clone()))
                .collect()
        })
        .boxed()
}

fn bytes() -> BoxedStrategy<Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..12).boxed()
}

fn attributes() -> BoxedStrategy<MessageAttributes> {
    let value = (
        s(),
        proptest::option::of(s()),
        proptest::option::of(bytes()),
        list(s()),
        list(bytes()),
    )
        .prop_map(
            |(data_type, string_value, binary_value, sl, bl)| MessageAttributeValue {
                data_type,
                string_value,
                binary_value,
                string_list_values: sl,
                binary_list_values: bl,
            },
        );
    proptest::collection::btree_map(s(), value, 0..3).boxed()
}

fn message() -> BoxedStrategy<Message> {
    (s(), s(), s(), s(), pairs(), opt_s(), attributes())
        .prop_map(
            |(id, handle, md5, body, attributes, md5a, message_attributes)| Message {
                message_id: id,
                receipt_handle: handle,
                md5_of_body: md5,
                body,
                attributes,
                md5_of_message_attributes: md5a,
                message_attributes,
            },
        )
        .boxed()
}

fn failed() -> BoxedStrategy<Vec<BatchResultErrorEntry>> {
    list(
        (s(), select(ErrorCode::ALL), s()).prop_map(|(id, code, message)| BatchResultErrorEntry {
            id,
            code,
            message,
        }),
    )
}

fn send_result() -> BoxedStrategy<SendMessageBatchResultEntry> {
    (s(), s(), s(), opt_s(), opt_s(), opt_s())
        .prop_map(|(id, mid, md5, a, sa, seq)| SendMessageBatchResultEntry {
            id,
            message_id: mid,
            md5_of_message_body: md5,
            md5_of_message_attributes: a,
            md5_of_message_system_attributes: sa,
            sequence_number: seq,
        })
        .boxed()
}

fn task() -> BoxedStrategy<ListMessageMoveTasksResultEntry> {
    let o = || proptest::option::of(any::<i64>());
    (
        opt_s(),
        s(),
        s(),
        opt_s(),
        o(),
        any::<i64>(),
        o(),
        opt_s(),
        any::<i64>(),
    )
        .prop_map(|(h, st, src, dst, rate, moved, to_move, why, at)| {
            ListMessageMoveTasksResultEntry {
                task_handle: h,
                status: st,
                source_arn: src,
                destination_arn: dst,
                max_number_of_messages_per_second: rate,
                approximate_number_of_messages_moved: moved,
                approximate_number_of_messages_to_move: to_move,
                failure_reason: why,
                started_timestamp: at,
            }
        })
        .boxed()
}

/// Replies to `action`. A `match` with no wildcard arm, so that a new action cannot be left
/// out of the fuzzing: the compiler asks for its arm.
fn reply_to(action: Action) -> BoxedStrategy<Reply> {
    match action {
        Action::AddPermission => Just(Reply::AddPermission(())).boxed(),
        Action::ChangeMessageVisibility => Just(Reply::ChangeMessageVisibility(())).boxed(),
        Action::DeleteMessage => Just(Reply::DeleteMessage(())).boxed(),
        Action::DeleteQueue => Just(Reply::DeleteQueue(())).boxed(),
        Action::PurgeQueue => Just(Reply::PurgeQueue(())).boxed(),
        Action::RemovePermission => Just(Reply::RemovePermission(())).boxed(),
        Action::SetQueueAttributes => Just(Reply::SetQueueAttributes(())).boxed(),
        Action::TagQueue => Just(Reply::TagQueue(())).boxed(),
        Action::UntagQueue => Just(Reply::UntagQueue(())).boxed(),
        Action::CreateQueue => s()
            .prop_map(|u| Reply::CreateQueue(CreateQueueResult { queue_url: u }))
            .boxed(),
        Action::GetQueueUrl => s()
            .prop_map(|u| Reply::GetQueueUrl(GetQueueUrlResult { queue_url: u }))
            .boxed(),
        Action::ListQueues => (list(s()), opt_s())
            .prop_map(|(queue_urls, next_token)| {
                Reply::ListQueues(ListQueuesResult {
                    queue_urls,
                    next_token,
                })
            })
            .boxed(),
        Action::GetQueueAttributes => pairs()
            .prop_map(|attributes| {
                Reply::GetQueueAttributes(GetQueueAttributesResult { attributes })
            })
            .boxed(),
        Action::ListQueueTags => pairs()
            .prop_map(|tags| Reply::ListQueueTags(ListQueueTagsResult { tags }))
            .boxed(),
        Action::SendMessage => (s(), opt_s(), opt_s(), s(), opt_s())
            .prop_map(|(md5, a, sa, id, seq)| {
                Reply::SendMessage(SendMessageResult {
                    md5_of_message_body: md5,
                    md5_of_message_attributes: a,
                    md5_of_message_system_attributes: sa,
                    message_id: id,
                    sequence_number: seq,
                })
            })
            .boxed(),
        Action::ReceiveMessage => list(message())
            .prop_map(|messages| Reply::ReceiveMessage(ReceiveMessageResult { messages }))
            .boxed(),
        Action::SendMessageBatch => (list(send_result()), failed())
            .prop_map(|(successful, failed)| {
                Reply::SendMessageBatch(SendMessageBatchResult { successful, failed })
            })
            .boxed(),
        Action::DeleteMessageBatch => (list(s()), failed())
            .prop_map(|(successful, failed)| {
                Reply::DeleteMessageBatch(DeleteMessageBatchResult { successful, failed })
            })
            .boxed(),
        Action::ChangeMessageVisibilityBatch => (list(s()), failed())
            .prop_map(|(successful, failed)| {
                Reply::ChangeMessageVisibilityBatch(ChangeMessageVisibilityBatchResult {
                    successful,
                    failed,
                })
            })
            .boxed(),
        Action::ListDeadLetterSourceQueues => (list(s()), opt_s())
            .prop_map(|(queue_urls, next_token)| {
                Reply::ListDeadLetterSourceQueues(ListDeadLetterSourceQueuesResult {
                    queue_urls,
                    next_token,
                })
            })
            .boxed(),
        Action::StartMessageMoveTask => s()
            .prop_map(|task_handle| {
                Reply::StartMessageMoveTask(StartMessageMoveTaskResult { task_handle })
            })
            .boxed(),
        Action::CancelMessageMoveTask => any::<i64>()
            .prop_map(|n| {
                Reply::CancelMessageMoveTask(CancelMessageMoveTaskResult {
                    approximate_number_of_messages_moved: n,
                })
            })
            .boxed(),
        Action::ListMessageMoveTasks => list(task())
            .prop_map(|results| Reply::ListMessageMoveTasks(ListMessageMoveTasksResult { results }))
            .boxed(),
    }
}

/// Any reply of any action: every action of the table equally often.
fn reply() -> BoxedStrategy<Reply> {
    select(Action::ALL).prop_flat_map(reply_to).boxed()
}

/// Builds both expected forms of one result side by side.
#[derive(Default)]
struct Expect {
    xml: Vec<Node>,
    json: Map<String, Value>,
}

impl Expect {
    fn string(&mut self, name: &str, v: &str) {
        self.xml.push(Node::leaf(name, &xml_visible(v)));
        self.json.insert(name.into(), json!(v));
    }
    fn opt(&mut self, name: &str, v: Option<&String>) {
        if let Some(v) = v {
            self.string(name, v);
        }
    }
    fn int(&mut self, name: &str, v: i64) {
        self.xml.push(Node::leaf(name, &v.to_string()));
        self.json.insert(name.into(), json!(v));
    }
    fn strings(&mut self, json: &str, xml: &str, items: &[String]) {
        self.xml
            .extend(items.iter().map(|i| Node::leaf(xml, &xml_visible(i))));
        if !items.is_empty() {
            self.json.insert(json.into(), json!(items));
        }
    }
    fn map(&mut self, json: &str, xml: &str, (k, v): (&str, &str), items: &Pairs) {
        for (key, value) in items {
            self.xml.push(Node::parent(
                xml,
                vec![
                    Node::leaf(k, &xml_visible(key)),
                    Node::leaf(v, &xml_visible(value)),
                ],
            ));
        }
        if !items.is_empty() {
            let m: Map<String, Value> = items.iter().map(|(a, b)| (a.clone(), json!(b))).collect();
            self.json.insert(json.into(), Value::Object(m));
        }
    }
    fn structs<T>(&mut self, json: &str, xml: &str, items: &[T], f: impl Fn(&mut Expect, &T)) {
        let mut list = Vec::new();
        for item in items {
            let mut e = Expect::default();
            f(&mut e, item);
            self.xml.push(Node::parent(xml, e.xml));
            list.push(Value::Object(e.json));
        }
        if !list.is_empty() {
            self.json.insert(json.into(), Value::Array(list));
        }
    }
    fn attributes(&mut self, attrs: &MessageAttributes) {
        let mut m = Map::new();
        for (name, v) in attrs {
            let mut value = Expect::default();
            value.opt("StringValue", v.string_value.as_ref());
            value.opt(
                "BinaryValue",
                v.binary_value.as_ref().map(|b| STANDARD.encode(b)).as_ref(),
            );
            let b64: Vec<String> = v
                .binary_list_values
                .iter()
                .map(|b| STANDARD.encode(b))
                .collect();
            value.strings("StringListValues", "StringListValue", &v.string_list_values);
            value.strings("BinaryListValues", "BinaryListValue", &b64);
            value.string("DataType", &v.data_type);
            self.xml.push(Node::parent(
                "MessageAttribute",
                vec![
                    Node::leaf("Name", &xml_visible(name)),
                    Node::parent("Value", value.xml),
                ],
            ));
            m.insert(name.clone(), Value::Object(value.json));
        }
        if !m.is_empty() {
            self.json
                .insert("MessageAttributes".into(), Value::Object(m));
        }
    }
    fn failed(&mut self, failed: &[BatchResultErrorEntry]) {
        self.structs("Failed", "BatchResultErrorEntry", failed, |e, f| {
            let spec = f.code.spec();
            e.string("Id", &f.id);
            e.xml.push(Node::leaf(
                "SenderFault",
                &(spec.fault == Fault::Sender).to_string(),
            ));
            e.json
                .insert("SenderFault".into(), json!(spec.fault == Fault::Sender));
            e.string("Code", spec.legacy_code);
            e.string("Message", &f.message);
        });
    }
    fn ids(&mut self, xml: &str, ids: &[String]) {
        self.structs("Successful", xml, ids, |e, id| e.string("Id", id));
    }
}

/// The members of a reply, in both protocols (service-model names, docs/protocol.md §3).
fn expect(reply: &Reply) -> Expect {
    let mut e = Expect::default();
    match reply {
        Reply::CreateQueue(r) => e.string("QueueUrl", &r.queue_url),
        Reply::GetQueueUrl(r) => e.string("QueueUrl", &r.queue_url),
        Reply::ListQueues(r) => {
            e.strings("QueueUrls", "QueueUrl", &r.queue_urls);
            e.opt("NextToken", r.next_token.as_ref());
        }
        Reply::ListDeadLetterSourceQueues(r) => {
            e.strings("queueUrls", "QueueUrl", &r.queue_urls);
            e.opt("NextToken", r.next_token.as_ref());
        }
        Reply::GetQueueAttributes(r) => {
            e.map("Attributes", "Attribute", ("Name", "Value"), &r.attributes);
        }
        Reply::ListQueueTags(r) => e.map("Tags", "Tag", ("Key", "Value"), &r.tags),
        Reply::SendMessage(r) => {
            e.string("MD5OfMessageBody", &r.md5_of_message_body);
            e.opt(
                "MD5OfMessageAttributes",
                r.md5_of_message_attributes.as_ref(),
            );
            e.opt(
                "MD5OfMessageSystemAttributes",
                r.md5_of_message_system_attributes.as_ref(),
            );
            e.string("MessageId", &r.message_id);
            e.opt("SequenceNumber", r.sequence_number.as_ref());
        }
        Reply::ReceiveMessage(r) => e.structs("Messages", "Message", &r.messages, |e, m| {
            e.string("MessageId", &m.message_id);
            e.string("ReceiptHandle", &m.receipt_handle);
            e.string("MD5OfBody", &m.md5_of_body);
            e.string("Body", &m.body);
            e.map("Attributes", "Attribute", ("Name", "Value"), &m.attributes);
            e.opt(
                "MD5OfMessageAttributes",
                m.md5_of_message_attributes.as_ref(),
            );
            e.attributes(&m.message_attributes);
        }),
        Reply::SendMessageBatch(r) => {
            e.structs(
                "Successful",
                "SendMessageBatchResultEntry",
                &r.successful,
                |e, s| {
                    e.string("Id", &s.id);
                    e.string("MessageId", &s.message_id);
                    e.string("MD5OfMessageBody", &s.md5_of_message_body);
                    e.opt(
                        "MD5OfMessageAttributes",
                        s.md5_of_message_attributes.as_ref(),
                    );
                    e.opt(
                        "MD5OfMessageSystemAttributes",
                        s.md5_of_message_system_attributes.as_ref(),
                    );
                    e.opt("SequenceNumber", s.sequence_number.as_ref());
                },
            );
            e.failed(&r.failed);
        }
        Reply::DeleteMessageBatch(r) => {
            e.ids("DeleteMessageBatchResultEntry", &r.successful);
            e.failed(&r.failed);
        }
        Reply::ChangeMessageVisibilityBatch(r) => {
            e.ids("ChangeMessageVisibilityBatchResultEntry", &r.successful);
            e.failed(&r.failed);
        }
        Reply::StartMessageMoveTask(r) => e.string("TaskHandle", &r.task_handle),
        Reply::CancelMessageMoveTask(r) => {
            e.int(
                "ApproximateNumberOfMessagesMoved",
                r.approximate_number_of_messages_moved,
            );
        }
        Reply::ListMessageMoveTasks(r) => {
            e.structs(
                "Results",
                "ListMessageMoveTasksResultEntry",
                &r.results,
                |e, t| {
                    e.opt("TaskHandle", t.task_handle.as_ref());
                    e.string("Status", &t.status);
                    e.string("SourceArn", &t.source_arn);
                    e.opt("DestinationArn", t.destination_arn.as_ref());
                    if let Some(n) = t.max_number_of_messages_per_second {
                        e.int("MaxNumberOfMessagesPerSecond", n);
                    }
                    e.int(
                        "ApproximateNumberOfMessagesMoved",
                        t.approximate_number_of_messages_moved,
                    );
                    if let Some(n) = t.approximate_number_of_messages_to_move {
                        e.int("ApproximateNumberOfMessagesToMove", n);
                    }
                    e.opt("FailureReason", t.failure_reason.as_ref());
                    e.int("StartedTimestamp", t.started_timestamp);
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
    e
}

/// Whether the reply carries a result, told from its value rather than the action table, so
/// that the table's `=> ()` rows are checked too.
fn has_result(reply: &Reply) -> bool {
    !format!("{reply:?}").ends_with("(())")
}

/// Each action's generator makes replies to that action, and the table's `has_result` agrees
/// with what they hold.
#[test]
fn every_action_has_a_reply_generator() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for &action in Action::ALL {
        for _ in 0..4 {
            let reply = reply_to(action)
                .new_tree(&mut runner)
                .expect("a reply")
                .current();
            assert_eq!(reply.action(), action, "{reply:?}");
            assert_eq!(action.has_result(), has_result(&reply), "{reply:?}");
        }
    }
}

proptest! {
    #![proptest_config(config(super::DEFAULT_CASES * 2))]

    #[test]
    fn replies_encode_to_documents_that_give_back_every_value(reply in reply(), rid in s()) {
        let action = reply.action();
        let expected = expect(&reply);
        let ok = Ok(reply.clone());

        // AWS JSON 1.0: exactly the members given.
        let resp = wire::encode(Protocol::Json, action, &ok, &rid);
        let json = assert_success(&resp, &reply).expect_err("a JSON body");
        prop_assert_eq!(json, Value::Object(expected.json.clone()), "{:?}", reply);

        // Query XML: the envelope, the result, the request id; all text round-trips.
        let resp = wire::encode(Protocol::Query, action, &ok, &rid);
        let root = assert_success(&resp, &reply).expect("an XML body");
        let name = action.name();
        let mut children = Vec::new();
        if has_result(&reply) {
            children.push(Node::parent(&format!("{name}Result"), expected.xml));
        }
        children.push(Node::parent("ResponseMetadata", vec![Node::leaf("RequestId", &xml_visible(&rid))]));
        let want = Node::parent(&format!("{name}Response"), children);
        prop_assert_eq!(root.canonical(), want.canonical(), "{}", resp.body);

        // Query answered in JSON: the envelope parses and carries the request id.
        let resp = wire::encode(Protocol::QueryJson, action, &ok, &rid);
        let v = assert_success(&resp, &reply).expect_err("a JSON body");
        let envelope = &v[format!("{name}Response")];
        prop_assert_eq!(&envelope["ResponseMetadata"]["RequestId"], &json!(rid));
        prop_assert_eq!(envelope.get(format!("{name}Result")).is_some(), has_result(&reply));
    }

    #[test]
    fn errors_encode_to_well_formed_documents(
        code in select(ErrorCode::ALL),
        message in s(),
        rid in s(),
        action in select(Action::ALL),
    ) {
        let err = SqsError::new(code, message);
        let spec = code.spec();
        let result: Result<Reply, SqsError> = Err(err.clone());

        let resp = wire::encode(Protocol::Json, action, &result, &rid);
        if spec.status < 500 { assert_error(&resp, &err); }
        let v: Value = serde_json::from_str(&resp.body).expect("JSON");
        prop_assert_eq!(&v["__type"], &json!(spec.json_type));
        let text = err.text(false);
        let want_message = (!text.is_empty()).then(|| json!(text));
        prop_assert_eq!(v.get("message"), want_message.as_ref());

        let resp = wire::encode(Protocol::Query, action, &result, &rid);
        if spec.status < 500 { assert_error(&resp, &err); }
        let root = parse_xml(&resp.body).expect("well-formed XML");
        let e = root.child("Error").expect("<Error>");
        prop_assert_eq!(&e.child("Code").expect("<Code>").text, spec.legacy_code);
        prop_assert_eq!(&e.child("Message").expect("<Message>").text, &xml_visible(&err.text(true)));
        prop_assert_eq!(&root.child("RequestId").expect("<RequestId>").text, &xml_visible(&rid));

        let resp = wire::encode(Protocol::QueryJson, action, &result, &rid);
        if spec.status < 500 { assert_error(&resp, &err); }
        let v: Value = serde_json::from_str(&resp.body).expect("JSON");
        prop_assert_eq!(&v["Error"]["Message"], &json!(err.text(true)));
        prop_assert_eq!(&v["RequestId"], &json!(rid));
    }
}
