//! Validation: parameter and attribute limits with their error codes and AWS's exact texts, and
//! receipt handles that are garbage or belong to another queue. Section numbers refer to
//! docs/protocol.md.

use std::collections::HashMap;

use aws_sdk_sqs::operation::change_message_visibility::ChangeMessageVisibilityError;
use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesError;
use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::{
    TestServer, change_visibility, delete_handle, expect_error, only, set_attr, string_attr,
};

/// 12. Validation errors with their codes and, where verified, AWS's exact texts (§5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_errors() {
    let t = TestServer::start().await;
    let url = t.create_queue("validation", &[]).await;

    let r = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(11)
        .send()
        .await;
    expect_error(
        "MaxNumberOfMessages 11",
        r,
        400,
        "InvalidParameterValue",
        Some(
            "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
        ),
    );

    let r = t
        .client
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(21)
        .send()
        .await;
    expect_error(
        "WaitTimeSeconds 21",
        r,
        400,
        "InvalidParameterValue",
        Some(
            "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.",
        ),
    );

    let e = expect_error(
        "VisibilityTimeout 99999",
        set_attr(&t, &url, QueueAttributeName::VisibilityTimeout, "99999").await,
        400,
        "InvalidAttributeValue",
        Some("Invalid value for the parameter VisibilityTimeout."),
    );
    assert!(matches!(
        e,
        SetQueueAttributesError::InvalidAttributeValue(_)
    ));
    let r = t
        .try_create_queue(
            "validation-2",
            &[(QueueAttributeName::VisibilityTimeout, "99999")],
        )
        .await;
    let e = expect_error(
        "VisibilityTimeout 99999 on create",
        r,
        400,
        "InvalidAttributeValue",
        None,
    );
    assert!(matches!(e, CreateQueueError::InvalidAttributeValue(_)));
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::VisibilityTimeout)
            .await,
        "30"
    );

    // MaximumMessageSize: exactly the limit is accepted, one byte more is not.
    set_attr(&t, &url, QueueAttributeName::MaximumMessageSize, "1024")
        .await
        .expect("MaximumMessageSize 1024");
    let send = |body: String| {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
    };
    expect_error(
        "1025-byte body",
        send("x".repeat(1025)).await,
        400,
        "InvalidParameterValue",
        Some(
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
        ),
    );
    t.send(&url, &"x".repeat(1024)).await;
    // The limit counts UTF-8 bytes: 342 three-byte characters are 1026 bytes.
    expect_error(
        "1026 UTF-8 bytes",
        send("€".repeat(342)).await,
        400,
        "InvalidParameterValue",
        None,
    );

    // At most 10 message attributes.
    let attrs = |n: usize| -> HashMap<_, _> {
        (0..n)
            .map(|i| (format!("a{i}"), string_attr("String", "v")))
            .collect()
    };
    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("many attributes")
        .set_message_attributes(Some(attrs(11)))
        .send()
        .await;
    expect_error(
        "11 message attributes",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("ten attributes")
        .set_message_attributes(Some(attrs(10)))
        .send()
        .await
        .expect("10 message attributes are fine");

    expect_error(
        "empty body",
        send(String::new()).await,
        400,
        "MissingParameter",
        Some("The request must contain the parameter MessageBody."),
    );

    // Nothing invalid was enqueued: only the 1024-byte message and the ten-attribute one.
    assert_eq!(t.counts(&url).await, (2, 0, 0));
    t.shutdown().await;
}

/// 4. A garbage receipt handle is ReceiptHandleIsInvalid with HTTP 404 (§5.4, §5.5); a real
/// handle of another queue is too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_receipt_handle_is_typed_receipt_handle_is_invalid() {
    let t = TestServer::start().await;
    let url = t.create_queue("handles", &[]).await;
    let e = expect_error(
        "a garbage handle is rejected",
        delete_handle(&t, &url, "garbage").await,
        404,
        "ReceiptHandleIsInvalid",
        Some("The input receipt handle \"garbage\" is not a valid receipt handle."),
    );
    assert!(
        matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)),
        "expected the typed ReceiptHandleIsInvalid, got {e:?}"
    );

    // A well-formed handle from another queue.
    let other = t.create_queue("handles-other", &[]).await;
    t.send(&other, "elsewhere").await;
    let m = only(t.receive(&other, 1).await, "one message");
    let rh = m.receipt_handle().expect("ReceiptHandle");
    let e = expect_error(
        "another queue's handle is rejected",
        delete_handle(&t, &url, rh).await,
        404,
        "ReceiptHandleIsInvalid",
        Some(&format!(
            "The receipt handle \"{rh}\" is not valid for this queue."
        )),
    );
    assert!(matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)));
    let e = expect_error(
        "garbage handle on ChangeMessageVisibility",
        change_visibility(&t, &url, "garbage", 0).await,
        404,
        "ReceiptHandleIsInvalid",
        None,
    );
    assert!(matches!(
        e,
        ChangeMessageVisibilityError::ReceiptHandleIsInvalid(_)
    ));
    t.shutdown().await;
}
