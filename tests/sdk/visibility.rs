//! Visibility on standard queues: in flight means invisible, redelivery after the timeout with a
//! new handle and a higher receive count, stale handles, and ChangeMessageVisibility. Section
//! numbers refer to docs/protocol.md.

use aws_sdk_sqs::types::MessageSystemAttributeName;

use crate::harness::{
    START_MS, TestServer, change_visibility, delete_handle, expect_error, handle, only,
    receive_count, sys,
};

/// 5. Visibility timeout: invisible while in flight, back after 30 s with a new handle and a
/// higher receive count; stale handles still delete on standard queues; deletes repeat (§6.8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_timeout_redelivery_and_stale_handles() {
    let t = TestServer::start().await;
    let url = t.create_queue("visibility", &[]).await;
    t.send(&url, "once").await;
    let first = only(t.receive(&url, 10).await, "one message");
    let first_rh = handle(&first).to_owned();
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
    assert_eq!(receive_count(&second), "2");
    assert_eq!(
        sys(
            &second,
            &MessageSystemAttributeName::ApproximateFirstReceiveTimestamp
        ),
        Some(START_MS.to_string().as_str()),
        "the first receive time does not move"
    );
    let second_rh = handle(&second);
    assert_ne!(second_rh, first_rh, "each receive issues a new handle");

    // The older handle still deletes the message on a standard queue.
    for _ in 0..2 {
        delete_handle(&t, &url, &first_rh)
            .await
            .expect("DeleteMessage with the stale handle (twice)");
    }
    delete_handle(&t, &url, second_rh)
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
    let rh = handle(&m).to_owned();
    assert!(t.receive(&url, 1).await.is_empty());

    change_visibility(&t, &url, &rh, 0)
        .await
        .expect("ChangeMessageVisibility 0");
    let again = only(t.receive(&url, 1).await, "visible at once");
    assert_eq!(again.message_id(), m.message_id());
    let rh2 = handle(&again).to_owned();

    // Extending works too: 100 s from now, so 31 s later it is still hidden.
    change_visibility(&t, &url, &rh2, 100)
        .await
        .expect("ChangeMessageVisibility 100");
    t.advance_secs(31);
    assert!(
        t.receive(&url, 1).await.is_empty(),
        "extended timeout holds"
    );

    delete_handle(&t, &url, &rh2).await.expect("DeleteMessage");
    expect_error(
        "the message is gone",
        change_visibility(&t, &url, &rh2, 10).await,
        400,
        "InvalidParameterValue",
        Some(&format!(
            "Value {rh2} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."
        )),
    );
    t.shutdown().await;
}
