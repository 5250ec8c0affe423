//! SNS in the same server, driven by aws-sdk-sns: topics and their attributes, subscriptions,
//! publishing into queues (envelopes, raw delivery, MessageStructure, FIFO), filter policies,
//! signatures, and durability. Texts and codes come from `docs/sns.md` (§ numbers in comments).
//! Every test uses the harness's server and its SQS client to read what arrived.

mod fanout;
mod fifo;
mod filters;
mod http;
mod setup;
mod topics;

use aws_sdk_sns::Client as Sns;
use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::TestServer;

/// An SNS client for the test server, signing for us-east-1 as the SQS client does.
pub fn sns(t: &TestServer) -> Sns {
    sns_for(&t.server.endpoint(), "us-east-1")
}

/// An SNS client for `endpoint`, signing for `region`.
pub fn sns_for(endpoint: &str, region: &str) -> Sns {
    let conf = aws_sdk_sns::Config::builder()
        .endpoint_url(endpoint)
        .region(aws_sdk_sns::config::Region::new(region.to_owned()))
        .credentials_provider(aws_credential_types::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
        .build();
    Sns::from_conf(conf)
}

/// Creates a topic (FIFO when the name ends in `.fifo`) and returns its ARN.
pub async fn create_topic(sns: &Sns, name: &str) -> String {
    let mut req = sns.create_topic().name(name);
    if name.ends_with(".fifo") {
        req = req.attributes("FifoTopic", "true");
    }
    req.send()
        .await
        .unwrap_or_else(|e| panic!("CreateTopic {name}: {e:?}"))
        .topic_arn
        .expect("TopicArn")
}

/// Creates a queue and returns (URL, ARN).
pub async fn queue(t: &TestServer, name: &str) -> (String, String) {
    let attrs: &[(QueueAttributeName, &str)] = if name.ends_with(".fifo") {
        &[(QueueAttributeName::FifoQueue, "true")]
    } else {
        &[]
    };
    let url = t.create_queue(name, attrs).await;
    (url, format!("arn:aws:sqs:us-east-1:000000000000:{name}"))
}

/// Subscribes a queue ARN with the given attributes and returns the subscription ARN.
pub async fn subscribe(sns: &Sns, topic: &str, queue_arn: &str, attrs: &[(&str, &str)]) -> String {
    let mut req = sns
        .subscribe()
        .topic_arn(topic)
        .protocol("sqs")
        .endpoint(queue_arn);
    for (k, v) in attrs {
        req = req.attributes(*k, *v);
    }
    req.send()
        .await
        .unwrap_or_else(|e| panic!("Subscribe {queue_arn}: {e:?}"))
        .subscription_arn
        .expect("SubscriptionArn")
}

/// The bodies of every message now in a queue (received, not deleted).
pub async fn bodies(t: &TestServer, url: &str) -> Vec<String> {
    t.receive(url, 10)
        .await
        .into_iter()
        .map(|m| m.body.unwrap_or_default())
        .collect()
}

/// Subscribes any protocol and endpoint; returns the ARN (asked for even while pending).
pub async fn subscribe_to(sns: &Sns, topic: &str, protocol: &str, endpoint: &str) -> String {
    sns.subscribe()
        .topic_arn(topic)
        .protocol(protocol)
        .endpoint(endpoint)
        .return_subscription_arn(true)
        .send()
        .await
        .unwrap_or_else(|e| panic!("Subscribe {protocol} {endpoint}: {e:?}"))
        .subscription_arn
        .expect("SubscriptionArn")
}
