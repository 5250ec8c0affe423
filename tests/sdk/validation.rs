//! Validation: parameter and attribute limits with their error codes and AWS's exact texts, and
//! receipt handles that are garbage or belong to another queue. Section numbers refer to
//! docs/protocol.md.

use std::collections::HashMap;

use aws_sdk_sqs::operation::change_message_visibility::ChangeMessageVisibilityError;
use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesError;
use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::{TestServer, only, string_attr, wire_error};

/// 12. Validation errors with their codes and, where verified, AWS's exact texts (§5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_errors() {
    let t = TestServer::start().await;
    let url = t.create_queue("validation", &[]).await;

    let err = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(11)
        .send()
        .await
        .expect_err("MaxNumberOfMessages 11");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"));
    assert_eq!(
        w.message.as_deref(),
        Some(
            "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."
        )
    );

    let err = t
        .client
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(21)
        .send()
        .await
        .expect_err("WaitTimeSeconds 21");
    let w = wire_error(&err);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"));
    assert_eq!(
        w.message.as_deref(),
        Some(
            "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."
        )
    );

    let err = t
        .client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "99999")
        .send()
        .await
        .expect_err("VisibilityTimeout 99999");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("InvalidAttributeValue"));
    assert_eq!(
        w.message.as_deref(),
        Some("Invalid value for the parameter VisibilityTimeout.")
    );
    assert!(matches!(
        err.into_service_error(),
        SetQueueAttributesError::InvalidAttributeValue(_)
    ));
    let err = t
        .client
        .create_queue()
        .queue_name("validation-2")
        .attributes(QueueAttributeName::VisibilityTimeout, "99999")
        .send()
        .await
        .expect_err("VisibilityTimeout 99999 on create");
    assert!(matches!(
        err.into_service_error(),
        CreateQueueError::InvalidAttributeValue(_)
    ));
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::VisibilityTimeout)
            .await,
        "30"
    );

    // MaximumMessageSize: exactly the limit is accepted, one byte more is not.
    t.client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::MaximumMessageSize, "1024")
        .send()
        .await
        .expect("MaximumMessageSize 1024");
    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("x".repeat(1025))
        .send()
        .await
        .expect_err("1025-byte body");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"));
    assert_eq!(
        w.message.as_deref(),
        Some(
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes."
        )
    );
    t.send(&url, &"x".repeat(1024)).await;
    // The limit counts UTF-8 bytes: 342 three-byte characters are 1026 bytes.
    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("€".repeat(342))
        .send()
        .await
        .expect_err("1026 UTF-8 bytes");
    assert_eq!(
        wire_error(&err).code.as_deref(),
        Some("InvalidParameterValue")
    );

    // At most 10 message attributes.
    let attrs = |n: usize| -> HashMap<_, _> {
        (0..n)
            .map(|i| (format!("a{i}"), string_attr("String", "v")))
            .collect()
    };
    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("many attributes")
        .set_message_attributes(Some(attrs(11)))
        .send()
        .await
        .expect_err("11 message attributes");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"));
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("ten attributes")
        .set_message_attributes(Some(attrs(10)))
        .send()
        .await
        .expect("10 message attributes are fine");

    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("")
        .send()
        .await
        .expect_err("empty body");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("MissingParameter"));
    assert_eq!(
        w.message.as_deref(),
        Some("The request must contain the parameter MessageBody.")
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
    let err = t
        .client
        .delete_message()
        .queue_url(&url)
        .receipt_handle("garbage")
        .send()
        .await
        .expect_err("a garbage handle is rejected");
    let w = wire_error(&err);
    assert_eq!(w.status, 404);
    assert_eq!(w.code.as_deref(), Some("ReceiptHandleIsInvalid"));
    assert_eq!(
        w.message.as_deref(),
        Some("The input receipt handle \"garbage\" is not a valid receipt handle.")
    );
    let e = err.into_service_error();
    assert!(
        matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)),
        "expected the typed ReceiptHandleIsInvalid, got {e:?}"
    );

    // A well-formed handle from another queue.
    let other = t.create_queue("handles-other", &[]).await;
    t.send(&other, "elsewhere").await;
    let m = only(t.receive(&other, 1).await, "one message");
    let rh = m.receipt_handle().expect("ReceiptHandle");
    let err = t
        .client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(rh)
        .send()
        .await
        .expect_err("another queue's handle is rejected");
    let w = wire_error(&err);
    assert_eq!(w.status, 404);
    assert_eq!(
        w.message,
        Some(format!(
            "The receipt handle \"{rh}\" is not valid for this queue."
        ))
    );
    assert!(matches!(
        err.into_service_error(),
        DeleteMessageError::ReceiptHandleIsInvalid(_)
    ));
    let err = t
        .client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle("garbage")
        .visibility_timeout(0)
        .send()
        .await
        .expect_err("garbage handle on ChangeMessageVisibility");
    assert!(matches!(
        err.into_service_error(),
        ChangeMessageVisibilityError::ReceiptHandleIsInvalid(_)
    ));
    t.shutdown().await;
}
