//! Visibility on standard queues: in flight means invisible, redelivery after the timeout with a
//! new handle and a higher receive count, stale handles, and ChangeMessageVisibility. Section
//! numbers refer to docs/protocol.md.

use aws_sdk_sqs::types::MessageSystemAttributeName;

use crate::harness::{START_MS, TestServer, only, wire_error};

/// 5. Visibility timeout: invisible while in flight, back after 30 s with a new handle and a
/// higher receive count; stale handles still delete on standard queues; deletes repeat (§6.8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_timeout_redelivery_and_stale_handles() {
    let t = TestServer::start().await;
    let url = t.create_queue("visibility", &[]).await;
    t.send(&url, "once").await;
    let first = only(t.receive(&url, 10).await, "one message");
    let first_rh = first.receipt_handle().expect("ReceiptHandle").to_owned();
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "in flight means invisible"
    );
    assert_eq!(t.counts(&url).await, (0, 1, 0));

    t.advance_secs(29);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "still invisible 29 s into a 30 s timeout"
    );
    t.advance_secs(2);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let second = only(t.receive(&url, 10).await, "redelivered");
    assert_eq!(second.message_id(), first.message_id());
    assert_eq!(second.body(), Some("once"));
    let sys = second.attributes().expect("system attributes");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
            .map(String::as_str),
        Some("2")
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateFirstReceiveTimestamp)
            .map(String::as_str),
        Some(START_MS.to_string().as_str()),
        "the first receive time does not move"
    );
    let second_rh = second.receipt_handle().expect("ReceiptHandle");
    assert_ne!(second_rh, first_rh, "each receive issues a new handle");

    // The older handle still deletes the message on a standard queue.
    for _ in 0..2 {
        t.client
            .delete_message()
            .queue_url(&url)
            .receipt_handle(&first_rh)
            .send()
            .await
            .expect("DeleteMessage with the stale handle (twice)");
    }
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(second_rh)
        .send()
        .await
        .expect("DeleteMessage of an already deleted message succeeds");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.advance_secs(60);
    assert!(t.receive(&url, 10).await.is_empty(), "deleted for good");
    t.shutdown().await;
}

/// 6. ChangeMessageVisibility to 0 releases the message; on a deleted message it is
/// InvalidParameterValue with AWS's text (§5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_message_visibility() {
    let t = TestServer::start().await;
    let url = t.create_queue("change-vis", &[]).await;
    t.send(&url, "cmv").await;
    let m = only(t.receive(&url, 1).await, "one message");
    let rh = m.receipt_handle().expect("ReceiptHandle").to_owned();
    assert!(t.receive(&url, 1).await.is_empty());

    t.client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&rh)
        .visibility_timeout(0)
        .send()
        .await
        .expect("ChangeMessageVisibility 0");
    let again = only(t.receive(&url, 1).await, "visible at once");
    assert_eq!(again.message_id(), m.message_id());
    let rh2 = again.receipt_handle().expect("ReceiptHandle").to_owned();

    // Extending works too: 100 s from now, so 31 s later it is still hidden.
    t.client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&rh2)
        .visibility_timeout(100)
        .send()
        .await
        .expect("ChangeMessageVisibility 100");
    t.advance_secs(31);
    assert!(
        t.receive(&url, 1).await.is_empty(),
        "extended timeout holds"
    );

    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&rh2)
        .send()
        .await
        .expect("DeleteMessage");
    let err = t
        .client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&rh2)
        .visibility_timeout(10)
        .send()
        .await
        .expect_err("the message is gone");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"));
    assert_eq!(
        w.message,
        Some(format!(
            "Value {rh2} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."
        ))
    );
    t.shutdown().await;
}
