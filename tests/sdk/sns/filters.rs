//! Filter policies on subscriptions (docs/sns.md §8): attribute and body scope, the operators,
//! and AWS's texts for invalid policies.

use aws_sdk_sns::types::MessageAttributeValue;

use super::{bodies, create_topic, queue, sns, subscribe};
use crate::harness::{TestServer, expect_error};

#[tokio::test]
async fn only_matching_messages_reach_a_filtered_subscription() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "shop").await;
    let (attr_url, attr_q) = queue(&t, "books").await;
    let (body_url, body_q) = queue(&t, "big").await;
    let raw = ("RawMessageDelivery", "true");
    subscribe(
        &sns,
        &topic,
        &attr_q,
        &[
            raw,
            (
                "FilterPolicy",
                r#"{"kind":["book"],"price":[{"numeric":["<",20]}]}"#,
            ),
        ],
    )
    .await;
    subscribe(
        &sns,
        &topic,
        &body_q,
        &[
            raw,
            ("FilterPolicyScope", "MessageBody"),
            (
                "FilterPolicy",
                r#"{"order":{"total":[{"numeric":[">=",100]}]}}"#,
            ),
        ],
    )
    .await;
    let a = |ty: &str, v: &str| {
        MessageAttributeValue::builder()
            .data_type(ty)
            .string_value(v)
            .build()
            .unwrap()
    };
    for (body, kind, price) in [
        (r#"{"order":{"total":150}}"#, "book", "12"),
        (r#"{"order":{"total":5}}"#, "book", "30"),
        (r#"{"order":{"total":500}}"#, "cd", "1"),
    ] {
        sns.publish()
            .topic_arn(&topic)
            .message(body)
            .message_attributes("kind", a("String", kind))
            .message_attributes("price", a("Number", price))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(bodies(&t, &attr_url).await, [r#"{"order":{"total":150}}"#]);
    let mut big = bodies(&t, &body_url).await;
    big.sort();
    assert_eq!(
        big,
        [r#"{"order":{"total":150}}"#, r#"{"order":{"total":500}}"#]
    );

    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:other")
        .attributes("FilterPolicy", r#"{"a":{"b":["c"]}}"#)
        .send()
        .await;
    expect_error(
        "nested in attribute scope",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy",
        ),
    );
    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:other")
        .attributes("FilterPolicy", r#"{"a":[{"wrong-operator":1}]}"#)
        .send()
        .await;
    expect_error(
        "operator",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized match type wrong-operator",
        ),
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn a_topic_takes_200_filter_policies() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "many").await;
    let subscribe = |i: usize| {
        sns.subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(format!("arn:aws:sqs:us-east-1:000000000000:q{i}"))
            .attributes("FilterPolicy", r#"{"k":["v"]}"#)
            .send()
    };
    for i in 0..200 {
        subscribe(i).await.unwrap();
    }
    expect_error(
        "201st",
        subscribe(200).await,
        403,
        "FilterPolicyLimitExceeded",
        None,
    );
    t.server.shutdown().await;
}
