//! FIFO topics (docs/sns.md §6.6, §7.2): group ids, deduplication explicit or content-based and
//! topic-wide within five minutes, duplicates answering the first MessageId and
//! SequenceNumber, FIFO and standard queue subscribers, unsigned envelopes.

use aws_sdk_sqs::types::MessageSystemAttributeName as Sys;
use serde_json::Value;

use super::{create_topic, queue, sns, subscribe};
use crate::harness::{TestServer, expect_error};

#[tokio::test]
async fn fifo_topics_deduplicate_topic_wide_and_keep_order() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "orders.fifo").await;
    let (fifo_url, fifo_q) = queue(&t, "orders.fifo").await;
    let (std_url, std_q) = queue(&t, "audit").await;
    subscribe(&sns, &topic, &fifo_q, &[]).await;
    subscribe(&sns, &topic, &std_q, &[("RawMessageDelivery", "true")]).await;
    let publish = |body: &'static str, group: &'static str, dedup: &'static str| {
        sns.publish()
            .topic_arn(&topic)
            .message(body)
            .message_group_id(group)
            .message_deduplication_id(dedup)
            .send()
    };
    let a = publish("one", "g1", "d1").await.unwrap();
    let b = publish("two", "g2", "d2").await.unwrap();
    let dup = publish("one again", "g2", "d1").await.unwrap();
    assert_eq!(dup.message_id(), a.message_id(), "dedup is topic-wide");
    assert_eq!(dup.sequence_number(), a.sequence_number());
    let (sa, sb) = (a.sequence_number().unwrap(), b.sequence_number().unwrap());
    assert_eq!(sa.len(), 20);
    assert!(sb > sa);

    let got = crate::harness::receive_full(&t, &fifo_url, 10).await;
    assert_eq!(got.len(), 2);
    let v: Value = serde_json::from_str(got[0].body().unwrap()).unwrap();
    assert_eq!(v["Message"], "one");
    assert_eq!(v["SequenceNumber"], sa);
    assert!(
        v.get("Signature").is_none() && v.get("SigningCertURL").is_none(),
        "FIFO is unsigned"
    );
    let attrs = got[0].attributes().unwrap();
    assert_eq!(attrs[&Sys::MessageGroupId], "g1");
    assert_eq!(attrs[&Sys::MessageDeduplicationId], "d1");

    let got = t.receive(&std_url, 10).await;
    assert_eq!(got.len(), 2);
    assert!(
        !got[0]
            .attributes()
            .unwrap()
            .contains_key(&Sys::MessageGroupId),
        "no group to a standard queue"
    );

    t.advance_secs(301);
    let later = publish("one", "g1", "d1").await.unwrap();
    assert_ne!(
        later.message_id(),
        a.message_id(),
        "the window is five minutes"
    );

    let r = sns.publish().topic_arn(&topic).message("m").send().await;
    expect_error(
        "no group",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: The MessageGroupId parameter is required for FIFO topics"),
    );
    let r = sns
        .publish()
        .topic_arn(&topic)
        .message("m")
        .message_group_id("g")
        .send()
        .await;
    expect_error(
        "no dedup",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
        ),
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn content_based_deduplication_uses_the_body_sha256() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = sns
        .create_topic()
        .name("cb.fifo")
        .attributes("FifoTopic", "true")
        .attributes("ContentBasedDeduplication", "true")
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let (url, q) = queue(&t, "cb.fifo").await;
    subscribe(&sns, &topic, &q, &[("RawMessageDelivery", "true")]).await;
    for _ in 0..2 {
        sns.publish()
            .topic_arn(&topic)
            .message("Test")
            .message_group_id("g")
            .send()
            .await
            .unwrap();
    }
    let got = crate::harness::receive_full(&t, &url, 10).await;
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].attributes().unwrap()[&Sys::MessageDeduplicationId],
        "532eaabd9574880dbf76b9b8cc00832c20a6ec113d682299550d7a6e0f345e25"
    );
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    let a = attrs.attributes().unwrap();
    assert_eq!(
        (
            a["FifoTopic"].as_str(),
            a["ContentBasedDeduplication"].as_str()
        ),
        ("true", "true")
    );
    t.server.shutdown().await;
}
