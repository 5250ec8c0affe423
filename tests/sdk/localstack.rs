//! LocalStack's developer endpoint and override headers under `--compat localstack` (docs/migrating.md
//! "What --compat localstack changes"; docs/protocol.md §1.5): `/_aws/sqs/messages` as an SDK's endpoint URL, its
//! JSON and error shapes, and the headers that lift ReceiveMessage's limits.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use localsqs::Compat;
use serde_json::{Value, json};

use super::harness::{HANG_GUARD, TestServer, bodies, client, expect_error};
use super::http::{exchange, get};

async fn localstack() -> TestServer {
    TestServer::start_from(localsqs::Server::builder().compat(Compat::LocalStack)).await
}

/// A client whose endpoint URL is the developer endpoint, as LocalStack's tests make one.
fn developer_client(t: &TestServer) -> aws_sdk_sqs::Client {
    client(&format!("{}/_aws/sqs/messages", t.server.endpoint()))
}

fn attrs(m: &aws_sdk_sqs::types::Message) -> HashMap<String, String> {
    m.attributes()
        .map(|a| {
            a.iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_developer_endpoint_as_an_sdk_endpoint_lists_without_receiving() {
    let t = localstack().await;
    let url = t.create_queue("dev", &[]).await;
    t.send(&url, "message-1").await;
    t.send(&url, "message-2").await;
    let dev = developer_client(&t);
    let got = dev
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .send()
        .await
        .expect("the developer endpoint answers a ReceiveMessage");
    let messages = got.messages();
    assert_eq!(
        bodies(messages),
        ["message-1", "message-2"],
        "MaxNumberOfMessages is ignored"
    );
    for m in messages {
        assert_eq!(attrs(m)["ApproximateReceiveCount"], "0");
        assert_eq!(attrs(m)["ApproximateFirstReceiveTimestamp"], "0");
        assert_eq!(m.receipt_handle(), Some("SQS/BACKDOOR/ACCESS"));
    }
    assert_eq!(t.counts(&url).await, (2, 0, 0), "nothing became invisible");
    // A real receive still gets the first message, received once.
    let real = t.receive(&url, 1).await;
    assert_eq!(bodies(&real), ["message-1"]);
    assert_eq!(attrs(&real[0])["ApproximateReceiveCount"], "1");

    // Any other action is refused, and changes nothing.
    let res = dev
        .send_message()
        .queue_url(&url)
        .message_body("foobar")
        .send()
        .await;
    expect_error(
        "SendMessage to the developer endpoint",
        res,
        400,
        "InvalidRequest",
        Some("This endpoint only accepts ReceiveMessage calls"),
    );
    assert_eq!(t.counts(&url).await, (1, 1, 0), "nothing was stored");

    // FIFO: every group's messages, in order, with their group ids.
    let fifo = t
        .create_queue(
            "dev.fifo",
            &[
                (QueueAttributeName::FifoQueue, "true"),
                (QueueAttributeName::ContentBasedDeduplication, "true"),
            ],
        )
        .await;
    for (body, group) in [("message-1", "1"), ("message-2", "1"), ("message-3", "2")] {
        t.client
            .send_message()
            .queue_url(&fifo)
            .message_body(body)
            .message_group_id(group)
            .send()
            .await
            .expect("sends");
    }
    let got = dev
        .receive_message()
        .queue_url(&fifo)
        .max_number_of_messages(1)
        .send()
        .await
        .expect("lists");
    assert_eq!(
        bodies(got.messages()),
        ["message-1", "message-2", "message-3"]
    );
    let groups: Vec<String> = got
        .messages()
        .iter()
        .map(|m| attrs(m)["MessageGroupId"].clone())
        .collect();
    assert_eq!(groups, ["1", "1", "2"]);
    t.shutdown().await;
}

/// Without `--compat localstack` the path is the SQS API's, as before: a real receive.
#[tokio::test]
async fn without_compat_the_developer_path_receives() {
    let t = TestServer::start().await;
    let url = t.create_queue("plain", &[]).await;
    t.send(&url, "one").await;
    t.send(&url, "two").await;
    let got = developer_client(&t)
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(1)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["one"]);
    assert_eq!(attrs(&got.messages()[0])["ApproximateReceiveCount"], "1");
    t.shutdown().await;
}

/// `GET /_aws/sqs/messages` with `Accept: application/json`, parsed.
async fn peek_json(t: &TestServer, query: &str) -> (u16, Value) {
    let resp = get(
        t.server.local_addr(),
        &format!("/_aws/sqs/messages{query}"),
        &[("Accept", "application/json")],
    )
    .await
    .expect("answered");
    let v = serde_json::from_str(&resp.body).unwrap_or_else(|e| panic!("{e}: {}", resp.body));
    (resp.status, v)
}

fn messages_of(v: &Value) -> &Value {
    &v["ReceiveMessageResponse"]["ReceiveMessageResult"]["Message"]
}

fn attribute_map(message: &Value) -> HashMap<String, String> {
    let list = match &message["Attribute"] {
        Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    list.iter()
        .map(|a| {
            let s = |k: &str| a[k].as_str().expect("string").to_owned();
            (s("Name"), s("Value"))
        })
        .collect()
}

#[tokio::test]
async fn the_json_peek_has_localstack_shapes() {
    let t = localstack().await;
    let url = t.create_queue("shapes", &[]).await;
    t.send(&url, "message-1").await;
    // One message: an object, not a list; ApproximateFirstReceiveTimestamp is there.
    let (status, v) = peek_json(&t, &format!("?QueueUrl={url}")).await;
    assert_eq!(status, 200, "{v}");
    let one = messages_of(&v);
    assert!(one.is_object(), "{v}");
    assert_eq!(one["Body"], "message-1");
    assert_eq!(one["MD5OfBody"], "3d6b824fd8c1520e9a047d21fee6fb1f");
    let a = attribute_map(one);
    assert_eq!(a["SenderId"], "000000000000");
    assert_eq!(a["ApproximateFirstReceiveTimestamp"], "0");
    assert!(
        !a.contains_key("IsVisible") && !a.contains_key("IsDelayed"),
        "{a:?}"
    );
    // In flight and delayed messages, on request, with IsVisible and IsDelayed.
    t.send(&url, "message-2").await;
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("message-3")
        .delay_seconds(10)
        .send()
        .await
        .expect("sends");
    assert_eq!(bodies(&t.receive(&url, 1).await), ["message-1"]);
    let (_, v) = peek_json(&t, &format!("?QueueUrl={url}&ShowInvisible=false")).await;
    assert_eq!(
        messages_of(&v)["Body"],
        "message-2",
        "only the visible one: {v}"
    );
    let (_, v) = peek_json(
        &t,
        &format!("?QueueUrl={url}&ShowInvisible=true&ShowDelayed=true"),
    )
    .await;
    let all = messages_of(&v).as_array().expect("three");
    let seen: Vec<(String, String, String)> = all
        .iter()
        .map(|m| {
            let a = attribute_map(m);
            (
                m["Body"].as_str().expect("body").to_owned(),
                a["IsVisible"].clone(),
                a["IsDelayed"].clone(),
            )
        })
        .collect();
    let row = |b: &str, v: &str, d: &str| (b.to_owned(), v.to_owned(), d.to_owned());
    assert_eq!(
        seen,
        [
            row("message-1", "false", "false"),
            row("message-2", "true", "false"),
            row("message-3", "true", "true"),
        ]
    );
    let received = &all[0];
    assert_ne!(
        attribute_map(received)["ApproximateFirstReceiveTimestamp"],
        "0",
        "a received message has its first receive"
    );
    assert_eq!(t.counts(&url).await, (1, 1, 1), "the peeks changed nothing");
    // Nothing to list: the result is null, as xmltodict reads an empty element.
    let empty = t.create_queue("empty", &[]).await;
    let (_, v) = peek_json(&t, &format!("?QueueUrl={empty}")).await;
    assert_eq!(
        v["ReceiveMessageResponse"]["ReceiveMessageResult"],
        Value::Null,
        "{v}"
    );
    t.shutdown().await;
}

#[tokio::test]
async fn a_fifo_group_in_flight_is_hidden_whole() {
    let t = localstack().await;
    let url = t
        .create_queue(
            "groups.fifo",
            &[
                (QueueAttributeName::FifoQueue, "true"),
                (QueueAttributeName::ContentBasedDeduplication, "true"),
                (QueueAttributeName::VisibilityTimeout, "120"),
            ],
        )
        .await;
    for (body, group) in [
        ("message-1", "1"),
        ("message-2", "1"),
        ("message-3", "2"),
        ("message-4", "2"),
    ] {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(body)
            .message_group_id(group)
            .send()
            .await
            .expect("sends");
    }
    assert_eq!(bodies(&t.receive(&url, 1).await), ["message-1"]);
    let (_, v) = peek_json(&t, &format!("?QueueUrl={url}&ShowInvisible=false")).await;
    let shown: Vec<&str> = messages_of(&v)
        .as_array()
        .expect("two")
        .iter()
        .map(|m| m["Body"].as_str().expect("body"))
        .collect();
    assert_eq!(shown, ["message-3", "message-4"], "group 1 is in flight");
    let (_, v) = peek_json(&t, &format!("?QueueUrl={url}&ShowInvisible=true")).await;
    let visible: Vec<(String, String)> = messages_of(&v)
        .as_array()
        .expect("four")
        .iter()
        .map(|m| {
            let body = m["Body"].as_str().expect("body").to_owned();
            (body, attribute_map(m)["IsVisible"].clone())
        })
        .collect();
    let row = |b: &str, v: &str| (b.to_owned(), v.to_owned());
    assert_eq!(
        visible,
        [
            row("message-1", "false"),
            row("message-2", "true"),
            row("message-3", "true"),
            row("message-4", "true"),
        ]
    );
    t.shutdown().await;
}

#[tokio::test]
async fn developer_endpoint_errors_are_localstack_documents() {
    let t = localstack().await;
    let error = |v: &Value| v["ErrorResponse"]["Error"]["Code"].clone();
    let (status, v) = peek_json(&t, "").await;
    assert_eq!(
        (status, error(&v)),
        (400, json!("AWS.SimpleQueueService.NonExistentQueue")),
        "{v}"
    );
    let (status, v) = peek_json(&t, "?QueueUrl=http://localhost:4566/nonsense").await;
    assert_eq!((status, error(&v)), (404, json!("InvalidAddress")), "{v}");
    assert_eq!(
        v["ErrorResponse"]["Error"]["Message"],
        "The address https://queue.amazonaws.com/ is not valid for this endpoint."
    );
    let (status, v) = peek_json(
        &t,
        "?QueueUrl=http://localhost:4566/000000000000/hopefullydoesnotexist",
    )
    .await;
    assert_eq!(
        (status, error(&v)),
        (400, json!("AWS.SimpleQueueService.NonExistentQueue"))
    );
    t.create_queue("here", &[]).await;
    let (status, _) = peek_json(&t, "/us-east-1/000000000000/here").await;
    assert_eq!(status, 200);
    let (status, v) = peek_json(&t, "/us-east-2/000000000000/here").await;
    assert_eq!(
        (status, error(&v)),
        (400, json!("AWS.SimpleQueueService.NonExistentQueue"))
    );
    t.shutdown().await;
}

/// A JSON ReceiveMessage with LocalStack's override headers.
async fn receive_with(t: &TestServer, url: &str, headers: &[(&str, &str)], body: Value) -> Value {
    let mut all = vec![
        ("X-Amz-Target", "AmazonSQS.ReceiveMessage"),
        ("Content-Type", "application/x-amz-json-1.0"),
    ];
    all.extend_from_slice(headers);
    let mut body = body;
    body["QueueUrl"] = json!(url);
    let resp = exchange(t.server.local_addr(), "POST", "/", &all, &body.to_string())
        .await
        .expect("answered");
    assert_eq!(resp.status, 200, "{}", resp.body);
    serde_json::from_str(&resp.body).expect("json")
}

#[tokio::test]
async fn the_override_count_lifts_max_number_of_messages() {
    let t = localstack().await;
    let url = t.create_queue("many", &[]).await;
    for i in 0..25 {
        t.send(&url, &format!("message-{i}")).await;
    }
    let res = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(20)
        .send()
        .await;
    expect_error(
        "20 without the header",
        res,
        400,
        "InvalidParameterValue",
        Some(
            "Value 20 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
        ),
    );
    let header = [("x-localstack-sqs-override-message-count", "20")];
    let v = receive_with(&t, &url, &header, json!({"MaxNumberOfMessages": 10})).await;
    assert_eq!(v["Messages"].as_array().map(Vec::len), Some(20), "{v}");
    // Not an integer, or 0: ignored, as LocalStack ignores it.
    for value in ["lots", "0"] {
        let header = [("x-localstack-sqs-override-message-count", value)];
        let v = receive_with(&t, &url, &header, json!({"MaxNumberOfMessages": 2})).await;
        assert_eq!(
            v["Messages"].as_array().map(Vec::len),
            Some(2),
            "{value}: {v}"
        );
    }
    t.shutdown().await;
}

#[tokio::test]
async fn the_override_wait_waits_for_a_full_batch() {
    let t = localstack().await;
    let url = t.create_queue("patient", &[]).await;
    for i in 0..9 {
        t.send(&url, &format!("message-{i}")).await;
    }
    let poll = {
        let addr = t.server.local_addr();
        let url = url.clone();
        tokio::spawn(async move {
            let body = json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 20});
            exchange(
                addr,
                "POST",
                "/",
                &[
                    ("X-Amz-Target", "AmazonSQS.ReceiveMessage"),
                    ("Content-Type", "application/x-amz-json-1.0"),
                    ("x-localstack-sqs-override-wait-time-seconds", "30"),
                ],
                &body.to_string(),
            )
            .await
        })
    };
    // Nine of ten are there, yet the poll waits for the tenth (a plain long poll would answer
    // at once), past WaitTimeSeconds' 20 s.
    let mut poll = poll;
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "the poll waits for a full batch"
    );
    t.advance_secs(25);
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err(),
        "still waiting after 25 s of 30"
    );
    t.send(&url, "message-9").await;
    let resp = tokio::time::timeout(HANG_GUARD, poll)
        .await
        .expect("answered")
        .expect("task")
        .expect("exchange");
    let v: Value = serde_json::from_str(&resp.body).expect("json");
    assert_eq!(v["Messages"].as_array().map(Vec::len), Some(10), "{v}");
    assert_eq!(t.counts(&url).await, (0, 10, 0));

    // Its time up, a filling poll answers with what it has.
    let url = t.create_queue("patient-too", &[]).await;
    t.send(&url, "late-1").await;
    let addr = t.server.local_addr();
    let poll = tokio::spawn(async move {
        let body = json!({"QueueUrl": url, "MaxNumberOfMessages": 10});
        exchange(
            addr,
            "POST",
            "/",
            &[
                ("X-Amz-Target", "AmazonSQS.ReceiveMessage"),
                ("Content-Type", "application/x-amz-json-1.0"),
                ("x-localstack-sqs-override-wait-time-seconds", "30"),
            ],
            &body.to_string(),
        )
        .await
    });
    let mut poll = poll;
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut poll)
            .await
            .is_err()
    );
    t.advance_secs(30);
    let resp = tokio::time::timeout(HANG_GUARD, poll)
        .await
        .expect("answered")
        .expect("task")
        .expect("exchange");
    let v: Value = serde_json::from_str(&resp.body).expect("json");
    let got: Vec<&str> = v["Messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["Body"].as_str().expect("body"))
        .collect();
    assert_eq!(got, ["late-1"]);
    t.shutdown().await;
}

/// With a ReceiveRequestAttemptId the wait override does not fill the batch: the first answer
/// is the one a retry returns.
#[tokio::test]
async fn the_override_wait_with_an_attempt_id_answers_at_once() {
    let t = localstack().await;
    let url = t
        .create_queue(
            "attempts.fifo",
            &[
                (QueueAttributeName::FifoQueue, "true"),
                (QueueAttributeName::ContentBasedDeduplication, "true"),
            ],
        )
        .await;
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("only")
        .message_group_id("g")
        .send()
        .await
        .expect("sends");
    let body = json!({"MaxNumberOfMessages": 10, "ReceiveRequestAttemptId": "a-1"});
    let header = [("x-localstack-sqs-override-wait-time-seconds", "30")];
    for _ in 0..2 {
        let v = receive_with(&t, &url, &header, body.clone()).await;
        let got: Vec<&str> = v["Messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["Body"].as_str().expect("body"))
            .collect();
        assert_eq!(
            got,
            ["only"],
            "answered at once, and the retry the same: {v}"
        );
    }
    t.shutdown().await;
}
