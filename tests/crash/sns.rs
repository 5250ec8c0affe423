//! SNS fan-out under kill -9: a Publish and its deliveries into queues are one engine change
//! and one commit, so after a SIGKILL and a restart every acknowledged publish is in every
//! subscribed queue, exactly once, and no publish is in some of its queues but not others.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_sqs::config::retry::RetryConfig;

use crate::LOAD_STOP_WAIT;
use crate::process::{Proc, client, peek};

/// The queues subscribed to the topic under load.
const QUEUES: [&str; 3] = ["fan-a", "fan-b", "fan-c"];
/// Publishing tasks at once.
const PUBLISHERS: usize = 4;

fn sns_client(endpoint: &str) -> aws_sdk_sns::Client {
    let conf = aws_sdk_sns::Config::builder()
        .endpoint_url(endpoint)
        .region(aws_sdk_sns::config::Region::new("us-east-1"))
        .credentials_provider(aws_credential_types::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
        .retry_config(RetryConfig::disabled())
        .build();
    aws_sdk_sns::Client::from_conf(conf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acknowledged_publish_is_in_every_queue_after_a_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Proc::start(dir.path()).await;
    let sqs = client(&server.endpoint());
    let sns = sns_client(&server.endpoint());
    let topic = sns
        .create_topic()
        .name("crash-topic")
        .send()
        .await
        .expect("CreateTopic")
        .topic_arn
        .expect("TopicArn");
    for q in QUEUES {
        sqs.create_queue()
            .queue_name(q)
            .send()
            .await
            .expect("CreateQueue");
        sns.subscribe()
            .topic_arn(&topic)
            .protocol("sqs")
            .endpoint(format!("arn:aws:sqs:us-east-1:000000000000:{q}"))
            .attributes("RawMessageDelivery", "true")
            .send()
            .await
            .expect("Subscribe");
    }
    let acked: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for p in 0..PUBLISHERS {
        let (sns, topic, acked) = (sns.clone(), topic.clone(), Arc::clone(&acked));
        tasks.push(tokio::spawn(async move {
            for i in 0.. {
                let body = format!("p{p}-{i}");
                match sns.publish().topic_arn(&topic).message(&body).send().await {
                    Ok(_) => {
                        acked.lock().expect("ledger").insert(body);
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    server.kill9().await;
    for t in tasks {
        tokio::time::timeout(LOAD_STOP_WAIT, t)
            .await
            .expect("publishers stop once the server is gone")
            .expect("publisher task");
    }
    let acked = acked.lock().expect("ledger").clone();
    assert!(
        !acked.is_empty(),
        "the load published nothing before the kill"
    );
    let server = Proc::start(dir.path()).await;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for q in QUEUES {
        let url = format!("{}/000000000000/{q}", server.endpoint());
        let bodies: Vec<String> = peek(server.port, &url)
            .await
            .into_iter()
            .map(|m| m.body)
            .collect();
        let unique: BTreeSet<&String> = bodies.iter().collect();
        assert_eq!(unique.len(), bodies.len(), "{q}: a delivery twice");
        for b in &acked {
            assert!(unique.contains(b), "{q}: acknowledged publish {b} lost");
        }
        for b in bodies {
            *seen.entry(b).or_default() += 1;
        }
    }
    let partial: Vec<_> = seen.iter().filter(|(_, n)| **n != QUEUES.len()).collect();
    assert!(
        partial.is_empty(),
        "publishes in some queues only: {partial:?}"
    );
    let subs = sns_client(&server.endpoint())
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .expect("the topic and its subscriptions survive");
    assert_eq!(subs.subscriptions().len(), QUEUES.len());
    eprintln!(
        "{} acknowledged publishes, {} found",
        acked.len(),
        seen.len()
    );
}
