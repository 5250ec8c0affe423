//! The config file's `[[topic]]` tables, `/_localsqs/reset` and `/metrics` for SNS.

use super::{bodies, sns};
use crate::harness::TestServer;

#[tokio::test]
async fn declared_topics_deliver_count_and_come_back_after_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("localsqs.toml");
    std::fs::write(
        &path,
        r#"
        [[queue]]
        name = "billing"

        [[topic]]
        name = "orders"
        attributes = { DisplayName = "Orders" }

        [[topic.subscription]]
        queue = "billing"
        raw = true
        filter_policy = '{"kind": ["order"]}'
        "#,
    )
    .unwrap();
    let t = TestServer::start_from(localsqs::Server::builder().config_file(&path)).await;
    let sns = sns(&t);
    let topic = "arn:aws:sns:us-east-1:000000000000:orders";
    let url = t
        .client
        .get_queue_url()
        .queue_name("billing")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let kind = |v: &str| {
        aws_sdk_sns::types::MessageAttributeValue::builder()
            .data_type("String")
            .string_value(v)
            .build()
            .unwrap()
    };
    for k in ["order", "refund"] {
        sns.publish()
            .topic_arn(topic)
            .message(k)
            .message_attributes("kind", kind(k))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(bodies(&t, &url).await, ["order"]);
    let metrics = t.metrics().await;
    assert!(
        metrics.contains(r#"localsqs_sns_published_total{topic="orders",account="000000000000",region="us-east-1"} 2"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"localsqs_sns_deliveries_total{topic="orders",account="000000000000",region="us-east-1"} 1"#));

    sns.create_topic().name("extra").send().await.unwrap();
    let r = crate::http::exchange(t.server.local_addr(), "POST", "/_localsqs/reset", &[], "")
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let topics = sns.list_topics().send().await.unwrap();
    let arns: Vec<_> = topics
        .topics()
        .iter()
        .filter_map(|t| t.topic_arn())
        .collect();
    assert_eq!(arns, [topic], "the declared topic only");
    let subs = sns
        .list_subscriptions_by_topic()
        .topic_arn(topic)
        .send()
        .await
        .unwrap();
    assert_eq!(subs.subscriptions().len(), 1);
    t.server.shutdown().await;
}
