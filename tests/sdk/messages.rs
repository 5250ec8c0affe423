//! Messages: send/receive/delete round trips with message and system attributes and their MD5s,
//! attribute filtering, byte-exact bodies, AWSTraceHeader, delays, retention, and what standard
//! queues do with FIFO parameters. Section numbers refer to docs/protocol.md.

use std::collections::HashMap;

use aws_sdk_sqs::types::{
    MessageSystemAttributeName, MessageSystemAttributeNameForSends, MessageSystemAttributeValue,
    QueueAttributeName,
};

use crate::harness::{
    START_MS, TestServer, binary_attr, delete, delete_handle, expect_error, handle, md5_hex,
    md5_of_attributes, only, receive_vis, string_attr,
};

/// The attribute MD5 helper itself matches the vectors of §6.4, so the tests below that compare
/// the server's MD5s against it are meaningful.
#[test]
fn md5_helper_matches_reference_vectors() {
    let one = |name: &str, v| HashMap::from([(name.to_owned(), v)]);
    assert_eq!(
        md5_of_attributes(&one("Foo", string_attr("String", "Bar"))),
        "ae7155c6026991b6d54b11589678bf9c"
    );
    assert_eq!(
        md5_of_attributes(&one(
            "timestamp",
            string_attr("Number.java.lang.Long", "1493147359900")
        )),
        "2e2e4876d8e0bd6b8c2c8f556831c349"
    );
    assert_eq!(
        md5_of_attributes(&one("b", binary_attr("Binary", &[0, 1, 2]))),
        "0911ac989fa4a4b3440f074ba9941547"
    );
    let three = HashMap::from([
        ("General".to_owned(), string_attr("String", "Kenobi")),
        ("Hello".to_owned(), string_attr("String", "There")),
        ("Help.Me".to_owned(), string_attr("String", "Me")),
    ]);
    assert_eq!(
        md5_of_attributes(&three),
        "4c360f3fdafd970e05fae2f149d997f5"
    );
    assert_eq!(md5_hex(b"msg"), "6e2baaf3b97dbeef01c0043275f9a0e7");
}

/// 1. Full round trip with String, custom Number and Binary attributes, then delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_receive_delete_round_trip_with_attributes() {
    let t = TestServer::start().await;
    let url = t.create_queue("roundtrip", &[]).await;
    let body = "hello, localsqs";
    let binary: Vec<u8> = vec![0x00, 0x01, 0xfe, 0xff, 0x80, b'\n', 0x7f];
    let sent_attrs = HashMap::from([
        ("color".to_owned(), string_attr("String", "blue")),
        (
            "timestamp".to_owned(),
            string_attr("Number.java.lang.Long", "1493147359900"),
        ),
        ("blob".to_owned(), binary_attr("Binary", &binary)),
    ]);
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .set_message_attributes(Some(sent_attrs.clone()))
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_hex(body.as_bytes()).as_str())
    );
    let send_attr_md5 = sent
        .md5_of_message_attributes()
        .expect("MD5OfMessageAttributes on send")
        .to_owned();
    assert_eq!(send_attr_md5, md5_of_attributes(&sent_attrs));
    assert!(
        sent.md5_of_message_system_attributes().is_none(),
        "no system attributes were sent"
    );
    assert!(
        sent.sequence_number().is_none(),
        "standard queues have no SequenceNumber"
    );
    let message_id = sent.message_id().expect("MessageId").to_owned();

    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .expect("ReceiveMessage");
    let m = only(out.messages().to_vec(), "one message");
    assert_eq!(m.message_id(), Some(message_id.as_str()));
    assert_eq!(m.body(), Some(body));
    assert_eq!(m.md5_of_body(), Some(md5_hex(body.as_bytes()).as_str()));
    assert_eq!(m.md5_of_message_attributes(), Some(send_attr_md5.as_str()));

    let got = m.message_attributes().expect("MessageAttributes");
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got["color"].data_type(), "String");
    assert_eq!(got["color"].string_value(), Some("blue"));
    assert_eq!(got["timestamp"].data_type(), "Number.java.lang.Long");
    assert_eq!(got["timestamp"].string_value(), Some("1493147359900"));
    assert_eq!(got["blob"].data_type(), "Binary");
    assert_eq!(
        got["blob"].binary_value().map(|b| b.as_ref().to_vec()),
        Some(binary.clone())
    );
    assert!(got["blob"].string_value().is_none());
    assert_eq!(md5_of_attributes(got), send_attr_md5);

    let sys = m
        .attributes()
        .expect("system attributes requested with All");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::SentTimestamp)
            .map(String::as_str),
        Some(START_MS.to_string().as_str())
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateFirstReceiveTimestamp)
            .map(String::as_str),
        Some(START_MS.to_string().as_str())
    );
    assert!(sys.contains_key(&MessageSystemAttributeName::SenderId));

    delete(&t, &url, &m).await;
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::ApproximateNumberOfMessages)
            .await,
        "0"
    );
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // Even once the visibility timeout would have run out, nothing comes back.
    t.advance_secs(31);
    assert!(t.receive(&url, 10).await.is_empty());
    t.shutdown().await;
}

/// Receiving with a subset of attribute names returns only those, with the MD5 over exactly
/// what is returned (G-6); receiving without names returns no MessageAttributes at all (G-3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_filters_message_attributes() {
    let t = TestServer::start().await;
    let url = t.create_queue("filters", &[]).await;
    let attrs = HashMap::from([
        ("General".to_owned(), string_attr("String", "Kenobi")),
        ("Hello".to_owned(), string_attr("String", "There")),
        ("Help.Me".to_owned(), string_attr("String", "Me")),
    ]);
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("filtered")
        .set_message_attributes(Some(attrs))
        .send()
        .await
        .expect("SendMessage");
    for (selector, expected_names, expected_md5) in [
        (
            vec!["Hel.*"],
            vec!["Hello", "Help.Me"],
            Some("83fee93c1bcd8b9a5a923ffacdc636c7"),
        ),
        (
            vec!["Hello", "Missing"],
            vec!["Hello"],
            Some("a311262e065454b75da111d535b8dacd"),
        ),
        (vec![], vec![], None),
    ] {
        let out = t
            .client
            .receive_message()
            .queue_url(&url)
            .set_message_attribute_names(Some(selector.iter().map(|s| (*s).to_owned()).collect()))
            .visibility_timeout(0)
            .send()
            .await
            .expect("ReceiveMessage");
        let m = only(out.messages().to_vec(), &format!("selector {selector:?}"));
        let mut names: Vec<&str> = m
            .message_attributes()
            .map(|a| a.keys().map(String::as_str).collect())
            .unwrap_or_default();
        names.sort_unstable();
        assert_eq!(names, expected_names, "selector {selector:?}");
        assert_eq!(
            m.md5_of_message_attributes(),
            expected_md5,
            "selector {selector:?}"
        );
        if expected_names.is_empty() {
            assert!(
                m.message_attributes.is_none(),
                "no empty MessageAttributes map (G-3): {m:?}"
            );
        }
    }
    t.shutdown().await;
}

/// 13. A body with XML/JSON-special characters, CR LF and non-ASCII text comes back byte-exact
/// (§6.3, G-7).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_characters_round_trip_exactly() {
    let t = TestServer::start().await;
    let url = t.create_queue("chars", &[]).await;
    let body = "quote \" amp & lt < gt > apos ' crlf \r\n cr \r lf \n tab \t \
                &quot; &amp; <![CDATA[x]]> \\u0041 \u{e9}\u{e8} \u{65e5}\u{672c} \u{1f980} \u{e000}\u{fffd}";
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .message_attributes("note", string_attr("String", body))
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_hex(body.as_bytes()).as_str())
    );
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("note")
        .send()
        .await
        .expect("ReceiveMessage");
    let m = only(out.messages().to_vec(), "one message");
    assert_eq!(m.body().map(str::as_bytes), Some(body.as_bytes()));
    assert_eq!(m.md5_of_body(), Some(md5_hex(body.as_bytes()).as_str()));
    let note = &m.message_attributes().expect("MessageAttributes")["note"];
    assert_eq!(note.string_value(), Some(body));
    assert_eq!(
        m.md5_of_message_attributes(),
        sent.md5_of_message_attributes()
    );
    t.shutdown().await;
}

/// 14. AWSTraceHeader sent as a message system attribute: MD5OfMessageSystemAttributes on send,
/// returned on receive only when asked for (§6.4, §6.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_trace_header_system_attribute() {
    let t = TestServer::start().await;
    let url = t.create_queue("trace", &[]).await;
    let trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("traced")
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            MessageSystemAttributeValue::builder()
                .data_type("String")
                .string_value(trace)
                .build()
                .expect("system attribute builds"),
        )
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_system_attributes(),
        Some("5ae4d5d7636402d80f4eb6d213245a88")
    );
    assert!(
        sent.md5_of_message_attributes().is_none(),
        "system attributes do not make an MD5OfMessageAttributes (G-2)"
    );

    let receive = |names: Vec<MessageSystemAttributeName>| {
        t.client
            .receive_message()
            .queue_url(&url)
            .set_message_system_attribute_names((!names.is_empty()).then_some(names))
            .visibility_timeout(0)
            .send()
    };
    let out = receive(vec![MessageSystemAttributeName::AwsTraceHeader])
        .await
        .expect("ReceiveMessage");
    let m = only(out.messages().to_vec(), "one message");
    let sys = m.attributes().expect("AWSTraceHeader requested");
    assert_eq!(sys.len(), 1, "only what was asked for: {sys:?}");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::AwsTraceHeader)
            .map(String::as_str),
        Some(trace)
    );
    assert!(m.md5_of_message_attributes().is_none());
    assert!(m.message_attributes.is_none());

    let out = receive(vec![MessageSystemAttributeName::All])
        .await
        .expect("ReceiveMessage");
    let m = only(out.messages().to_vec(), "one message");
    let sys = m.attributes().expect("All requested");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::AwsTraceHeader)
            .map(String::as_str),
        Some(trace)
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
            .map(String::as_str),
        Some("2")
    );

    let out = receive(vec![]).await.expect("ReceiveMessage");
    let m = only(out.messages().to_vec(), "one message");
    assert!(m.attributes.is_none(), "no names, no Attributes: {m:?}");
    t.shutdown().await;
}

/// 9. Queue-level and per-message DelaySeconds, and ApproximateNumberOfMessagesDelayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_seconds_queue_and_message() {
    let t = TestServer::start().await;
    let url = t
        .create_queue("delayed", &[(QueueAttributeName::DelaySeconds, "5")])
        .await;
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::DelaySeconds).await,
        "5"
    );

    // The queue's delay applies by default.
    t.send(&url, "queue delay").await;
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(4);
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    t.advance_secs(1);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let m = only(t.receive(&url, 10).await, "delay over");
    assert_eq!(m.body(), Some("queue delay"));
    delete(&t, &url, &m).await;

    // A per-message value overrides it, both ways.
    for (delay, body) in [(0, "no delay"), (10, "ten seconds")] {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .expect("SendMessage with DelaySeconds");
    }
    assert_eq!(t.counts(&url).await, (1, 0, 1));
    let now = only(t.receive(&url, 10).await, "undelayed one");
    assert_eq!(now.body(), Some("no delay"));
    t.advance_secs(9);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "9 s into a 10 s delay"
    );
    assert_eq!(t.counts(&url).await, (0, 1, 1));
    t.advance_secs(1);
    assert_eq!(t.counts(&url).await.2, 0, "nothing delayed any more");
    let later = only(t.receive(&url, 10).await, "delayed one");
    assert_eq!(later.body(), Some("ten seconds"));
    t.shutdown().await;
}

/// 10. Messages older than MessageRetentionPeriod disappear, in flight or not (§6.15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_period_drops_messages_even_in_flight() {
    let t = TestServer::start().await;
    let url = t
        .create_queue(
            "retention",
            &[(QueueAttributeName::MessageRetentionPeriod, "60")],
        )
        .await;
    t.send(&url, "in flight").await;
    t.send(&url, "waiting").await;
    let held = only(receive_vis(&t, &url, 1, 300).await, "one message");
    assert_eq!(t.counts(&url).await, (1, 1, 0));

    t.advance_secs(59);
    assert_eq!(t.counts(&url).await, (1, 1, 0), "59 s old: still retained");
    t.advance_secs(2);
    assert_eq!(t.counts(&url).await, (0, 0, 0), "61 s old: both gone");
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(300);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "the in-flight one does not come back after its visibility timeout"
    );
    // Its handle is well-formed, so deleting it is a harmless success.
    delete_handle(&t, &url, handle(&held))
        .await
        .expect("DeleteMessage of an expired message");
    t.shutdown().await;
}

/// Standard queues accept a MessageGroupId and return it ("fair queues"), accept and ignore a
/// ReceiveRequestAttemptId, and reject a MessageDeduplicationId (§6.5, §6.7).
#[tokio::test]
async fn standard_queue_group_ids_attempt_ids_and_dedup_ids() {
    let t = TestServer::start().await;
    let url = t.create_queue("fair", &[]).await;
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("tenant message")
        .message_group_id("tenant-1")
        .send()
        .await
        .expect("a group id is accepted on a standard queue");
    let got = t
        .client
        .receive_message()
        .queue_url(&url)
        .receive_request_attempt_id("attempt-1")
        .message_system_attribute_names(
            aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId,
        )
        .send()
        .await
        .expect("an attempt id is accepted on a standard queue");
    let m = only(got.messages().to_vec(), "message");
    let attrs = m.attributes().expect("attributes");
    assert_eq!(
        attrs
            .get(&aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId)
            .map(String::as_str),
        Some("tenant-1")
    );
    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_deduplication_id("d1")
        .send()
        .await;
    expect_error(
        "a dedup id is not valid for a standard queue",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    t.shutdown().await;
}
