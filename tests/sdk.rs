//! aws-sdk-sqs against the real server, started in-process on `127.0.0.1:0`.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock): visibility timeouts, delays,
//! retention and long-poll expiry move only when a test advances it (and wakes parked polls),
//! so nothing here sleeps for seconds. Expected texts and codes come from
//! `../shared/reference/sqs-protocol.md` (section numbers in the comments).

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::operation::change_message_visibility::ChangeMessageVisibilityError;
use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::operation::get_queue_url::GetQueueUrlError;
use aws_sdk_sqs::operation::send_message::SendMessageError;
use aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesError;
use aws_sdk_sqs::types::{
    MessageSystemAttributeName, MessageSystemAttributeNameForSends, MessageSystemAttributeValue,
    QueueAttributeName,
};
use common::{
    HANG_GUARD, TestServer, binary_attr, md5_hex, md5_of_attributes, only, string_attr, wire_error,
};
use localsqs::engine::ManualClock;

/// How long a spawned long poll is given to prove that it is still waiting. A correct server
/// never answers within it (its clock is frozen), so this cannot cause a false failure.
const STILL_WAITING: Duration = Duration::from_millis(200);

/// The attribute MD5 helper itself matches the vectors of §6.4, so the tests below that compare
/// the server's MD5s against it are meaningful.
#[test]
fn md5_helper_matches_reference_vectors() {
    let one = |name: &str, v| HashMap::from([(name.to_owned(), v)]);
    assert_eq!(
        md5_of_attributes(&one("Foo", string_attr("String", "Bar"))),
        "ae7155c6026991b6d54b11589678bf9c"
    );
    assert_eq!(
        md5_of_attributes(&one(
            "timestamp",
            string_attr("Number.java.lang.Long", "1493147359900")
        )),
        "2e2e4876d8e0bd6b8c2c8f556831c349"
    );
    assert_eq!(
        md5_of_attributes(&one("b", binary_attr("Binary", &[0, 1, 2]))),
        "0911ac989fa4a4b3440f074ba9941547"
    );
    let three = HashMap::from([
        ("General".to_owned(), string_attr("String", "Kenobi")),
        ("Hello".to_owned(), string_attr("String", "There")),
        ("Help.Me".to_owned(), string_attr("String", "Me")),
    ]);
    assert_eq!(
        md5_of_attributes(&three),
        "4c360f3fdafd970e05fae2f149d997f5"
    );
    assert_eq!(md5_hex(b"msg"), "6e2baaf3b97dbeef01c0043275f9a0e7");
}

/// 1. Full round trip with String, custom Number and Binary attributes, then delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_receive_delete_round_trip_with_attributes() {
    let t = TestServer::start().await;
    let url = t.create_queue("roundtrip", &[]).await;
    let body = "hello, localsqs";
    let binary: Vec<u8> = vec![0x00, 0x01, 0xfe, 0xff, 0x80, b'\n', 0x7f];
    let sent_attrs = HashMap::from([
        ("color".to_owned(), string_attr("String", "blue")),
        (
            "timestamp".to_owned(),
            string_attr("Number.java.lang.Long", "1493147359900"),
        ),
        ("blob".to_owned(), binary_attr("Binary", &binary)),
    ]);
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .set_message_attributes(Some(sent_attrs.clone()))
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_hex(body.as_bytes()).as_str())
    );
    let send_attr_md5 = sent
        .md5_of_message_attributes()
        .expect("MD5OfMessageAttributes on send")
        .to_owned();
    assert_eq!(send_attr_md5, md5_of_attributes(&sent_attrs));
    assert!(
        sent.md5_of_message_system_attributes().is_none(),
        "no system attributes were sent"
    );
    assert!(
        sent.sequence_number().is_none(),
        "standard queues have no SequenceNumber"
    );
    let message_id = sent.message_id().expect("MessageId").to_owned();

    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("All")
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), Some(message_id.as_str()));
    assert_eq!(m.body(), Some(body));
    assert_eq!(m.md5_of_body(), Some(md5_hex(body.as_bytes()).as_str()));
    assert_eq!(m.md5_of_message_attributes(), Some(send_attr_md5.as_str()));

    let got = m.message_attributes().expect("MessageAttributes");
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got["color"].data_type(), "String");
    assert_eq!(got["color"].string_value(), Some("blue"));
    assert_eq!(got["timestamp"].data_type(), "Number.java.lang.Long");
    assert_eq!(got["timestamp"].string_value(), Some("1493147359900"));
    assert_eq!(got["blob"].data_type(), "Binary");
    assert_eq!(
        got["blob"].binary_value().map(|b| b.as_ref().to_vec()),
        Some(binary.clone())
    );
    assert!(got["blob"].string_value().is_none());
    assert_eq!(md5_of_attributes(got), send_attr_md5);

    let sys = m
        .attributes()
        .expect("system attributes requested with All");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::SentTimestamp)
            .map(String::as_str),
        Some(common::START_MS.to_string().as_str())
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateFirstReceiveTimestamp)
            .map(String::as_str),
        Some(common::START_MS.to_string().as_str())
    );
    assert!(sys.contains_key(&MessageSystemAttributeName::SenderId));

    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
        .send()
        .await
        .expect("DeleteMessage");
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::ApproximateNumberOfMessages)
            .await,
        "0"
    );
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    // Even once the visibility timeout would have run out, nothing comes back.
    t.advance_secs(31);
    assert!(t.receive(&url, 10).await.is_empty());
    t.shutdown().await;
}

/// Receiving with a subset of attribute names returns only those, with the MD5 over exactly
/// what is returned (G-6); receiving without names returns no MessageAttributes at all (G-3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_filters_message_attributes() {
    let t = TestServer::start().await;
    let url = t.create_queue("filters", &[]).await;
    let attrs = HashMap::from([
        ("General".to_owned(), string_attr("String", "Kenobi")),
        ("Hello".to_owned(), string_attr("String", "There")),
        ("Help.Me".to_owned(), string_attr("String", "Me")),
    ]);
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("filtered")
        .set_message_attributes(Some(attrs))
        .send()
        .await
        .expect("SendMessage");
    for (selector, expected_names, expected_md5) in [
        (
            vec!["Hel.*"],
            vec!["Hello", "Help.Me"],
            Some("83fee93c1bcd8b9a5a923ffacdc636c7"),
        ),
        (
            vec!["Hello", "Missing"],
            vec!["Hello"],
            Some("a311262e065454b75da111d535b8dacd"),
        ),
        (vec![], vec![], None),
    ] {
        let out = t
            .client
            .receive_message()
            .queue_url(&url)
            .set_message_attribute_names(Some(selector.iter().map(|s| (*s).to_owned()).collect()))
            .visibility_timeout(0)
            .send()
            .await
            .expect("ReceiveMessage");
        let [m] = out.messages() else {
            panic!(
                "{selector:?}: expected one message, got {:?}",
                out.messages()
            );
        };
        let mut names: Vec<&str> = m
            .message_attributes()
            .map(|a| a.keys().map(String::as_str).collect())
            .unwrap_or_default();
        names.sort_unstable();
        assert_eq!(names, expected_names, "selector {selector:?}");
        assert_eq!(
            m.md5_of_message_attributes(),
            expected_md5,
            "selector {selector:?}"
        );
        if expected_names.is_empty() {
            assert!(
                m.message_attributes.is_none(),
                "no empty MessageAttributes map (G-3): {m:?}"
            );
        }
    }
    t.shutdown().await;
}

/// 2. A missing queue gives the typed QueueDoesNotExist (needs `x-amzn-query-error`, §5.2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_queue_is_typed_queue_does_not_exist() {
    let t = TestServer::start().await;
    let err = t
        .client
        .get_queue_url()
        .queue_name("no-such-queue")
        .send()
        .await
        .expect_err("GetQueueUrl of a missing queue fails");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(
        w.message.as_deref(),
        Some("The specified queue does not exist.")
    );
    let e = err.into_service_error();
    assert_eq!(
        e.meta().code(),
        Some("AWS.SimpleQueueService.NonExistentQueue")
    );
    assert!(
        matches!(e, GetQueueUrlError::QueueDoesNotExist(_)),
        "expected the typed QueueDoesNotExist, got {e:?}"
    );

    let url = t.create_queue("short-lived", &[]).await;
    t.send(&url, "before delete").await;
    t.client
        .delete_queue()
        .queue_url(&url)
        .send()
        .await
        .expect("DeleteQueue");
    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("after delete")
        .send()
        .await
        .expect_err("SendMessage to a deleted queue fails");
    let e = err.into_service_error();
    assert_eq!(
        e.meta().code(),
        Some("AWS.SimpleQueueService.NonExistentQueue")
    );
    assert!(
        matches!(e, SendMessageError::QueueDoesNotExist(_)),
        "expected the typed QueueDoesNotExist, got {e:?}"
    );
    let err = t
        .client
        .get_queue_url()
        .queue_name("short-lived")
        .send()
        .await
        .expect_err("the deleted queue has no URL");
    assert!(matches!(
        err.into_service_error(),
        GetQueueUrlError::QueueDoesNotExist(_)
    ));
    t.shutdown().await;
}

/// 3. CreateQueue is idempotent for equal attributes and fails with QueueNameExists otherwise
/// (§6.2, message from §5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_queue_idempotency_and_queue_name_exists() {
    let t = TestServer::start().await;
    let vt = |v| [(QueueAttributeName::VisibilityTimeout, v)];
    let url = t.create_queue("idem", &vt("60")).await;
    assert!(url.ends_with("/000000000000/idem"), "{url}");
    assert_eq!(t.create_queue("idem", &vt("60")).await, url);
    assert_eq!(
        t.create_queue("idem", &[]).await,
        url,
        "no attributes always matches"
    );
    let got = t
        .client
        .get_queue_url()
        .queue_name("idem")
        .send()
        .await
        .expect("GetQueueUrl");
    assert_eq!(got.queue_url(), Some(url.as_str()));

    let err = t
        .client
        .create_queue()
        .queue_name("idem")
        .attributes(QueueAttributeName::VisibilityTimeout, "61")
        .send()
        .await
        .expect_err("a different attribute value conflicts");
    let w = wire_error(&err);
    assert_eq!(w.status, 400);
    assert_eq!(w.code.as_deref(), Some("QueueAlreadyExists"));
    assert_eq!(
        w.message.as_deref(),
        Some(
            "A queue already exists with the same name and a different value for attribute VisibilityTimeout"
        )
    );
    let e = err.into_service_error();
    assert!(
        matches!(e, CreateQueueError::QueueNameExists(_)),
        "expected the typed QueueNameExists, got {e:?}"
    );

    // The comparison is against the current value, including changes made later.
    t.client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "61")
        .send()
        .await
        .expect("SetQueueAttributes");
    assert_eq!(t.create_queue("idem", &vt("61")).await, url);
    let err = t
        .client
        .create_queue()
        .queue_name("idem")
        .attributes(QueueAttributeName::VisibilityTimeout, "60")
        .send()
        .await
        .expect_err("the old value now conflicts");
    assert!(matches!(
        err.into_service_error(),
        CreateQueueError::QueueNameExists(_)
    ));
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
        Some(common::START_MS.to_string().as_str()),
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

/// 7a. A long poll parked on an empty queue returns the message that a later send delivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_by_a_send() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll", &[]).await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "a long poll on an empty queue waits while the clock stands still"
    );
    let id = t.send(&url, "wake up").await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the send wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the sent message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("wake up"));
    t.shutdown().await;
}

/// 7b. A long poll on an empty queue ends with no messages once its wait has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_expires_with_the_clock() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll-expiry", &[]).await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(5)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the poll waits while the clock stands still"
    );
    // Normally one step ends it. Should the request only now reach the server, its wait starts
    // from the moved clock, so keep stepping (each step is a full wait) until it answers.
    let mut result = None;
    for _ in 0..50 {
        t.advance_secs(5);
        if let Ok(joined) = tokio::time::timeout(Duration::from_millis(500), &mut receive).await {
            result = Some(joined.expect("task").expect("ReceiveMessage"));
            break;
        }
    }
    let out = result.expect("the long poll ends once its wait has passed");
    assert!(out.messages().is_empty(), "{out:?}");
    assert!(
        out.messages.is_none(),
        "no empty Messages list (G-8): {out:?}"
    );
    t.shutdown().await;
}

/// 7c. Without WaitTimeSeconds, a receive waits for the queue's ReceiveMessageWaitTimeSeconds
/// (§6.7), and a per-receive VisibilityTimeout overrides the queue's for that receive only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_wait_time_and_receive_visibility_override() {
    let t = TestServer::start().await;
    let url = t
        .create_queue(
            "queue-wait",
            &[(QueueAttributeName::ReceiveMessageWaitTimeSeconds, "20")],
        )
        .await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .visibility_timeout(5)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the queue's wait time makes this a long poll"
    );
    let id = t.send(&url, "queue wait").await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the send wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the sent message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), Some(id.as_str()));

    // VisibilityTimeout 5 on that receive: back after 5 s, not 30.
    t.advance_secs(4);
    assert!(t.receive(&url, 1).await.is_empty());
    t.advance_secs(1);
    let again = only(t.receive(&url, 1).await, "visible after the 5 s override");
    assert_eq!(again.message_id(), Some(id.as_str()));
    // This receive used the queue's 30 s again.
    t.advance_secs(29);
    assert!(t.receive(&url, 1).await.is_empty());
    t.advance_secs(1);
    only(t.receive(&url, 1).await, "visible after the queue's 30 s");
    t.shutdown().await;
}

/// 7d. Shutting the server down answers a parked long poll (empty) instead of leaving it hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_parked_long_polls() {
    let t = TestServer::start().await;
    let url = t.create_queue("shutdown-poll", &[]).await;
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the poll is parked"
    );
    t.shutdown().await;
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("shutdown ends the long poll")
        .expect("task")
        .expect("the parked poll gets an answer, not a broken connection");
    assert!(out.messages().is_empty(), "{out:?}");
}

/// Default queue attributes and the computed ones, as GetQueueAttributes(All) reports them
/// on a fresh standard queue (§6.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_queue_attributes() {
    let t = TestServer::start().await;
    let url = t.create_queue("defaults", &[]).await;
    let out = t
        .client
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("GetQueueAttributes");
    let got: HashMap<String, String> = out
        .attributes()
        .expect("attributes")
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
        .collect();
    let created = (common::START_MS / 1000).to_string();
    let expected: HashMap<String, String> = [
        ("ApproximateNumberOfMessages", "0"),
        ("ApproximateNumberOfMessagesDelayed", "0"),
        ("ApproximateNumberOfMessagesNotVisible", "0"),
        ("CreatedTimestamp", created.as_str()),
        ("DelaySeconds", "0"),
        ("LastModifiedTimestamp", created.as_str()),
        ("MaximumMessageSize", "1048576"),
        ("MessageRetentionPeriod", "345600"),
        ("QueueArn", "arn:aws:sqs:us-east-1:000000000000:defaults"),
        ("ReceiveMessageWaitTimeSeconds", "0"),
        ("SqsManagedSseEnabled", "true"),
        ("VisibilityTimeout", "30"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(got, expected);

    // Attributes never set are omitted even when asked for by name.
    let out = t
        .client
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::RedrivePolicy)
        .send()
        .await
        .expect("GetQueueAttributes RedrivePolicy");
    assert!(out.attributes.is_none(), "{out:?}");
    t.shutdown().await;
}

/// 8. A long poll is woken when a delayed message becomes visible (§6.15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_is_woken_when_a_delay_ends() {
    let t = TestServer::start().await;
    let url = t.create_queue("long-poll-delay", &[]).await;
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("later")
        .delay_seconds(10)
        .send()
        .await
        .expect("SendMessage");
    let (client, poll_url) = (t.client.clone(), url.clone());
    let mut receive = tokio::spawn(async move {
        client
            .receive_message()
            .queue_url(poll_url)
            .wait_time_seconds(20)
            .send()
            .await
    });
    assert!(
        tokio::time::timeout(STILL_WAITING, &mut receive)
            .await
            .is_err(),
        "the delayed message is not receivable yet"
    );
    t.advance_secs(10);
    let out = tokio::time::timeout(HANG_GUARD, receive)
        .await
        .expect("the end of the delay wakes the long poll")
        .expect("task")
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected the delayed message, got {:?}", out.messages());
    };
    assert_eq!(m.message_id(), sent.message_id());
    t.shutdown().await;
}

/// 9. Queue-level and per-message DelaySeconds, and ApproximateNumberOfMessagesDelayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delay_seconds_queue_and_message() {
    let t = TestServer::start().await;
    let url = t
        .create_queue("delayed", &[(QueueAttributeName::DelaySeconds, "5")])
        .await;
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::DelaySeconds).await,
        "5"
    );

    // The queue's delay applies by default.
    t.send(&url, "queue delay").await;
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(4);
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    t.advance_secs(1);
    assert_eq!(t.counts(&url).await, (1, 0, 0));
    let m = only(t.receive(&url, 10).await, "delay over");
    assert_eq!(m.body(), Some("queue delay"));
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
        .send()
        .await
        .expect("DeleteMessage");

    // A per-message value overrides it, both ways.
    for (delay, body) in [(0, "no delay"), (10, "ten seconds")] {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body(body)
            .delay_seconds(delay)
            .send()
            .await
            .expect("SendMessage with DelaySeconds");
    }
    assert_eq!(t.counts(&url).await, (1, 0, 1));
    let now = only(t.receive(&url, 10).await, "undelayed one");
    assert_eq!(now.body(), Some("no delay"));
    t.advance_secs(9);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "9 s into a 10 s delay"
    );
    assert_eq!(t.counts(&url).await, (0, 1, 1));
    t.advance_secs(1);
    assert_eq!(t.counts(&url).await.2, 0, "nothing delayed any more");
    let later = only(t.receive(&url, 10).await, "delayed one");
    assert_eq!(later.body(), Some("ten seconds"));
    t.shutdown().await;
}

/// 10. Messages older than MessageRetentionPeriod disappear, in flight or not (§6.15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_period_drops_messages_even_in_flight() {
    let t = TestServer::start().await;
    let url = t
        .create_queue(
            "retention",
            &[(QueueAttributeName::MessageRetentionPeriod, "60")],
        )
        .await;
    t.send(&url, "in flight").await;
    t.send(&url, "waiting").await;
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .visibility_timeout(300)
        .send()
        .await
        .expect("ReceiveMessage");
    let [held] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    let rh = held.receipt_handle().expect("ReceiptHandle").to_owned();
    assert_eq!(t.counts(&url).await, (1, 1, 0));

    t.advance_secs(59);
    assert_eq!(t.counts(&url).await, (1, 1, 0), "59 s old: still retained");
    t.advance_secs(2);
    assert_eq!(t.counts(&url).await, (0, 0, 0), "61 s old: both gone");
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(300);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "the in-flight one does not come back after its visibility timeout"
    );
    // Its handle is well-formed, so deleting it is a harmless success.
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(rh)
        .send()
        .await
        .expect("DeleteMessage of an expired message");
    t.shutdown().await;
}

/// 11. ListQueues with a prefix, and MaxResults pagination until NextToken runs out (§6.12).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_queues_prefix_and_pagination() {
    let t = TestServer::start().await;
    let mut page_urls = HashSet::new();
    for i in 0..7 {
        page_urls.insert(t.create_queue(&format!("page-{i}"), &[]).await);
    }
    let mut all_urls = page_urls.clone();
    for i in 0..3 {
        all_urls.insert(t.create_queue(&format!("other-{i}"), &[]).await);
    }

    let out = t
        .client
        .list_queues()
        .queue_name_prefix("page-")
        .send()
        .await
        .expect("ListQueues with prefix");
    let got: HashSet<String> = out.queue_urls().iter().cloned().collect();
    assert_eq!(out.queue_urls().len(), 7);
    assert_eq!(got, page_urls);
    assert!(
        out.next_token().is_none(),
        "no NextToken without MaxResults"
    );

    let out = t
        .client
        .list_queues()
        .queue_name_prefix("Page-")
        .send()
        .await
        .expect("ListQueues");
    assert!(
        out.queue_urls.is_none(),
        "prefix is case-sensitive; no empty list (G-8)"
    );

    for (prefix, max, expected) in [(None, 3, &all_urls), (Some("page-"), 2, &page_urls)] {
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        loop {
            let out = t
                .client
                .list_queues()
                .set_queue_name_prefix(prefix.map(str::to_owned))
                .max_results(max)
                .set_next_token(token.take())
                .send()
                .await
                .expect("ListQueues page");
            pages += 1;
            assert!(pages <= 20, "pagination does not end");
            let n = out.queue_urls().len();
            assert!(
                n <= usize::try_from(max).expect("small"),
                "page of {n} exceeds MaxResults {max}"
            );
            seen.extend(out.queue_urls().iter().cloned());
            match out.next_token() {
                Some(next) => {
                    assert!(n > 0, "a page with a NextToken has queues");
                    token = Some(next.to_owned());
                }
                None => break,
            }
        }
        let unique: HashSet<String> = seen.iter().cloned().collect();
        assert_eq!(unique.len(), seen.len(), "a queue listed twice: {seen:?}");
        assert_eq!(&unique, expected, "prefix {prefix:?}, MaxResults {max}");
        let max = usize::try_from(max).expect("small");
        assert_eq!(
            pages,
            expected.len().div_ceil(max),
            "full pages until the last; {} queues, MaxResults {max}",
            expected.len()
        );
    }
    t.shutdown().await;
}

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

/// 13. A body with XML/JSON-special characters, CR LF and non-ASCII text comes back byte-exact
/// (§6.3, G-7).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_characters_round_trip_exactly() {
    let t = TestServer::start().await;
    let url = t.create_queue("chars", &[]).await;
    let body = "quote \" amp & lt < gt > apos ' crlf \r\n cr \r lf \n tab \t \
                &quot; &amp; <![CDATA[x]]> \\u0041 \u{e9}\u{e8} \u{65e5}\u{672c} \u{1f980} \u{e000}\u{fffd}";
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .message_attributes("note", string_attr("String", body))
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_body(),
        Some(md5_hex(body.as_bytes()).as_str())
    );
    let out = t
        .client
        .receive_message()
        .queue_url(&url)
        .message_attribute_names("note")
        .send()
        .await
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    assert_eq!(m.body().map(str::as_bytes), Some(body.as_bytes()));
    assert_eq!(m.md5_of_body(), Some(md5_hex(body.as_bytes()).as_str()));
    let note = &m.message_attributes().expect("MessageAttributes")["note"];
    assert_eq!(note.string_value(), Some(body));
    assert_eq!(
        m.md5_of_message_attributes(),
        sent.md5_of_message_attributes()
    );
    t.shutdown().await;
}

/// 14. AWSTraceHeader sent as a message system attribute: MD5OfMessageSystemAttributes on send,
/// returned on receive only when asked for (§6.4, §6.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_trace_header_system_attribute() {
    let t = TestServer::start().await;
    let url = t.create_queue("trace", &[]).await;
    let trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    let sent = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("traced")
        .message_system_attributes(
            MessageSystemAttributeNameForSends::AwsTraceHeader,
            MessageSystemAttributeValue::builder()
                .data_type("String")
                .string_value(trace)
                .build()
                .expect("system attribute builds"),
        )
        .send()
        .await
        .expect("SendMessage");
    assert_eq!(
        sent.md5_of_message_system_attributes(),
        Some("5ae4d5d7636402d80f4eb6d213245a88")
    );
    assert!(
        sent.md5_of_message_attributes().is_none(),
        "system attributes do not make an MD5OfMessageAttributes (G-2)"
    );

    let receive = |names: Vec<MessageSystemAttributeName>| {
        t.client
            .receive_message()
            .queue_url(&url)
            .set_message_system_attribute_names((!names.is_empty()).then_some(names))
            .visibility_timeout(0)
            .send()
    };
    let out = receive(vec![MessageSystemAttributeName::AwsTraceHeader])
        .await
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    let sys = m.attributes().expect("AWSTraceHeader requested");
    assert_eq!(sys.len(), 1, "only what was asked for: {sys:?}");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::AwsTraceHeader)
            .map(String::as_str),
        Some(trace)
    );
    assert!(m.md5_of_message_attributes().is_none());
    assert!(m.message_attributes.is_none());

    let out = receive(vec![MessageSystemAttributeName::All])
        .await
        .expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    let sys = m.attributes().expect("All requested");
    assert_eq!(
        sys.get(&MessageSystemAttributeName::AwsTraceHeader)
            .map(String::as_str),
        Some(trace)
    );
    assert_eq!(
        sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
            .map(String::as_str),
        Some("2")
    );

    let out = receive(vec![]).await.expect("ReceiveMessage");
    let [m] = out.messages() else {
        panic!("expected one message, got {:?}", out.messages());
    };
    assert!(m.attributes.is_none(), "no names, no Attributes: {m:?}");
    t.shutdown().await;
}

/// 15. State survives a restart on the same data directory: queue, attributes, messages, and
/// the in-flight message's visibility timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_state_survives_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::new(common::START_MS));

    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let url = t
        .create_queue("durable", &[(QueueAttributeName::VisibilityTimeout, "45")])
        .await;
    let mut ids = Vec::new();
    for body in ["one", "two", "three"] {
        ids.push(t.send(&url, body).await);
    }
    let held = only(t.receive(&url, 1).await, "one message");
    let held_id = held.message_id().expect("MessageId").to_owned();
    let held_rh = held.receipt_handle().expect("ReceiptHandle").to_owned();
    assert!(ids.contains(&held_id));
    t.shutdown().await;

    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let url = t
        .client
        .get_queue_url()
        .queue_name("durable")
        .send()
        .await
        .expect("the queue is still there")
        .queue_url()
        .expect("QueueUrl")
        .to_owned();
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::VisibilityTimeout)
            .await,
        "45"
    );
    assert_eq!(t.counts(&url).await, (2, 1, 0));

    let got = t.receive(&url, 10).await;
    let mut got_ids: Vec<&str> = got.iter().filter_map(|m| m.message_id()).collect();
    got_ids.sort_unstable();
    let mut expected: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| *id != held_id)
        .collect();
    expected.sort_unstable();
    assert_eq!(
        got_ids, expected,
        "the two messages that were not in flight"
    );
    for m in &got {
        let sys = m.attributes().expect("system attributes");
        assert_eq!(
            sys.get(&MessageSystemAttributeName::ApproximateReceiveCount)
                .map(String::as_str),
            Some("1")
        );
        t.client
            .delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
            .send()
            .await
            .expect("DeleteMessage");
    }
    assert_eq!(t.counts(&url).await, (0, 1, 0));

    t.advance_secs(44);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "the in-flight message keeps its 45 s timeout across the restart"
    );
    t.advance_secs(2);
    let back = only(t.receive(&url, 10).await, "visible again");
    assert_eq!(back.message_id(), Some(held_id.as_str()));
    assert_eq!(
        back.attributes()
            .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
            .map(String::as_str),
        Some("2"),
        "the receive count survives the restart"
    );
    // A handle issued before the restart still deletes the message (standard queue).
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&held_rh)
        .send()
        .await
        .expect("DeleteMessage with the pre-restart handle");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// Standard queues accept a MessageGroupId and return it ("fair queues"), accept and ignore a
/// ReceiveRequestAttemptId, and reject a MessageDeduplicationId (§6.5, §6.7).
#[tokio::test]
async fn standard_queue_group_ids_attempt_ids_and_dedup_ids() {
    let t = TestServer::start().await;
    let url = t.create_queue("fair", &[]).await;
    t.client
        .send_message()
        .queue_url(&url)
        .message_body("tenant message")
        .message_group_id("tenant-1")
        .send()
        .await
        .expect("a group id is accepted on a standard queue");
    let got = t
        .client
        .receive_message()
        .queue_url(&url)
        .receive_request_attempt_id("attempt-1")
        .message_system_attribute_names(
            aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId,
        )
        .send()
        .await
        .expect("an attempt id is accepted on a standard queue");
    let m = common::only(got.messages().to_vec(), "message");
    let attrs = m.attributes().expect("attributes");
    assert_eq!(
        attrs
            .get(&aws_sdk_sqs::types::MessageSystemAttributeName::MessageGroupId)
            .map(String::as_str),
        Some("tenant-1")
    );
    let err = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_deduplication_id("d1")
        .send()
        .await
        .expect_err("a dedup id is not valid for a standard queue");
    let w = common::wire_error(&err);
    assert_eq!(w.code.as_deref(), Some("InvalidParameterValue"), "{w:?}");
    t.shutdown().await;
}
