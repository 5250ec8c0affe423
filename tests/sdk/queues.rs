//! Queues: CreateQueue idempotency and QueueNameExists, the typed QueueDoesNotExist, default
//! attributes, ListQueues with prefixes and pagination, and durable state across a restart.
//! Section numbers refer to docs/protocol.md.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::get_queue_url::GetQueueUrlError;
use aws_sdk_sqs::operation::send_message::SendMessageError;
use aws_sdk_sqs::types::QueueAttributeName;
use localsqs::engine::ManualClock;

use crate::harness::{
    START_MS, TestServer, delete, delete_handle, expect_error, only, receive_count, set_attr,
};

/// 2. A missing queue gives the typed QueueDoesNotExist (needs `x-amzn-query-error`, §5.2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_queue_is_typed_queue_does_not_exist() {
    let t = TestServer::start().await;
    let r = t
        .client
        .get_queue_url()
        .queue_name("no-such-queue")
        .send()
        .await;
    let e = expect_error(
        "GetQueueUrl of a missing queue fails",
        r,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        Some("The specified queue does not exist."),
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
    let gone = "AWS.SimpleQueueService.NonExistentQueue";
    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("after delete")
        .send()
        .await;
    let e = expect_error("SendMessage to a deleted queue fails", r, 400, gone, None);
    assert!(
        matches!(e, SendMessageError::QueueDoesNotExist(_)),
        "expected the typed QueueDoesNotExist, got {e:?}"
    );
    let r = t
        .client
        .get_queue_url()
        .queue_name("short-lived")
        .send()
        .await;
    let e = expect_error("the deleted queue has no URL", r, 400, gone, None);
    assert!(matches!(e, GetQueueUrlError::QueueDoesNotExist(_)));
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

    let r = t.try_create_queue("idem", &vt("61")).await;
    let e = expect_error(
        "a different attribute value conflicts",
        r,
        400,
        "QueueAlreadyExists",
        Some(
            "A queue already exists with the same name and a different value for attribute VisibilityTimeout",
        ),
    );
    assert!(
        matches!(e, CreateQueueError::QueueNameExists(_)),
        "expected the typed QueueNameExists, got {e:?}"
    );

    // The comparison is against the current value, including changes made later.
    set_attr(&t, &url, QueueAttributeName::VisibilityTimeout, "61")
        .await
        .expect("SetQueueAttributes");
    assert_eq!(t.create_queue("idem", &vt("61")).await, url);
    let r = t.try_create_queue("idem", &vt("60")).await;
    let e = expect_error(
        "the old value now conflicts",
        r,
        400,
        "QueueAlreadyExists",
        None,
    );
    assert!(matches!(e, CreateQueueError::QueueNameExists(_)));
    t.shutdown().await;
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
    let created = (START_MS / 1000).to_string();
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

/// 15. State survives a restart on the same data directory: queue, attributes, messages, and
/// the in-flight message's visibility timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_state_survives_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::new(START_MS));

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
        assert_eq!(receive_count(m), "1");
        delete(&t, &url, m).await;
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
        receive_count(&back),
        "2",
        "the receive count survives the restart"
    );
    // A handle issued before the restart still deletes the message (standard queue).
    delete_handle(&t, &url, &held_rh)
        .await
        .expect("DeleteMessage with the pre-restart handle");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// The queue count is bounded (`Server::max_queues`, `--max-queues`): past it CreateQueue fails
/// with OverLimit; asking again for a queue that exists still answers its URL, and deleting a
/// queue makes room.
#[tokio::test]
async fn the_queue_count_is_bounded() {
    assert_eq!(
        localsqs::engine::EngineOptions::default().max_queues,
        Some(100_000)
    );
    let server = localsqs::Server::builder()
        .max_queues(Some(2))
        .start()
        .await
        .expect("server starts");
    let client = crate::harness::client(&server.endpoint());
    let create = |name: &'static str| client.create_queue().queue_name(name).send();
    let a = create("a").await.expect("first").queue_url.expect("url");
    create("b").await.expect("second");
    expect_error(
        "a third queue",
        create("c").await,
        403,
        "OverLimit",
        Some(
            "This localsqs has reached its limit of 2 queues. Delete a queue, or start localsqs with a higher --max-queues.",
        ),
    );
    let again = create("a")
        .await
        .expect("an existing queue is not a new one");
    assert_eq!(again.queue_url.as_deref(), Some(a.as_str()));
    client
        .delete_queue()
        .queue_url(&a)
        .send()
        .await
        .expect("delete");
    create("c").await.expect("room again after a delete");
}
