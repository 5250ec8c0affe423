//! Regions and accounts as SigV4 clients present them: the region of the credential scope, the
//! account of a 12-digit access key id (or of the queue URL); queues keyed by (account, region,
//! name), in memory and on disk.

use std::sync::Arc;

use aws_sdk_sqs::types::QueueAttributeName;
use localsqs::engine::ManualClock;

use super::harness::{START_MS, bodies, client_config, create_queue_on, expect_error};

/// A client signing for `region` with access key `key`.
fn client_as(endpoint: &str, region: &str, key: &str) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::from_conf(client_config(endpoint, region, key, "secret").build())
}

async fn arn(sqs: &aws_sdk_sqs::Client, url: &str) -> String {
    sqs.get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("attributes")
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .unwrap_or_default()
}

async fn names(sqs: &aws_sdk_sqs::Client) -> Vec<String> {
    sqs.list_queues()
        .send()
        .await
        .expect("lists")
        .queue_urls()
        .iter()
        .map(|u| u.rsplit('/').next().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn the_same_name_in_two_regions_is_two_queues() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let us = client_as(&server.endpoint(), "us-east-1", "test");
    let eu = client_as(&server.endpoint(), "eu-west-1", "test");
    let us_url = create_queue_on(&us, "orders").await;
    let eu_url = create_queue_on(&eu, "orders").await;
    assert_eq!(
        us_url, eu_url,
        "queue URLs carry no region; the signature does"
    );
    assert_eq!(
        arn(&us, &us_url).await,
        "arn:aws:sqs:us-east-1:000000000000:orders"
    );
    assert_eq!(
        arn(&eu, &eu_url).await,
        "arn:aws:sqs:eu-west-1:000000000000:orders"
    );
    us.send_message()
        .queue_url(&us_url)
        .message_body("in us")
        .send()
        .await
        .expect("sends");
    let got = eu
        .receive_message()
        .queue_url(&eu_url)
        .send()
        .await
        .expect("receives");
    assert!(
        got.messages().is_empty(),
        "eu-west-1's queue is another queue"
    );
    let got = us
        .receive_message()
        .queue_url(&us_url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["in us"]);
    create_queue_on(&eu, "only-in-eu").await;
    assert_eq!(names(&us).await, ["orders"]);
    let mut eu_names = names(&eu).await;
    eu_names.sort();
    assert_eq!(eu_names, ["only-in-eu", "orders"]);
    server.shutdown().await;
}

#[tokio::test]
async fn a_twelve_digit_access_key_is_the_account() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let a = client_as(&server.endpoint(), "us-east-1", "111111111111");
    let b = client_as(&server.endpoint(), "us-east-1", "222222222222");
    let a_url = create_queue_on(&a, "shared-name").await;
    let b_url = create_queue_on(&b, "shared-name").await;
    assert!(a_url.ends_with("/111111111111/shared-name"), "{a_url}");
    assert!(b_url.ends_with("/222222222222/shared-name"), "{b_url}");
    assert_eq!(
        arn(&a, &a_url).await,
        "arn:aws:sqs:us-east-1:111111111111:shared-name"
    );
    assert_eq!(names(&a).await, ["shared-name"]);
    // A queue URL names its account: B can address A's queue by URL.
    b.send_message()
        .queue_url(&a_url)
        .message_body("to a")
        .send()
        .await
        .expect("sends");
    let got = a
        .receive_message()
        .queue_url(&a_url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["to a"]);
    let found = b
        .get_queue_url()
        .queue_name("shared-name")
        .queue_owner_aws_account_id("111111111111")
        .send()
        .await
        .expect("finds A's queue");
    assert_eq!(found.queue_url(), Some(a_url.as_str()));
    let missing = b
        .get_queue_url()
        .queue_name("shared-name")
        .queue_owner_aws_account_id("333333333333")
        .send()
        .await;
    expect_error(
        "no such account's queue",
        missing,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        None,
    );
    server.shutdown().await;
}

#[tokio::test]
async fn redrive_and_move_tasks_stay_within_a_region() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let us = client_as(&server.endpoint(), "us-east-1", "test");
    let eu = client_as(&server.endpoint(), "eu-west-1", "test");
    let us_dlq = create_queue_on(&us, "dlq").await;
    let us_dlq_arn = arn(&us, &us_dlq).await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{us_dlq_arn}","maxReceiveCount":"3"}}"#);
    let res = eu
        .create_queue()
        .queue_name("source")
        .attributes(QueueAttributeName::RedrivePolicy, &policy)
        .send()
        .await;
    expect_error(
        "a DLQ in another region",
        res,
        400,
        "InvalidParameterValue",
        None,
    );
    let eu_src = create_queue_on(&eu, "other").await;
    let eu_src_arn = arn(&eu, &eu_src).await;
    let res = us
        .start_message_move_task()
        .source_arn(&us_dlq_arn)
        .destination_arn(&eu_src_arn)
        .send()
        .await;
    assert!(
        res.is_err(),
        "a move task across regions is refused: {res:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn durable_mode_keeps_every_region_and_account() {
    let dir = tempfile::tempdir().expect("tempdir");
    let start = || async {
        localsqs::Server::builder()
            .clock(Arc::new(ManualClock::new(START_MS)))
            .data_dir(dir.path())
            .start()
            .await
            .expect("starts")
    };
    let server = start().await;
    let eu = client_as(&server.endpoint(), "eu-west-1", "111111111111");
    let url = create_queue_on(&eu, "kept").await;
    eu.send_message()
        .queue_url(&url)
        .message_body("durable")
        .send()
        .await
        .expect("sends");
    server.shutdown().await;
    let server = start().await;
    let eu = client_as(&server.endpoint(), "eu-west-1", "111111111111");
    let us = client_as(&server.endpoint(), "us-east-1", "111111111111");
    assert_eq!(names(&eu).await, ["kept"]);
    assert!(names(&us).await.is_empty());
    assert_eq!(
        arn(&eu, &url).await,
        "arn:aws:sqs:eu-west-1:111111111111:kept"
    );
    let got = eu
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["durable"]);
    server.shutdown().await;
}

#[tokio::test]
async fn the_config_file_declares_queues_in_other_regions_and_accounts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("q.toml");
    std::fs::write(
        &path,
        "[[queue]]\nname = \"dlq\"\nregion = \"eu-west-1\"\naccount = \"111111111111\"\n\n\
         [[queue]]\nname = \"src\"\nregion = \"eu-west-1\"\naccount = \"111111111111\"\n\
         dead_letter = { queue = \"dlq\", max_receive_count = 2 }\n",
    )
    .expect("writes");
    let server = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect("starts");
    let eu = client_as(&server.endpoint(), "eu-west-1", "111111111111");
    let mut got = names(&eu).await;
    got.sort();
    assert_eq!(got, ["dlq", "src"]);
    let src = format!("{}/111111111111/src", server.endpoint());
    let policy = eu
        .get_queue_attributes()
        .queue_url(&src)
        .attribute_names(QueueAttributeName::RedrivePolicy)
        .send()
        .await
        .expect("attributes");
    let text = policy
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::RedrivePolicy))
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("arn:aws:sqs:eu-west-1:111111111111:dlq"),
        "{text}"
    );
    assert!(
        names(&client_as(&server.endpoint(), "us-east-1", "test"))
            .await
            .is_empty()
    );
    server.shutdown().await;
}
