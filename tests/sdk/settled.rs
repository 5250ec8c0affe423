//! Cases AWS's answer was never captured for, answered as moto 5 does (its texts are what many
//! suites assert); see docs/protocol.md §0 and the `[E]` notes beside each choice.

use aws_sdk_sqs::types::MessageAttributeValue;

use super::harness::{TestServer, expect_error};
use super::http::exchange;

#[tokio::test]
async fn moto_texts_for_uncaptured_cases() {
    let t = TestServer::start().await;
    let res = t.try_create_queue("", &[]).await;
    expect_error(
        "empty queue name",
        res,
        400,
        "InvalidParameterValue",
        Some(
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ),
    );
    let url = t.create_queue("guesses", &[]).await;
    let attr = MessageAttributeValue::builder()
        .data_type("Foo")
        .string_value("1")
        .build()
        .expect("builds");
    let res = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_attributes("a", attr)
        .send()
        .await;
    expect_error(
        "invalid data type",
        res,
        400,
        "InvalidParameterValue",
        Some(
            "The message attribute 'a' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.",
        ),
    );
    let res = t
        .client
        .add_permission()
        .queue_url(&url)
        .label("l")
        .aws_account_ids("111111111111")
        .actions("DeleteQueue")
        .send()
        .await;
    expect_error(
        "owner-only action",
        res,
        400,
        "InvalidParameterValue",
        Some(
            "Value SQS:DeleteQueue for parameter ActionName is invalid. Reason: Only the queue owner is allowed to invoke this action.",
        ),
    );
    let res = t
        .client
        .untag_queue()
        .queue_url(&url)
        .set_tag_keys(Some(Vec::new()))
        .send()
        .await;
    expect_error(
        "no tag keys",
        res,
        400,
        "InvalidParameterValue",
        Some("Tag keys must be between 1 and 128 characters in length."),
    );
    t.shutdown().await;
}

/// AddPermission with no principals (moto 5's code and text, checked after the actions), and a
/// JSON `null` as a tag value (AWS's own map check, captured for TagQueue).
#[tokio::test]
async fn empty_principals_and_null_tag_values() {
    let t = TestServer::start().await;
    let url = t.create_queue("settled", &[]).await;
    let res = t
        .client
        .add_permission()
        .queue_url(&url)
        .label("l")
        .set_aws_account_ids(Some(Vec::new()))
        .actions("SendMessage")
        .send()
        .await;
    expect_error(
        "no principals",
        res,
        400,
        "InvalidParameterValue",
        Some("Value [] for parameter PrincipalId is invalid. Reason: Unable to verify."),
    );
    let res = t
        .client
        .add_permission()
        .queue_url(&url)
        .label("l")
        .set_aws_account_ids(Some(Vec::new()))
        .set_actions(Some(Vec::new()))
        .send()
        .await;
    expect_error(
        "no principals and no actions: the actions are named",
        res,
        400,
        "MissingParameter",
        Some("The request must contain the parameter Actions."),
    );
    let addr = t.server.local_addr();
    for (target, body) in [
        (
            "AmazonSQS.TagQueue",
            format!(r#"{{"QueueUrl": "{url}", "Tags": {{"team": null}}}}"#),
        ),
        (
            "AmazonSQS.CreateQueue",
            r#"{"QueueName": "tagged", "tags": {"team": null}}"#.to_owned(),
        ),
    ] {
        let resp = exchange(
            addr,
            "POST",
            "/",
            &[
                ("X-Amz-Target", target),
                ("Content-Type", "application/x-amz-json-1.0"),
            ],
            &body,
        )
        .await
        .expect("answered");
        assert_eq!(resp.status, 400, "{target}: {}", resp.body);
        let v: serde_json::Value = serde_json::from_str(&resp.body).expect("json");
        assert_eq!(
            v,
            serde_json::json!({
                "__type": "com.amazon.coral.service#InvalidParameterValueException",
                "message": "the parameter 'value' may not be null",
            }),
            "{target}"
        );
    }
    let tags = t
        .client
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .expect("lists");
    assert!(
        tags.tags().is_none_or(|m| m.is_empty()),
        "nothing was tagged"
    );
    let listed = t.client.list_queues().send().await.expect("lists");
    assert_eq!(listed.queue_urls().len(), 1, "no queue was created");
    t.shutdown().await;
}

/// What a `QueueUrl` may be (docs/protocol.md §2.3): a bare name resolves in the caller's account
/// and region, as in AWS; AWS does not check the host, so a real AWS queue URL addresses the
/// queue its path names, and fails as in AWS when that is another account's.
#[tokio::test]
async fn queue_names_and_foreign_hosts_in_queue_urls() {
    let t = TestServer::start().await;
    let jobs = t.create_queue("jobs", &[]).await;
    for url in [
        "jobs",
        "https://sqs.us-east-1.amazonaws.com/000000000000/jobs",
        "https://elsewhere.example/000000000000/jobs",
    ] {
        t.client
            .send_message()
            .queue_url(url)
            .message_body(url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{url}: {e:?}"));
    }
    assert_eq!(t.counts(&jobs).await.0, 3);
    for url in [
        "https://sqs.us-east-1.amazonaws.com/123456789012/jobs",
        "http://whatever-incorrect-queue-address",
        "nope",
    ] {
        let res = t
            .client
            .send_message()
            .queue_url(url)
            .message_body("x")
            .send()
            .await;
        expect_error(
            url,
            res,
            400,
            "AWS.SimpleQueueService.NonExistentQueue",
            Some("The specified queue does not exist."),
        );
    }
    t.shutdown().await;
}
