//! SNS's Query forms: every SNS action with its real member names (`Attributes.entry.N.key`,
//! `MessageAttributes.entry.N.Value.DataType`, `PublishBatchRequestEntries.member.N.*`, …),
//! random indices and values, through `wire::sns::decode`, `Engine::execute_sns` on an engine
//! holding a topic of each kind with queue subscriptions, and `wire::sns::encode`. Nothing
//! panics; a refusal is a well-formed SNS error; an answer parses; nothing is ever a 5xx.

use std::sync::Arc;

use localsqs::command::RequestContext;
use localsqs::command::sns::{CreateTopic, SnsAction, SnsCommand, SnsReply, Subscribe};
use localsqs::engine::{Engine, EngineOptions, ManualClock, SeededIds, SnsCaller};
use localsqs::wire::{self, Protocol, WireRequest};
use proptest::prelude::*;
use proptest::sample::select;

use super::check::assert_answer;
use super::config;
use super::pipeline::block_on;
use super::strategies::{BASE_URL, nasty_string};

const TOPIC: &str = "arn:aws:sns:us-east-1:000000000000:t";
const FIFO: &str = "arn:aws:sns:us-east-1:000000000000:t.fifo";

/// Member names (with `{N}` for an index) and the plausible values they take.
const MEMBERS: &[(&str, &[&str])] = &[
    ("Name", &["t", "t.fifo", "new", "a b", ""]),
    (
        "TopicArn",
        &[
            TOPIC,
            FIFO,
            "arn:aws:sns:eu-west-1:000000000000:t",
            "nope",
            "",
        ],
    ),
    ("TargetArn", &[TOPIC, "arn:aws:sns:us-east-1:0:endpoint/x"]),
    ("ResourceArn", &[TOPIC, FIFO, "x"]),
    (
        "SubscriptionArn",
        &[
            TOPIC,
            "pending confirmation",
            "arn:aws:sns:us-east-1:000000000000:t:x",
        ],
    ),
    (
        "Protocol",
        &["sqs", "http", "https", "lambda", "email", "sms", "bogus"],
    ),
    (
        "Endpoint",
        &[
            "arn:aws:sqs:us-east-1:000000000000:q",
            "arn:aws:sqs:us-east-1:000000000000:q.fifo",
            "http://127.0.0.1:1/x",
            "arn:aws:lambda:us-east-1:0:function:f",
            "a@b",
        ],
    ),
    ("Token", &["abc123", "zz", ""]),
    (
        "Message",
        &["m", "", "{\"default\":\"d\",\"sqs\":\"s\"}", "{"],
    ),
    ("MessageStructure", &["json", "text", ""]),
    ("Subject", &["s", ""]),
    ("MessageGroupId", &["g", ""]),
    ("MessageDeduplicationId", &["d", ""]),
    ("NextToken", &["MA==", "!!", "MTAw"]),
    (
        "AttributeName",
        &[
            "RawMessageDelivery",
            "FilterPolicy",
            "FilterPolicyScope",
            "RedrivePolicy",
            "DisplayName",
            "FifoTopic",
            "Nope",
        ],
    ),
    (
        "AttributeValue",
        &[
            "true",
            "{\"a\":[\"b\"]}",
            "{\"a\":{\"b\":[1]}}",
            "MessageBody",
            "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\"}",
            "x",
        ],
    ),
    ("Label", &["p", ""]),
    ("ReturnSubscriptionArn", &["true", "false", "x"]),
    (
        "Attributes.entry.{N}.key",
        &[
            "RawMessageDelivery",
            "FilterPolicy",
            "FifoTopic",
            "ContentBasedDeduplication",
            "SignatureVersion",
            "Nope",
        ],
    ),
    (
        "Attributes.entry.{N}.value",
        &["true", "2", "{\"k\":[\"v\"]}", "x"],
    ),
    ("Tags.member.{N}.Key", &["k", ""]),
    ("Tags.member.{N}.Value", &["v"]),
    ("TagKeys.member.{N}", &["k"]),
    ("AWSAccountId.member.{N}", &["111122223333"]),
    ("ActionName.member.{N}", &["Publish", "SendMessage"]),
    ("MessageAttributes.entry.{N}.Name", &["a", ".a", "a^"]),
    (
        "MessageAttributes.entry.{N}.Value.DataType",
        &["String", "Number", "Binary", "String.Array", "Other"],
    ),
    (
        "MessageAttributes.entry.{N}.Value.StringValue",
        &["v", "5", "[\"a\"]", ""],
    ),
    (
        "MessageAttributes.entry.{N}.Value.BinaryValue",
        &["AAEC", "!!"],
    ),
    (
        "PublishBatchRequestEntries.member.{N}.Id",
        &["a", "b", "a.b"],
    ),
    ("PublishBatchRequestEntries.member.{N}.Message", &["m", ""]),
    (
        "PublishBatchRequestEntries.member.{N}.MessageGroupId",
        &["g"],
    ),
    (
        "PublishBatchRequestEntries.member.{N}.MessageDeduplicationId",
        &["d"],
    ),
];

fn field() -> impl Strategy<Value = (String, String)> {
    (select(MEMBERS), 1u32..4, any::<bool>(), nasty_string(8)).prop_flat_map(
        |((name, vals), n, nasty, junk)| {
            let name = name.replace("{N}", &n.to_string());
            let value = if nasty {
                Just(junk).boxed()
            } else {
                select(vals.to_vec()).prop_map(str::to_owned).boxed()
            };
            (Just(name), value)
        },
    )
}

fn engine() -> Engine {
    block_on(async {
        let engine = Engine::open(
            EngineOptions::default(),
            Arc::new(ManualClock::new(1_700_000_000_000)),
            Arc::new(SeededIds::new(9)),
        )
        .expect("engine opens");
        let ctx = RequestContext::new(BASE_URL, engine.default_scope());
        let caller = SnsCaller { signed: true };
        for (name, fifo) in [("t", false), ("t.fifo", true)] {
            let attributes = if fifo {
                vec![("FifoTopic".to_owned(), "true".to_owned())]
            } else {
                Vec::new()
            };
            let c = SnsCommand::CreateTopic(CreateTopic {
                name: name.into(),
                attributes,
                tags: Vec::new(),
            });
            assert!(matches!(
                engine.execute_sns(&ctx, caller, c).await,
                Ok(SnsReply::CreateTopic(_))
            ));
            let q = if fifo { "q.fifo" } else { "q" };
            let sub = SnsCommand::Subscribe(Subscribe {
                topic_arn: if fifo { FIFO.into() } else { TOPIC.into() },
                protocol: "sqs".into(),
                endpoint: Some(format!("arn:aws:sqs:us-east-1:000000000000:{q}")),
                attributes: Vec::new(),
                return_subscription_arn: false,
            });
            engine
                .execute_sns(&ctx, caller, sub)
                .await
                .expect("subscribes");
        }
        engine
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn sns_forms_never_panic_and_answer_well_formed(
        action in select(SnsAction::ALL.to_vec()),
        fields in proptest::collection::vec(field(), 0..8),
    ) {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("Action", action.name());
        form.append_pair("Version", "2010-03-31");
        for (k, v) in &fields {
            form.append_pair(k, v);
        }
        let body = form.finish();
        let req = WireRequest {
            protocol: Protocol::Query,
            method: "POST",
            path: "/",
            query: None,
            target: None,
            trace_header: None,
            authorization: None,
            base_url: BASE_URL.into(),
            body: body.as_bytes(),
        };
        assert_eq!(wire::Api::detect(&req), wire::Api::Sns);
        let resp = match wire::sns::decode(&req, "r") {
            Err(rejected) => rejected,
            Ok(d) => {
                let engine = engine();
                let ctx = RequestContext::new(BASE_URL, engine.default_scope());
                let result = block_on(engine.execute_sns(&ctx, SnsCaller { signed: d.signed }, d.command));
                wire::sns::encode(d.action, &result, "r")
            }
        };
        assert_answer(&resp, &body);
    }
}
