//! Publishing into queues (docs/sns.md §6, §7, §9): the JSON envelope, raw delivery with its
//! attributes, MessageStructure=json, queues of other regions and accounts, dead-letter queues
//! for undeliverable messages, Publish's and PublishBatch's errors, and durability.

use aws_sdk_sns::types::{MessageAttributeValue, PublishBatchRequestEntry};
use serde_json::Value;

use super::{bodies, create_topic, queue, sns, subscribe};
use crate::harness::{START_MS, TestServer, expect_error};

fn attr(ty: &str, v: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type(ty)
        .string_value(v)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_publish_reaches_every_queue_as_an_envelope_or_raw() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "orders").await;
    let (json_url, json_q) = queue(&t, "json").await;
    let (raw_url, raw_q) = queue(&t, "raw").await;
    let json_sub = subscribe(&sns, &topic, &json_q, &[]).await;
    subscribe(&sns, &topic, &raw_q, &[("RawMessageDelivery", "true")]).await;
    let out = sns
        .publish()
        .topic_arn(&topic)
        .message("say \"hi\"")
        .subject("greeting")
        .message_attributes("kind", attr("String", "order"))
        .message_attributes("n", attr("Number", "5"))
        .send()
        .await
        .unwrap();
    let id = out.message_id().unwrap().to_owned();
    assert!(out.sequence_number().is_none());

    let m = t.receive(&json_url, 10).await;
    assert_eq!(m.len(), 1);
    let body = m[0].body().unwrap();
    assert!(
        body.starts_with("{\n  \"Type\" : \"Notification\",\n"),
        "{body}"
    );
    let v: Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["MessageId"], id);
    assert_eq!(v["TopicArn"], topic);
    assert_eq!(v["Subject"], "greeting");
    assert_eq!(v["Message"], "say \"hi\"");
    assert_eq!(v["Timestamp"], "2023-11-14T22:13:20.000Z");
    assert_eq!(v["SignatureVersion"], "1");
    assert_eq!(
        v["Signature"].as_str().map(str::len),
        Some(344),
        "a 2048-bit RSA signature"
    );
    let cert_url = v["SigningCertURL"].as_str().unwrap();
    let cert_path = cert_url
        .strip_prefix(&t.server.endpoint())
        .expect("served here");
    let cert = crate::http::get(t.server.local_addr(), cert_path, &[])
        .await
        .unwrap();
    assert_eq!(cert.status, 200);
    assert!(
        cert.body.starts_with("-----BEGIN CERTIFICATE-----"),
        "{}",
        cert.body
    );
    assert_eq!(
        v["UnsubscribeURL"],
        format!(
            "{}/?Action=Unsubscribe&SubscriptionArn={json_sub}",
            t.server.endpoint()
        )
    );
    assert_eq!(v["MessageAttributes"]["kind"]["Value"], "order");
    assert_eq!(v["MessageAttributes"]["n"]["Type"], "Number");
    assert!(
        m[0].message_attributes().is_none(),
        "no SQS attributes in envelope mode"
    );
    let sender = m[0].attributes().unwrap();
    assert_eq!(
        sender[&aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp],
        START_MS.to_string()
    );

    let m = crate::harness::receive_full(&t, &raw_url, 10).await;
    assert_eq!(m[0].body(), Some("say \"hi\""));
    let a = m[0].message_attributes().unwrap();
    assert_eq!(a["kind"].string_value(), Some("order"));
    assert_eq!(a["n"].data_type(), "Number");
    t.server.shutdown().await;
}

#[tokio::test]
async fn message_structure_json_and_other_regions_and_accounts() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "multi").await;
    let (_, q) = queue(&t, "local").await;
    subscribe(&sns, &topic, &q, &[("RawMessageDelivery", "true")]).await;
    let conf =
        crate::harness::client_config(&t.server.endpoint(), "eu-west-1", "123456789012", "x")
            .build();
    let far = aws_sdk_sqs::Client::from_conf(conf);
    let far_url = far
        .create_queue()
        .queue_name("far")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    subscribe(
        &sns,
        &topic,
        "arn:aws:sqs:eu-west-1:123456789012:far",
        &[("RawMessageDelivery", "true")],
    )
    .await;
    sns.publish()
        .topic_arn(&topic)
        .message_structure("json")
        .message(r#"{"default":"d","sqs":"for queues","http":"h"}"#)
        .send()
        .await
        .unwrap();
    let local = t
        .client
        .get_queue_url()
        .queue_name("local")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert_eq!(bodies(&t, &local).await, ["for queues"]);
    let got = far
        .receive_message()
        .queue_url(&far_url)
        .send()
        .await
        .unwrap();
    assert_eq!(got.messages()[0].body(), Some("for queues"));
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message_structure("json")
        .message(r#"{"sqs":"x"}"#)
        .send()
        .await;
    expect_error(
        "no default",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Message Structure - No default entry in JSON message body"),
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn undeliverable_messages_go_to_the_dead_letter_queue_and_publish_still_succeeds() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "t").await;
    let (gone_url, gone) = queue(&t, "gone").await;
    let (dlq_url, dlq) = queue(&t, "dlq").await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{dlq}"}}"#);
    subscribe(&sns, &topic, &gone, &[("RedrivePolicy", &policy)]).await;
    let (_, plain) = queue(&t, "gone-too").await;
    subscribe(&sns, &topic, &plain, &[]).await;
    t.client
        .delete_queue()
        .queue_url(&gone_url)
        .send()
        .await
        .unwrap();
    let gone_too = t
        .client
        .get_queue_url()
        .queue_name("gone-too")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    t.client
        .delete_queue()
        .queue_url(&gone_too)
        .send()
        .await
        .unwrap();
    let id = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let b = bodies(&t, &dlq_url).await;
    assert_eq!(b.len(), 1);
    let v: Value = serde_json::from_str(&b[0]).unwrap();
    assert_eq!(v["MessageId"], id, "the DLQ gets the envelope");
    let subs = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    assert_eq!(
        subs.subscriptions().len(),
        2,
        "failed deliveries keep the subscriptions"
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn publish_and_publish_batch_errors_and_results() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "t").await;
    let (url, q) = queue(&t, "q").await;
    subscribe(&sns, &topic, &q, &[("RawMessageDelivery", "true")]).await;
    let r = sns.publish().topic_arn(&topic).message("").send().await;
    expect_error(
        "empty",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Empty message"),
    );
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .subject("")
        .send()
        .await;
    expect_error(
        "subject",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Subject"),
    );
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message("x".repeat(262_145))
        .send()
        .await;
    expect_error(
        "too long",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Message too long"),
    );
    sns.publish()
        .topic_arn(&topic)
        .message("x".repeat(262_144))
        .send()
        .await
        .expect("exactly the limit");
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .message_attributes("attr1", attr("String", ""))
        .send()
        .await;
    expect_error(
        "empty attribute",
        r,
        400,
        "ParameterValueInvalid",
        Some(
            "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'.",
        ),
    );
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .message_deduplication_id("d")
        .send()
        .await;
    expect_error(
        "dedup on standard",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
        ),
    );
    let r = sns
        .publish()
        .topic_arn("arn:aws:sns:us-east-1:000000000000:nope")
        .message("m")
        .send()
        .await;
    expect_error(
        "unknown topic",
        r,
        404,
        "NotFound",
        Some("Topic does not exist"),
    );
    t.client.purge_queue().queue_url(&url).send().await.unwrap();

    let entry = |id: &str, m: &str| {
        PublishBatchRequestEntry::builder()
            .id(id)
            .message(m)
            .build()
            .unwrap()
    };
    let out = sns
        .publish_batch()
        .topic_arn(&topic)
        .publish_batch_request_entries(entry("a", "1"))
        .publish_batch_request_entries(entry("b", "2"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.successful().len(), 2);
    assert!(out.failed().is_empty());
    assert_eq!(out.successful()[1].id(), Some("b"));
    let mut got = bodies(&t, &url).await;
    got.sort();
    assert_eq!(got, ["1", "2"]);
    let r = sns
        .publish_batch()
        .topic_arn(&topic)
        .publish_batch_request_entries(entry("a", "1"))
        .publish_batch_request_entries(entry("a", "2"))
        .send()
        .await;
    expect_error("same ids", r, 400, "BatchEntryIdsNotDistinct", None);
    let mut many = sns.publish_batch().topic_arn(&topic);
    for i in 0..11 {
        many = many.publish_batch_request_entries(entry(&format!("e{i}"), "m"));
    }
    expect_error(
        "eleven",
        many.send().await,
        400,
        "TooManyEntriesInBatchRequest",
        None,
    );
    let r = sns
        .publish_batch()
        .topic_arn(&topic)
        .publish_batch_request_entries(entry("a.b", "m"))
        .send()
        .await;
    expect_error("bad id", r, 400, "InvalidBatchEntryId", None);
    t.server.shutdown().await;
}

#[tokio::test]
async fn topics_subscriptions_and_deliveries_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let clock = std::sync::Arc::new(localsqs::ManualClock::new(START_MS));
    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "durable.fifo").await;
    let (url, q) = queue(&t, "durable.fifo").await;
    subscribe(&sns, &topic, &q, &[("RawMessageDelivery", "true")]).await;
    let first = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .message_group_id("g")
        .message_deduplication_id("d")
        .send()
        .await
        .unwrap();
    t.server.shutdown().await;
    let t = TestServer::start_with(clock, Some(dir.path())).await;
    let sns = super::sns(&t);
    assert_eq!(sns.list_topics().send().await.unwrap().topics().len(), 1);
    let again = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .message_group_id("g")
        .message_deduplication_id("d")
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.message_id(),
        first.message_id(),
        "the dedup window survives"
    );
    assert_eq!(again.sequence_number(), first.sequence_number());
    let next = sns
        .publish()
        .topic_arn(&topic)
        .message("n")
        .message_group_id("g")
        .message_deduplication_id("e")
        .send()
        .await
        .unwrap();
    assert!(next.sequence_number() > first.sequence_number());
    assert_eq!(bodies(&t, &url).await, ["m", "n"]);
    t.server.shutdown().await;
}
