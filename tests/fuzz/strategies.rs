//! Shared generators: strings made of the characters that break writers and readers (XML
//! specials, control characters, noncharacters, astral characters), number tokens that overflow
//! every integer type, the member names of each action with values a client could plausibly
//! send, and request envelopes (protocol, method, path, `X-Amz-Target`, `Authorization`).

use localsqs::command::Action;
use localsqs::wire::{Protocol, WireRequest};
use proptest::prelude::*;
use proptest::sample::select;

/// The base URL queue URLs are built on in the pipeline (`pipeline.rs`).
pub const BASE_URL: &str = "http://localhost:9324";
/// A placeholder the pipeline replaces with a live receipt handle of the standard queue.
pub const HANDLE: &str = "$HANDLE";
/// A placeholder the pipeline replaces with a live receipt handle of the FIFO queue.
pub const FIFO_HANDLE: &str = "$FIFO_HANDLE";

/// Characters chosen to break things, mixed with plain letters.
pub fn nasty_char() -> BoxedStrategy<char> {
    prop_oneof![
        6 => proptest::char::range('a', 'z'),
        3 => select(vec![
            '<', '>', '&', '"', '\'', '\r', '\n', '\t', ' ', '\u{0}', '\u{1}', '\u{8}', '\u{b}',
            '\u{c}', '\u{1b}', '\u{1f}', '\u{7f}', '\u{80}', '\u{85}', '\u{a0}', '\u{2028}',
            '\u{d7ff}', '\u{e000}', '\u{fffd}', '\u{fffe}', '\u{ffff}', '\u{10000}', '\u{1f600}',
            '\u{10ffff}', ']', '=', '%', '+', '.', '/', ':', '\\', '{', '}', ';', '#', '?',
        ]),
        1 => any::<char>(),
    ]
    .boxed()
}

/// A string of up to `max` [`nasty_char`]s.
pub fn nasty_string(max: usize) -> BoxedStrategy<String> {
    proptest::collection::vec(nasty_char(), 0..=max)
        .prop_map(|v| v.into_iter().collect())
        .boxed()
}

/// Number tokens as JSON writes them: small, boundary, beyond i64 and u64, floats, exponents
/// past f64.
pub fn number_token() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (0i64..=10).prop_map(|n| n.to_string()),
        2 => (-2i64..50).prop_map(|n| n.to_string()),
        3 => select(vec![
            "0", "-0", "1", "10", "11", "20", "21", "900", "901", "43200", "43201", "1000",
            "1001", "2147483647", "2147483648", "4294967296", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
            "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
            "1.5", "1.0", "1e2", "1E3", "-1e-7", "1e400", "-1e400", "0.0000000000000001",
        ])
        .prop_map(str::to_owned),
    ]
    .boxed()
}

/// Integers as a Query client might write them, and as it should not.
pub fn query_int() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (0i64..=10).prop_map(|n| n.to_string()),
        2 => (-2i64..50).prop_map(|n| n.to_string()),
        2 => select(vec![
            "", " 10 ", "+10", "0x10", "1.0", "1e3", "99999999999999999999", "-1",
            "9223372036854775808", "43201", "900", "901", "٣",
        ])
        .prop_map(str::to_owned),
        1 => nasty_string(6),
    ]
    .boxed()
}

/// Queue attribute names, real and not.
pub const ATTRIBUTE_NAMES: &[&str] = &[
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "ApproximateNumberOfMessages",
    "QueueArn",
    "All",
    "SenderId",
    "MessageGroupId",
    "",
];

const ATTRIBUTE_VALUES: &[&str] = &[
    "0",
    "1",
    "60",
    "900",
    "901",
    "-1",
    "1024",
    "1048577",
    "true",
    "false",
    "True",
    "queue",
    "messageGroup",
    "perQueue",
    "perMessageGroupId",
    "",
    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":2}"#,
    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:fuzz","maxReceiveCount":"5"}"#,
    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1e400}"#,
    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq.fifo","maxReceiveCount":0}"#,
    r#"{"deadLetterTargetArn":7}"#,
    r#"{"redrivePermission":"byQueue","sourceQueueArns":["arn:aws:sqs:us-east-1:000000000000:fuzz"]}"#,
    r#"{"redrivePermission":"denyAll","sourceQueueArns":[]}"#,
    r#"{"redrivePermission":"allowAll"}"#,
    r#"{"Version":"2012-10-17","Statement":[]}"#,
    "{",
    "[1,2",
];

/// Values a member of this name could plausibly carry, besides random strings.
fn plausible(member: &str) -> Vec<String> {
    let v: &[&str] = match member {
        "QueueUrl" => &[
            "$STD",
            "$STD",
            "$STD",
            "$FIFO",
            "$FIFO",
            "$FIFO",
            "$DLQ",
            "fuzz",
            "/000000000000/fuzz",
            "http://h/999999999999/fuzz",
            "http://h/000000000000/missing",
            "https://sqs.eu-west-1.amazonaws.com/000000000000/fuzz",
            "arn:aws:sqs:us-east-1:000000000000:fuzz",
            "",
            "/",
        ],
        "QueueName" => &[
            "fuzz",
            "fuzz.fifo",
            "new-q",
            "new.fifo",
            "dlq",
            "",
            "a.b",
            "-_",
        ],
        "ReceiptHandle" => &[HANDLE, FIFO_HANDLE, "garbage", "", "AQEB", "AQEBAAAA"],
        "MessageBody" => &["hello", "", " ", "\u{1f600}", "a\u{0}b", "<xml/>"],
        "MessageGroupId" | "MessageDeduplicationId" | "ReceiveRequestAttemptId" => {
            &["g1", "d1", "", "a b", "é", "!~", "x-y_z"]
        }
        "Label" => &["l1", "", "bad label", "x"],
        "SourceArn" | "DestinationArn" => &[
            "arn:aws:sqs:us-east-1:000000000000:dlq",
            "arn:aws:sqs:us-east-1:000000000000:fuzz",
            "arn:aws:sqs:us-east-1:000000000000:dlq.fifo",
            "arn:aws:sqs:x",
            "arn:aws:sqs:us-east-1:000000000000:",
            "",
        ],
        "TaskHandle" => &["garbage", "", "eyJ9", "AQEB"],
        "NextToken" => &["", "!!", "YQ", "ZnV6eg", "=="],
        "QueueNamePrefix" => &["f", "", "dlq"],
        "QueueOwnerAWSAccountId" => &["000000000000", "123456789012", "x"],
        "Id" => &["a", "b", "a", "", "x.y", "ok_1-2"],
        "DataType" => &[
            "String",
            "Number",
            "Binary",
            "String.custom",
            "Number.int",
            "Binary.gif",
            "",
            "Strin",
            "String.",
            "Number",
        ],
        "StringValue" => &["v", "12", "-1.5e3", "1e400", "", "abc"],
        "BinaryValue" => &["AAEC", "", "!!!", "AAE", "AAEC====", "AQ=="],
        "AttributeNames" | "MessageSystemAttributeNames" => &[
            "All",
            "QueueArn",
            "ApproximateNumberOfMessages",
            "SenderId",
            "SentTimestamp",
            "MessageGroupId",
            "Policy",
            "",
        ],
        "MessageAttributeNames" => &["All", ".*", "*", "a.*", "x", "AWS.", ""],
        "TagKeys" | "TagKey" => &["team", "aws:x", "", "Team"],
        "AWSAccountIds" => &["000000000000", "123456789012", ""],
        "Actions" => &["SendMessage", "*", "ReceiveMessage", "Bogus", ""],
        _ => &[""],
    };
    let mut out: Vec<String> = v.iter().map(|s| (*s).to_owned()).collect();
    if member == "MessageBody" {
        out.push("x".repeat(300));
    }
    out
}

/// Replaces the queue placeholders of [`plausible`] with real URLs.
pub fn with_urls(s: &str) -> String {
    s.replace("$STD", &format!("{BASE_URL}/000000000000/fuzz"))
        .replace("$FIFO", &format!("{BASE_URL}/000000000000/fuzz.fifo"))
        .replace("$DLQ", &format!("{BASE_URL}/000000000000/dlq"))
}

/// A string value for `member`: plausible most of the time, random otherwise.
pub fn member_string(member: &str) -> BoxedStrategy<String> {
    let plausible = plausible(member);
    prop_oneof![
        3 => select(plausible).prop_map(|s| with_urls(&s)),
        1 => nasty_string(12),
    ]
    .boxed()
}

/// A queue attribute name (real most of the time).
pub fn attribute_name() -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(ATTRIBUTE_NAMES).prop_map(str::to_owned),
        1 => nasty_string(8),
    ]
    .boxed()
}

/// A queue attribute value (plausible most of the time).
pub fn attribute_value() -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(ATTRIBUTE_VALUES).prop_map(str::to_owned),
        1 => nasty_string(8),
    ]
    .boxed()
}

/// Any action, or a name that is not one.
pub fn action_name() -> BoxedStrategy<String> {
    prop_oneof![
        16 => select(Action::ALL).prop_map(|a| a.name().to_owned()),
        1 => select(vec!["", "sendMessage", "SendMessage ", "Send%4Dessage", "FooBar"])
            .prop_map(str::to_owned),
        1 => nasty_string(10),
    ]
    .boxed()
}

/// The parts of a request besides its body and query string.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// Request method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// `Authorization` header.
    pub authorization: Option<String>,
    /// `X-Amzn-Trace-Id` header.
    pub trace_header: Option<String>,
}

/// Methods, paths and headers: plausible, odd and hostile.
pub fn envelope() -> BoxedStrategy<Envelope> {
    let method = select(vec!["POST", "GET", "PUT", "", "post"]).prop_map(str::to_owned);
    let path = prop_oneof![
        3 => Just("/".to_owned()),
        2 => Just("/000000000000/fuzz".to_owned()),
        1 => Just("/000000000000/fuzz.fifo".to_owned()),
        1 => select(vec!["/999999999999/fuzz", "/a/b/c", "//", "/000000000000/", "/x"])
            .prop_map(str::to_owned),
        1 => nasty_string(10).prop_map(|s| format!("/{s}")),
    ];
    let authorization = proptest::option::weighted(
        0.3,
        prop_oneof![
            2 => Just(
                "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, \
                 SignedHeaders=host, Signature=x"
                    .to_owned()
            ),
            1 => (nasty_string(12), nasty_string(12)).prop_map(|(k, r)| format!(
                "AWS4-HMAC-SHA256 Credential={k}/20260101/{r}/sqs/aws4_request"
            )),
            1 => Just("AWS4-HMAC-SHA256 Credential=123456789012/d/eu-west-1/sqs/x".to_owned()),
            1 => Just("AWS4-HMAC-SHA256 Credential=//".to_owned()),
            1 => nasty_string(20),
        ],
    );
    let trace = proptest::option::of(nasty_string(20));
    (method, path, authorization, trace)
        .prop_map(|(method, path, authorization, trace_header)| Envelope {
            method,
            path,
            authorization,
            trace_header,
        })
        .boxed()
}

/// A wire request in `protocol` with this envelope, target, query string and body, owning
/// what [`WireRequest`] borrows.
pub struct OwnedRequest {
    protocol: Protocol,
    env: Envelope,
    target: Option<String>,
    query: Option<String>,
    body: Vec<u8>,
}

impl OwnedRequest {
    /// The request as the wire layer reads it.
    pub fn wire(&self) -> WireRequest<'_> {
        WireRequest {
            protocol: self.protocol,
            method: &self.env.method,
            path: &self.env.path,
            query: self.query.as_deref(),
            target: self.target.as_deref(),
            trace_header: self.env.trace_header.as_deref(),
            authorization: self.env.authorization.as_deref(),
            base_url: BASE_URL.to_owned(),
            body: &self.body,
        }
    }
}

/// A wire request in `protocol` with this envelope, target, query string and body.
pub fn request(
    protocol: Protocol,
    env: &Envelope,
    target: Option<String>,
    query: Option<String>,
    body: Vec<u8>,
) -> OwnedRequest {
    OwnedRequest {
        protocol,
        env: env.clone(),
        target,
        query,
        body,
    }
}

/// `X-Amz-Target` values: the real one for `action`, others, garbage.
pub fn target_for(action: String) -> BoxedStrategy<Option<String>> {
    prop_oneof![
        20 => Just(Some(format!("AmazonSQS.{action}"))),
        1 => Just(None),
        1 => Just(Some(format!("AmazonSQS.{}", action.to_lowercase()))),
        1 => Just(Some(format!("AmazonSQSv2.{action}"))),
        1 => nasty_string(16).prop_map(Some),
    ]
    .boxed()
}
