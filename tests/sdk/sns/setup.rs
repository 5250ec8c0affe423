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

/// A data directory written before SNS existed (schema 3, no SNS tables) still opens: its
/// queues are there and SNS works on it.
#[tokio::test]
async fn a_data_directory_from_before_sns_opens() {
    let dir = tempfile::tempdir().unwrap();
    let clock = std::sync::Arc::new(localsqs::ManualClock::new(crate::harness::START_MS));
    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    t.create_queue("old", &[]).await;
    t.server.shutdown().await;
    {
        let db = redb::Database::open(dir.path().join("localsqs.redb")).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
            let mut meta = txn.open_table(meta).unwrap();
            meta.insert("schema_version", 3u32.to_be_bytes().as_slice())
                .unwrap();
        }
        for table in ["sns_topics", "sns_subscriptions"] {
            let def: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new(table);
            txn.delete_table(def).unwrap();
        }
        let dedup: redb::TableDefinition<(&str, &str), &[u8]> =
            redb::TableDefinition::new("sns_dedup");
        txn.delete_table(dedup).unwrap();
        txn.commit().unwrap();
    }
    let t = TestServer::start_with(clock, Some(dir.path())).await;
    let url = t
        .client
        .get_queue_url()
        .queue_name("old")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    assert!(url.ends_with("/old"));
    let topic = super::create_topic(&sns(&t), "new").await;
    let (_, q) = super::queue(&t, "inbox").await;
    super::subscribe(&sns(&t), &topic, &q, &[]).await;
    t.server.shutdown().await;
}
