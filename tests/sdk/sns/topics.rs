//! Topics and subscriptions: CreateTopic's idempotency and name rules, attributes, paging,
//! tags, permissions, Subscribe's rules and texts, Unsubscribe (docs/sns.md §3–§5).

use super::{create_topic, queue, sns, subscribe};
use crate::harness::{TestServer, expect_error};

#[tokio::test]
async fn create_topic_is_idempotent_and_checks_names_and_attributes() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let arn = create_topic(&sns, "orders").await;
    assert_eq!(arn, "arn:aws:sns:us-east-1:000000000000:orders");
    assert_eq!(create_topic(&sns, "orders").await, arn);
    for bad in ["", "a b", "x:y", &"a".repeat(257)] {
        let r = sns.create_topic().name(bad).send().await;
        expect_error(
            "bad name",
            r,
            400,
            "InvalidParameter",
            Some("Invalid parameter: Topic Name"),
        );
    }
    let r = sns
        .create_topic()
        .name("plain")
        .attributes("FifoTopic", "true")
        .send()
        .await;
    expect_error(
        "fifo without suffix",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Topic Name"),
    );
    let r = sns
        .create_topic()
        .name("orders")
        .attributes("SignatureVersion", "2")
        .send()
        .await;
    expect_error(
        "different attributes",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: Attributes Reason: Topic already exists with different attributes",
        ),
    );
    let r = sns
        .create_topic()
        .name("orders")
        .tags(
            aws_sdk_sns::types::Tag::builder()
                .key("k")
                .value("v")
                .build()
                .unwrap(),
        )
        .send()
        .await;
    expect_error(
        "different tags",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Tags Reason: Topic already exists with different tags"),
    );
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap();
    let a = attrs.attributes().unwrap();
    assert_eq!(a["TopicArn"], arn);
    assert_eq!(a["Owner"], "000000000000");
    assert_eq!(a["DisplayName"], "");
    assert_eq!(a["SubscriptionsConfirmed"], "0");
    assert!(a["Policy"].contains("__default_policy_ID"));
    assert!(!a.contains_key("FifoTopic"));
    sns.set_topic_attributes()
        .topic_arn(&arn)
        .attribute_name("DisplayName")
        .attribute_value("Orders")
        .send()
        .await
        .unwrap();
    let attrs = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(attrs.attributes().unwrap()["DisplayName"], "Orders");
    let r = sns
        .set_topic_attributes()
        .topic_arn(&arn)
        .attribute_name("FifoTopic")
        .attribute_value("true")
        .send()
        .await;
    expect_error(
        "FifoTopic set",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: AttributeName"),
    );
    let missing = "arn:aws:sns:us-east-1:000000000000:nope";
    let r = sns.get_topic_attributes().topic_arn(missing).send().await;
    expect_error("missing", r, 404, "NotFound", Some("Topic does not exist"));
    let r = sns.get_topic_attributes().topic_arn("nope").send().await;
    expect_error(
        "not an ARN",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"),
    );
    let r = sns
        .get_topic_attributes()
        .topic_arn("arn:aws:sns:eu-west-1:000000000000:orders")
        .send()
        .await;
    expect_error(
        "other region",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: TopicArn"),
    );
    sns.delete_topic().topic_arn(&arn).send().await.unwrap();
    sns.delete_topic()
        .topic_arn(&arn)
        .send()
        .await
        .expect("DeleteTopic is idempotent");
    t.server.shutdown().await;
}

#[tokio::test]
async fn list_topics_pages_by_100_and_tags_round_trip() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    for i in 0..101 {
        create_topic(&sns, &format!("t{i:03}")).await;
    }
    let first = sns.list_topics().send().await.unwrap();
    assert_eq!(first.topics().len(), 100);
    let token = first.next_token().expect("a second page").to_owned();
    let second = sns.list_topics().next_token(token).send().await.unwrap();
    assert_eq!(second.topics().len(), 1);
    assert!(second.next_token().is_none());
    let other = super::sns_for(&t.server.endpoint(), "eu-west-1");
    assert!(
        other
            .list_topics()
            .send()
            .await
            .unwrap()
            .topics()
            .is_empty(),
        "per region"
    );

    let arn = create_topic(&sns, "tagged").await;
    let tag = |k: &str, v: &str| {
        aws_sdk_sns::types::Tag::builder()
            .key(k)
            .value(v)
            .build()
            .unwrap()
    };
    sns.tag_resource()
        .resource_arn(&arn)
        .tags(tag("a", "1"))
        .tags(tag("b", "2"))
        .send()
        .await
        .unwrap();
    sns.tag_resource()
        .resource_arn(&arn)
        .tags(tag("a", "3"))
        .send()
        .await
        .unwrap();
    sns.untag_resource()
        .resource_arn(&arn)
        .tag_keys("b")
        .send()
        .await
        .unwrap();
    let tags = sns
        .list_tags_for_resource()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    let tags: Vec<(&str, &str)> = tags.tags().iter().map(|t| (t.key(), t.value())).collect();
    assert_eq!(tags, [("a", "3")]);
    let r = sns
        .tag_resource()
        .resource_arn(&arn)
        .tags(tag("x", "1"))
        .tags(tag("x", "2"))
        .send()
        .await;
    expect_error(
        "dup keys",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Duplicated keys are not allowed."),
    );
    let r = sns
        .list_tags_for_resource()
        .resource_arn("arn:aws:sns:us-east-1:000000000000:nope")
        .send()
        .await;
    expect_error("unknown resource", r, 404, "ResourceNotFound", None);

    sns.add_permission()
        .topic_arn(&arn)
        .label("p1")
        .aws_account_id("111122223333")
        .action_name("Publish")
        .send()
        .await
        .unwrap();
    let r = sns
        .add_permission()
        .topic_arn(&arn)
        .label("p1")
        .aws_account_id("111122223333")
        .action_name("Publish")
        .send()
        .await;
    expect_error(
        "same sid",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Statement already exists"),
    );
    let policy = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap();
    assert!(policy.attributes().unwrap()["Policy"].contains(r#""Sid":"p1""#));
    sns.remove_permission()
        .topic_arn(&arn)
        .label("p1")
        .send()
        .await
        .unwrap();
    let policy = sns
        .get_topic_attributes()
        .topic_arn(&arn)
        .send()
        .await
        .unwrap();
    assert!(!policy.attributes().unwrap()["Policy"].contains(r#""Sid":"p1""#));
    t.server.shutdown().await;
}

#[tokio::test]
async fn subscriptions_their_rules_and_attributes() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "news").await;
    let (_, q) = queue(&t, "inbox").await;
    let sub = subscribe(&sns, &topic, &q, &[]).await;
    assert!(sub.starts_with(&format!("{topic}:")), "{sub}");
    assert_eq!(
        subscribe(&sns, &topic, &q, &[("RawMessageDelivery", "false")]).await,
        sub
    );
    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(&q)
        .attributes("RawMessageDelivery", "true")
        .send()
        .await;
    expect_error(
        "different attributes",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: Attributes Reason: Subscription already exists with different attributes",
        ),
    );
    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("test-protocol")
        .endpoint("x")
        .send()
        .await;
    expect_error(
        "protocol",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: Amazon SNS does not support this protocol string: test-protocol"),
    );
    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("http://q")
        .send()
        .await;
    expect_error(
        "queue URL",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: SQS endpoint ARN"),
    );
    let r = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint("arn:aws:sqs:us-east-1:000000000000:q.fifo")
        .send()
        .await;
    expect_error(
        "fifo queue on a standard topic",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
        ),
    );
    let email = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("email")
        .endpoint("a@example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(email.subscription_arn(), Some("pending confirmation"));

    let a = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    let a = a.attributes().unwrap();
    assert_eq!(a["PendingConfirmation"], "false");
    assert_eq!(a["ConfirmationWasAuthenticated"], "true");
    assert_eq!(a["RawMessageDelivery"], "false");
    assert_eq!(a["Endpoint"], q);
    assert!(!a.contains_key("FilterPolicyScope"));
    let set = |name: &'static str, value: &'static str| {
        sns.set_subscription_attributes()
            .subscription_arn(&sub)
            .attribute_name(name)
            .attribute_value(value)
            .send()
    };
    set("RawMessageDelivery", "TrUe").await.unwrap();
    let r = set("RawMessageDelivery", "test-ValUe").await;
    expect_error(
        "raw value",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false.",
        ),
    );
    let r = set("Nope", "1").await;
    expect_error(
        "unknown",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: AttributeName"),
    );
    set("FilterPolicy", r#"{"k":["v"]}"#).await.unwrap();
    let a = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    let a = a.attributes().unwrap();
    assert_eq!(a["RawMessageDelivery"], "true");
    assert_eq!(a["FilterPolicy"], r#"{"k":["v"]}"#);
    assert_eq!(a["FilterPolicyScope"], "MessageAttributes");

    let listed = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    let arns: Vec<&str> = listed
        .subscriptions()
        .iter()
        .filter_map(|s| s.subscription_arn())
        .collect();
    assert_eq!(arns, [sub.as_str(), "PendingConfirmation"]);
    assert_eq!(
        sns.list_subscriptions()
            .send()
            .await
            .unwrap()
            .subscriptions()
            .len(),
        2
    );
    let topic_attrs = sns
        .get_topic_attributes()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    let ta = topic_attrs.attributes().unwrap();
    assert_eq!(
        (
            ta["SubscriptionsConfirmed"].as_str(),
            ta["SubscriptionsPending"].as_str()
        ),
        ("1", "1")
    );

    sns.unsubscribe()
        .subscription_arn(&sub)
        .send()
        .await
        .unwrap();
    sns.unsubscribe()
        .subscription_arn(&sub)
        .send()
        .await
        .expect("idempotent");
    let r = sns
        .get_subscription_attributes()
        .subscription_arn(&sub)
        .send()
        .await;
    expect_error(
        "gone",
        r,
        404,
        "NotFound",
        Some("Subscription does not exist"),
    );
    let r = sns
        .unsubscribe()
        .subscription_arn("pending confirmation")
        .send()
        .await;
    expect_error(
        "not an ARN",
        r,
        400,
        "InvalidParameter",
        Some(
            "Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1",
        ),
    );
    let r = sns.unsubscribe().subscription_arn(&topic).send().await;
    expect_error(
        "no id",
        r,
        400,
        "InvalidParameter",
        Some("Invalid parameter: SubscriptionId"),
    );
    let r = sns
        .subscribe()
        .topic_arn("arn:aws:sns:us-east-1:000000000000:nope")
        .protocol("sqs")
        .endpoint(&q)
        .send()
        .await;
    expect_error(
        "unknown topic",
        r,
        404,
        "NotFound",
        Some("Topic does not exist"),
    );
    t.server.shutdown().await;
}
