//! Cases AWS's answer was never captured for, answered as moto 5 does (its texts are what many
//! suites assert); see docs/protocol.md §0 and the `[E]` notes beside each choice.

use aws_sdk_sqs::types::MessageAttributeValue;

use super::harness::{TestServer, expect_error};

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
