//! FIFO queues through aws-sdk-sqs (GitHub issue #4): creation rules, required ids,
//! deduplication, sequence numbers, group ordering and locking, delays, receive-attempt
//! retries, receipt-handle expiry, batches, and many concurrent consumers.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock); nothing sleeps for seconds.
//! Expected texts come from `../shared/reference/sqs-protocol.md` (§5.5, §6.6–§6.9, §4).

mod common;

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::operation::send_message::SendMessageOutput;
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, Message, MessageSystemAttributeName, QueueAttributeName,
    SendMessageBatchRequestEntry,
};
use common::{HANG_GUARD, TestServer, md5_hex, md5_of_attributes, only, string_attr, wire_error};
use sha2::{Digest, Sha256};

/// §5.5: FIFO send without MessageGroupId.
const NO_GROUP: &str = "The request must contain the parameter MessageGroupId.";
/// §5.5: FIFO send without a deduplication id on a queue without content-based deduplication.
const NO_DEDUP: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

/// Asserts that `res` failed with the given HTTP status, error code and (when given) message.
fn expect_error<T: Debug, E: ProvideErrorMetadata + Debug>(
    what: &str,
    res: Result<T, SdkError<E, HttpResponse>>,
    status: u16,
    code: &str,
    message: Option<&str>,
) {
    let err = match res {
        Ok(v) => panic!("{what}: expected {code}, got success {v:?}"),
        Err(e) => e,
    };
    let w = wire_error(&err);
    assert_eq!(w.status, status, "{what}: {w:?}");
    assert_eq!(w.code.as_deref(), Some(code), "{what}: {w:?}");
    if let Some(m) = message {
        assert_eq!(w.message.as_deref(), Some(m), "{what}: {w:?}");
    }
}

/// Creates a FIFO queue (`name` must end in `.fifo`) with extra attributes.
async fn fifo_queue(t: &TestServer, name: &str, extra: &[(QueueAttributeName, &str)]) -> String {
    let mut attrs = vec![(QueueAttributeName::FifoQueue, "true")];
    attrs.extend(extra.iter().cloned());
    t.create_queue(name, &attrs).await
}

/// A FIFO queue with content-based deduplication, so bodies double as deduplication ids.
async fn cbd_queue(t: &TestServer, name: &str, extra: &[(QueueAttributeName, &str)]) -> String {
    let mut attrs = vec![(QueueAttributeName::ContentBasedDeduplication, "true")];
    attrs.extend(extra.iter().cloned());
    fifo_queue(t, name, &attrs).await
}

/// Sends one FIFO message; panics on failure.
async fn send_fifo(
    t: &TestServer,
    url: &str,
    body: &str,
    group: &str,
    dedup: Option<&str>,
) -> SendMessageOutput {
    t.client
        .send_message()
        .queue_url(url)
        .message_body(body)
        .message_group_id(group)
        .set_message_deduplication_id(dedup.map(str::to_owned))
        .send()
        .await
        .unwrap_or_else(|e| panic!("SendMessage {body} ({group}): {e:?}"))
}

/// A batch entry.
fn entry(
    id: &str,
    body: &str,
    group: Option<&str>,
    dedup: Option<&str>,
) -> SendMessageBatchRequestEntry {
    SendMessageBatchRequestEntry::builder()
        .id(id)
        .message_body(body)
        .set_message_group_id(group.map(str::to_owned))
        .set_message_deduplication_id(dedup.map(str::to_owned))
        .build()
        .expect("batch entry builds")
}

/// A short-poll receive with a per-receive visibility timeout and all system attributes.
async fn receive_vis(t: &TestServer, url: &str, max: i32, visibility: i32) -> Vec<Message> {
    t.client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .visibility_timeout(visibility)
        .wait_time_seconds(0)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ReceiveMessage: {e:?}"))
        .messages
        .unwrap_or_default()
}

fn bodies(msgs: &[Message]) -> Vec<&str> {
    msgs.iter().map(|m| m.body().expect("Body")).collect()
}

fn sys<'a>(m: &'a Message, name: &MessageSystemAttributeName) -> Option<&'a str> {
    m.attributes().and_then(|a| a.get(name)).map(String::as_str)
}

fn receive_count(m: &Message) -> &str {
    sys(m, &MessageSystemAttributeName::ApproximateReceiveCount)
        .expect("ApproximateReceiveCount requested")
}

async fn delete(t: &TestServer, url: &str, m: &Message) {
    t.client
        .delete_message()
        .queue_url(url)
        .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("DeleteMessage {:?}: {e:?}", m.body()));
}

async fn all_attributes(t: &TestServer, url: &str) -> HashMap<QueueAttributeName, String> {
    t.client
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("GetQueueAttributes All")
        .attributes
        .unwrap_or_default()
}

fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Parses a SequenceNumber: 20 decimal digits, above u64::MAX (§4, G-23).
fn sequence(s: Option<&str>) -> u128 {
    let s = s.expect("FIFO sends and receives carry a SequenceNumber");
    assert_eq!(s.len(), 20, "SequenceNumber {s} is 20 digits");
    assert!(
        s.bytes().all(|b| b.is_ascii_digit()),
        "SequenceNumber {s} is decimal"
    );
    let n: u128 = s.parse().expect("SequenceNumber parses as u128");
    assert!(
        n > u128::from(u64::MAX),
        "SequenceNumber {s} is larger than u64::MAX"
    );
    n
}

/// Creation rules (§6.1, §6.2, §5.5, G-28) and the FIFO defaults returned by
/// GetQueueAttributes All; the queue type cannot be changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_rules_and_default_attributes() {
    let t = TestServer::start().await;
    let r = t
        .client
        .create_queue()
        .queue_name("no-suffix")
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await;
    expect_error(
        "FifoQueue=true on a name without .fifo",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t
        .client
        .create_queue()
        .queue_name("suffix-only.fifo")
        .send()
        .await;
    expect_error(
        "a .fifo name without FifoQueue=true",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t
        .client
        .create_queue()
        .queue_name("standard")
        .attributes(QueueAttributeName::FifoQueue, "false")
        .send()
        .await;
    expect_error(
        "FifoQueue=false on a standard queue",
        r,
        400,
        "InvalidAttributeName",
        Some("Unknown Attribute FifoQueue."),
    );
    let listed = t.client.list_queues().send().await.expect("ListQueues");
    assert!(
        listed.queue_urls().is_empty(),
        "failed creations leave no queue: {listed:?}"
    );

    let url = fifo_queue(&t, "orders.fifo", &[]).await;
    assert!(url.ends_with("/orders.fifo"), "{url}");
    let attrs = all_attributes(&t, &url).await;
    let get = |n: QueueAttributeName| attrs.get(&n).map(String::as_str);
    assert_eq!(
        get(QueueAttributeName::FifoQueue),
        Some("true"),
        "{attrs:?}"
    );
    assert_eq!(
        get(QueueAttributeName::ContentBasedDeduplication),
        Some("false"),
        "{attrs:?}"
    );
    assert_eq!(
        get(QueueAttributeName::DeduplicationScope),
        Some("queue"),
        "{attrs:?}"
    );
    assert_eq!(
        get(QueueAttributeName::FifoThroughputLimit),
        Some("perQueue"),
        "{attrs:?}"
    );
    assert!(
        get(QueueAttributeName::QueueArn).is_some_and(|a| a.ends_with(":orders.fifo")),
        "{attrs:?}"
    );

    let r = t
        .client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::FifoQueue, "false")
        .send()
        .await;
    expect_error(
        "SetQueueAttributes FifoQueue=false on a FIFO queue",
        r,
        400,
        "InvalidAttributeValue",
        Some(
            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
        ),
    );
    t.client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::FifoQueue, "true")
        .send()
        .await
        .expect("FifoQueue=true on a FIFO queue is accepted");
    assert_eq!(
        t.queue_attr(&url, QueueAttributeName::FifoQueue).await,
        "true"
    );

    // A standard queue reports none of the FIFO attributes.
    let std_url = t.create_queue("plain", &[]).await;
    let std_attrs = all_attributes(&t, &std_url).await;
    for n in [
        QueueAttributeName::FifoQueue,
        QueueAttributeName::ContentBasedDeduplication,
        QueueAttributeName::DeduplicationScope,
        QueueAttributeName::FifoThroughputLimit,
    ] {
        assert!(!std_attrs.contains_key(&n), "{n} on a standard queue");
    }
    t.shutdown().await;
}

/// MessageGroupId and a deduplication id are required; batches fail as a whole (§5.5, §6.6,
/// G-19); group ids are validated with AWS's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_and_deduplication_ids_are_required() {
    let t = TestServer::start().await;
    let url = fifo_queue(&t, "required.fifo", &[]).await;

    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("no group")
        .message_deduplication_id("d0")
        .send()
        .await;
    expect_error(
        "SendMessage without MessageGroupId",
        r,
        400,
        "MissingParameter",
        Some(NO_GROUP),
    );

    let r = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("ok", "fine", Some("g"), Some("d1")))
        .entries(entry("bad", "no group", None, Some("d2")))
        .send()
        .await;
    expect_error(
        "SendMessageBatch with an entry without MessageGroupId",
        r,
        400,
        "InvalidParameterValue",
        Some(NO_GROUP),
    );

    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("no dedup")
        .message_group_id("g")
        .send()
        .await;
    expect_error(
        "SendMessage without MessageDeduplicationId",
        r,
        400,
        "InvalidParameterValue",
        Some(NO_DEDUP),
    );
    let r = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("ok", "fine", Some("g"), Some("d3")))
        .entries(entry("bad", "no dedup", Some("g"), None))
        .send()
        .await;
    expect_error(
        "SendMessageBatch with an entry without MessageDeduplicationId",
        r,
        400,
        "InvalidParameterValue",
        Some(NO_DEDUP),
    );

    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("spaces")
        .message_group_id("group 123")
        .message_deduplication_id("d4")
        .send()
        .await;
    expect_error(
        "MessageGroupId with a space",
        r,
        400,
        "InvalidParameterValue",
        Some(
            "Value group 123 for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        ),
    );
    let long = "g".repeat(129);
    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("long")
        .message_group_id(&long)
        .message_deduplication_id("d5")
        .send()
        .await;
    expect_error(
        "129-character MessageGroupId",
        r,
        400,
        "InvalidParameterValue",
        Some(&format!(
            "Value {long} for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
        )),
    );

    assert_eq!(
        t.counts(&url).await,
        (0, 0, 0),
        "nothing was enqueued by the failed requests, not even the good batch entries"
    );

    // Punctuation and 128 characters are fine.
    let punct = "a-b_c.d:e!~#$%&'()*+,/;<=>?@[\\]^`{|}";
    send_fifo(&t, &url, "punct", punct, Some("d6")).await;
    send_fifo(&t, &url, "max", &"g".repeat(128), Some("d7")).await;
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["punct", "max"]);
    assert_eq!(
        sys(&got[0], &MessageSystemAttributeName::MessageGroupId),
        Some(punct)
    );

    // With content-based deduplication no explicit id is needed.
    let cbd = cbd_queue(&t, "cbd.fifo", &[]).await;
    send_fifo(&t, &cbd, "content", "g", None).await;
    assert_eq!(bodies(&t.receive(&cbd, 10).await), ["content"]);
    t.shutdown().await;
}

/// An explicit deduplication id: the duplicate is accepted, returns the original MessageId and
/// SequenceNumber with the MD5s of its own request, and is not delivered (§6.9, §6.15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_deduplication_returns_the_original_ids() {
    let t = TestServer::start().await;
    let url = fifo_queue(&t, "explicit.fifo", &[]).await;
    let first_attrs = HashMap::from([("k".to_owned(), string_attr("String", "first"))]);
    let first = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("first body")
        .message_group_id("g")
        .message_deduplication_id("dedup-1")
        .set_message_attributes(Some(first_attrs.clone()))
        .send()
        .await
        .expect("first send");
    let first_id = first.message_id().expect("MessageId").to_owned();
    let first_seq = sequence(first.sequence_number());

    t.advance_secs(10);
    let second_attrs = HashMap::from([("other".to_owned(), string_attr("Number", "42"))]);
    let second = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("second body")
        .message_group_id("g")
        .message_deduplication_id("dedup-1")
        .set_message_attributes(Some(second_attrs.clone()))
        .send()
        .await
        .expect("a duplicate send succeeds");
    assert_eq!(
        second.message_id(),
        Some(first_id.as_str()),
        "the duplicate returns the original MessageId"
    );
    assert_eq!(
        sequence(second.sequence_number()),
        first_seq,
        "the duplicate returns the original SequenceNumber"
    );
    assert_eq!(
        second.md5_of_message_body(),
        Some(md5_hex(b"second body").as_str()),
        "MD5OfMessageBody is that of this request"
    );
    assert_eq!(
        second.md5_of_message_attributes(),
        Some(md5_of_attributes(&second_attrs).as_str()),
        "MD5OfMessageAttributes is that of this request"
    );

    let got = t
        .client
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_attribute_names("All")
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default();
    let m = only(got, "only the original is delivered");
    assert_eq!(m.message_id(), Some(first_id.as_str()));
    assert_eq!(m.body(), Some("first body"));
    assert_eq!(
        m.md5_of_message_attributes(),
        Some(md5_of_attributes(&first_attrs).as_str())
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::MessageDeduplicationId),
        Some("dedup-1")
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::MessageGroupId),
        Some("g")
    );
    assert_eq!(
        sequence(sys(&m, &MessageSystemAttributeName::SequenceNumber)),
        first_seq
    );
    t.shutdown().await;
}

/// Content-based deduplication uses SHA-256 of the body only: the same body with different
/// attributes is a duplicate; an explicit id overrides the hash (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_based_deduplication_hashes_the_body_only() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "content.fifo", &[]).await;
    let send_with_attr = |value: &'static str| {
        t.client
            .send_message()
            .queue_url(&url)
            .message_body("same body")
            .message_group_id("g")
            .message_attributes("v", string_attr("String", value))
            .send()
    };
    let a = send_with_attr("one").await.expect("first send");
    let b = send_with_attr("two").await.expect("second send");
    assert_eq!(
        a.message_id(),
        b.message_id(),
        "same body, different attributes: a duplicate"
    );
    assert_eq!(a.sequence_number(), b.sequence_number());

    let c = send_fifo(&t, &url, "same body", "g", Some("explicit")).await;
    assert_ne!(
        c.message_id(),
        a.message_id(),
        "an explicit id overrides the content hash"
    );
    let d = send_fifo(&t, &url, "other body", "g", None).await;
    assert_ne!(d.message_id(), a.message_id());

    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["same body", "same body", "other body"]);
    assert_eq!(got[0].message_id(), a.message_id());
    assert_eq!(
        sys(&got[0], &MessageSystemAttributeName::MessageDeduplicationId),
        Some(sha256_hex("same body").as_str()),
        "the content-based id is the SHA-256 hex of the body"
    );
    assert_eq!(
        sys(&got[1], &MessageSystemAttributeName::MessageDeduplicationId),
        Some("explicit")
    );
    assert_eq!(
        sys(&got[2], &MessageSystemAttributeName::MessageDeduplicationId),
        Some(sha256_hex("other body").as_str())
    );
    t.shutdown().await;
}

/// The deduplication window outlives the original's deletion and ends 5 minutes after the
/// first send (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplication_window_survives_delete_and_expires() {
    let t = TestServer::start().await;
    let url = fifo_queue(&t, "window.fifo", &[]).await;
    let original = send_fifo(&t, &url, "v1", "g", Some("d")).await;
    let original_id = original.message_id().expect("MessageId").to_owned();
    let m = only(t.receive(&url, 10).await, "the original");
    delete(&t, &url, &m).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));

    let dup = send_fifo(&t, &url, "v2", "g", Some("d")).await;
    assert_eq!(
        dup.message_id(),
        Some(original_id.as_str()),
        "still a duplicate after the original was deleted"
    );
    assert!(t.receive(&url, 10).await.is_empty());

    t.advance_secs(299);
    let dup = send_fifo(&t, &url, "v3", "g", Some("d")).await;
    assert_eq!(
        dup.message_id(),
        Some(original_id.as_str()),
        "still a duplicate 299 s after the first send"
    );
    assert!(t.receive(&url, 10).await.is_empty());

    t.advance_secs(2);
    let fresh = send_fifo(&t, &url, "v4", "g", Some("d")).await;
    assert_ne!(
        fresh.message_id(),
        Some(original_id.as_str()),
        "accepted as new once the 5-minute window has passed"
    );
    assert!(sequence(fresh.sequence_number()) > sequence(original.sequence_number()));
    let m = only(t.receive(&url, 10).await, "the new message");
    assert_eq!(m.body(), Some("v4"));
    assert_eq!(m.message_id(), fresh.message_id());
    t.shutdown().await;
}

/// PurgeQueue clears the deduplication cache (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_clears_the_deduplication_cache() {
    let t = TestServer::start().await;
    let url = fifo_queue(&t, "purge.fifo", &[]).await;
    let first = send_fifo(&t, &url, "before", "g", Some("d")).await;
    t.client
        .purge_queue()
        .queue_url(&url)
        .send()
        .await
        .expect("PurgeQueue");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    let second = send_fifo(&t, &url, "after", "g", Some("d")).await;
    assert_ne!(
        second.message_id(),
        first.message_id(),
        "the purge forgot the deduplication id"
    );
    let m = only(
        t.receive(&url, 10).await,
        "the message sent after the purge",
    );
    assert_eq!(m.body(), Some("after"));
    t.shutdown().await;
}

/// DeduplicationScope: `queue` deduplicates across groups, `messageGroup` per group (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplication_scope_queue_and_message_group() {
    let t = TestServer::start().await;

    let per_group = fifo_queue(
        &t,
        "per-group.fifo",
        &[
            (QueueAttributeName::DeduplicationScope, "messageGroup"),
            (QueueAttributeName::FifoThroughputLimit, "perMessageGroupId"),
        ],
    )
    .await;
    let a = send_fifo(&t, &per_group, "in g1", "g1", Some("same")).await;
    let b = send_fifo(&t, &per_group, "in g2", "g2", Some("same")).await;
    assert_ne!(a.message_id(), b.message_id());
    let c = send_fifo(&t, &per_group, "again in g1", "g1", Some("same")).await;
    assert_eq!(
        c.message_id(),
        a.message_id(),
        "same group, same id: duplicate"
    );
    let got = t.receive(&per_group, 10).await;
    assert_eq!(bodies(&got), ["in g1", "in g2"]);

    let per_queue = fifo_queue(&t, "per-queue.fifo", &[]).await;
    let a = send_fifo(&t, &per_queue, "in g1", "g1", Some("same")).await;
    let b = send_fifo(&t, &per_queue, "in g2", "g2", Some("same")).await;
    assert_eq!(
        b.message_id(),
        a.message_id(),
        "queue scope deduplicates across groups"
    );
    let got = t.receive(&per_queue, 10).await;
    assert_eq!(bodies(&got), ["in g1"]);
    t.shutdown().await;
}

/// Changing DeduplicationScope after creation changes the reported attribute but not the
/// behaviour (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deduplication_scope_is_fixed_at_creation() {
    let t = TestServer::start().await;

    let was_queue = fifo_queue(&t, "was-queue.fifo", &[]).await;
    t.client
        .set_queue_attributes()
        .queue_url(&was_queue)
        .attributes(QueueAttributeName::DeduplicationScope, "messageGroup")
        .send()
        .await
        .expect("SetQueueAttributes DeduplicationScope=messageGroup");
    assert_eq!(
        t.queue_attr(&was_queue, QueueAttributeName::DeduplicationScope)
            .await,
        "messageGroup"
    );
    let a = send_fifo(&t, &was_queue, "in g1", "g1", Some("same")).await;
    let b = send_fifo(&t, &was_queue, "in g2", "g2", Some("same")).await;
    assert_eq!(
        b.message_id(),
        a.message_id(),
        "created with queue scope: still deduplicates across groups"
    );
    assert_eq!(bodies(&t.receive(&was_queue, 10).await), ["in g1"]);

    let was_group = fifo_queue(
        &t,
        "was-group.fifo",
        &[(QueueAttributeName::DeduplicationScope, "messageGroup")],
    )
    .await;
    t.client
        .set_queue_attributes()
        .queue_url(&was_group)
        .attributes(QueueAttributeName::DeduplicationScope, "queue")
        .send()
        .await
        .expect("SetQueueAttributes DeduplicationScope=queue");
    assert_eq!(
        t.queue_attr(&was_group, QueueAttributeName::DeduplicationScope)
            .await,
        "queue"
    );
    let a = send_fifo(&t, &was_group, "in g1", "g1", Some("same")).await;
    let b = send_fifo(&t, &was_group, "in g2", "g2", Some("same")).await;
    assert_ne!(
        b.message_id(),
        a.message_id(),
        "created with messageGroup scope: still deduplicates per group"
    );
    assert_eq!(bodies(&t.receive(&was_group, 10).await), ["in g1", "in g2"]);
    t.shutdown().await;
}

/// SequenceNumbers: 20 digits, above u64::MAX, strictly increasing in send order, and the same
/// on receive (§4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequence_numbers_are_large_and_increasing() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "seq.fifo", &[]).await;
    let mut sent = Vec::new();
    for (i, group) in ["g1", "g2", "g1", "g3", "g2", "g1"].iter().enumerate() {
        if i == 3 {
            t.advance_secs(1);
        }
        let out = send_fifo(&t, &url, &format!("m{i}"), group, None).await;
        sent.push((
            out.message_id().expect("MessageId").to_owned(),
            sequence(out.sequence_number()),
        ));
    }
    for w in sent.windows(2) {
        assert!(
            w[0].1 < w[1].1,
            "sequence numbers increase in send order: {sent:?}"
        );
    }
    let by_id: HashMap<&str, u128> = sent.iter().map(|(id, n)| (id.as_str(), *n)).collect();
    let got = t.receive(&url, 10).await;
    assert_eq!(got.len(), sent.len());
    for m in &got {
        let id = m.message_id().expect("MessageId");
        assert_eq!(
            Some(&sequence(sys(
                m,
                &MessageSystemAttributeName::SequenceNumber
            ))),
            by_id.get(id),
            "received SequenceNumber of {id} equals the one returned by the send"
        );
    }
    t.shutdown().await;
}

/// One receive returns messages group by group, each group in send order (§6.9, G-27).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_returns_whole_groups_in_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "grouped.fifo", &[]).await;
    for (body, group) in [
        ("a1", "a"),
        ("b1", "b"),
        ("a2", "a"),
        ("b2", "b"),
        ("a3", "a"),
    ] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["a1", "a2", "a3", "b1", "b2"]);
    t.shutdown().await;
}

/// While any message of a group is in flight, the whole group is blocked (including messages
/// not yet received); other groups flow; deleting the in-flight message frees the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_message_blocks_its_group_until_deleted() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "blocking.fifo", &[]).await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let a1 = only(t.receive(&url, 1).await, "a1");
    assert_eq!(a1.body(), Some("a1"));
    let b = t.receive(&url, 10).await;
    assert_eq!(
        bodies(&b),
        ["b1", "b2"],
        "group a is blocked by a1; group b flows"
    );
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "both groups are in flight"
    );

    delete(&t, &url, &a1).await;
    let a2 = only(t.receive(&url, 10).await, "a2 after a1 was deleted");
    assert_eq!(a2.body(), Some("a2"));

    // Deleting only one of group b's two in-flight messages does not free the group.
    delete(&t, &url, &b[0]).await;
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "b2 is still in flight, a2 too"
    );
    delete(&t, &url, &b[1]).await;
    delete(&t, &url, &a2).await;
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// Visibility expiry frees the group and redelivers in the same order (§6.9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn visibility_expiry_redelivers_in_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "expiry.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    for (body, group) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let first = t.receive(&url, 2).await;
    assert_eq!(bodies(&first), ["a1", "a2"]);
    assert_eq!(bodies(&t.receive(&url, 10).await), ["b1"]);

    t.advance_secs(29);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "29 s into a 30 s timeout nothing is receivable"
    );
    t.advance_secs(2);
    let again = t.receive(&url, 10).await;
    assert_eq!(bodies(&again), ["a1", "a2", "a3", "b1"]);
    let counts: Vec<&str> = again.iter().map(receive_count).collect();
    assert_eq!(counts, ["2", "2", "1", "2"]);
    for (before, after) in first.iter().zip(&again) {
        assert_eq!(before.message_id(), after.message_id());
        assert_ne!(before.receipt_handle(), after.receipt_handle());
    }
    t.shutdown().await;
}

/// ChangeMessageVisibility to 0 frees the group at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_visibility_to_zero_frees_the_group() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "release.fifo", &[]).await;
    for body in ["x1", "x2"] {
        send_fifo(&t, &url, body, "x", None).await;
    }
    let x1 = only(receive_vis(&t, &url, 1, 600).await, "x1");
    assert!(t.receive(&url, 10).await.is_empty(), "group x is blocked");
    t.advance_secs(60);
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "still blocked: the receive asked for 600 s"
    );
    t.client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(x1.receipt_handle().expect("ReceiptHandle"))
        .visibility_timeout(0)
        .send()
        .await
        .expect("ChangeMessageVisibility 0");
    let got = t.receive(&url, 10).await;
    assert_eq!(bodies(&got), ["x1", "x2"]);
    assert_eq!(receive_count(&got[0]), "2");
    t.shutdown().await;
}

/// Per-message delays are rejected; DelaySeconds=0 is accepted and the queue delay applies;
/// queue delay changes apply to messages already queued (§5.5, §6.6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delays_on_fifo_queues() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "delay.fifo",
        &[(QueueAttributeName::DelaySeconds, "10")],
    )
    .await;
    let r = t
        .client
        .send_message()
        .queue_url(&url)
        .message_body("delayed")
        .message_group_id("g")
        .delay_seconds(2)
        .send()
        .await;
    expect_error(
        "per-message DelaySeconds on a FIFO queue",
        r,
        400,
        "InvalidParameterValue",
        Some(
            "Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.",
        ),
    );

    t.client
        .send_message()
        .queue_url(&url)
        .message_body("zero")
        .message_group_id("g")
        .delay_seconds(0)
        .send()
        .await
        .expect("DelaySeconds=0 is accepted");
    assert!(
        t.receive(&url, 10).await.is_empty(),
        "the queue delay still applies"
    );
    assert_eq!(t.counts(&url).await, (0, 0, 1));
    t.advance_secs(9);
    assert!(t.receive(&url, 10).await.is_empty());
    t.advance_secs(1);
    let m = only(t.receive(&url, 10).await, "after the queue delay");
    assert_eq!(m.body(), Some("zero"));
    delete(&t, &url, &m).await;

    // A queue delay change applies to messages already queued.
    t.client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::DelaySeconds, "60")
        .send()
        .await
        .expect("DelaySeconds=60");
    send_fifo(&t, &url, "late", "g", None).await;
    assert!(t.receive(&url, 10).await.is_empty());
    t.client
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::DelaySeconds, "0")
        .send()
        .await
        .expect("DelaySeconds=0");
    let m = only(
        t.receive(&url, 10).await,
        "receivable at once after the queue delay was removed",
    );
    assert_eq!(m.body(), Some("late"));
    t.shutdown().await;
}

/// A retry with the same ReceiveRequestAttemptId returns the same messages and receipt
/// handles (§6.7).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_request_attempt_id_retries() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "attempt.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "120")],
    )
    .await;
    for (body, group) in [("a1", "a"), ("b1", "b"), ("a2", "a")] {
        send_fifo(&t, &url, body, group, None).await;
    }
    let receive_attempt = |attempt: &'static str| {
        t.client
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .receive_request_attempt_id(attempt)
            .send()
    };
    let pairs = |msgs: &[Message]| -> Vec<(String, String)> {
        msgs.iter()
            .map(|m| {
                (
                    m.message_id().expect("MessageId").to_owned(),
                    m.receipt_handle().expect("ReceiptHandle").to_owned(),
                )
            })
            .collect()
    };
    let first = receive_attempt("attempt-1")
        .await
        .expect("ReceiveMessage")
        .messages
        .unwrap_or_default();
    assert_eq!(bodies(&first), ["a1", "a2", "b1"]);
    let retry = receive_attempt("attempt-1")
        .await
        .expect("retry")
        .messages
        .unwrap_or_default();
    assert_eq!(
        pairs(&retry),
        pairs(&first),
        "same messages and receipt handles"
    );

    assert!(
        receive_attempt("attempt-2")
            .await
            .expect("another attempt id")
            .messages
            .unwrap_or_default()
            .is_empty(),
        "a new attempt id sees that everything is in flight"
    );
    assert!(t.receive(&url, 10).await.is_empty());

    t.advance_secs(60);
    let later = receive_attempt("attempt-1")
        .await
        .expect("retry a minute later")
        .messages
        .unwrap_or_default();
    assert_eq!(
        pairs(&later),
        pairs(&first),
        "still the same within 5 minutes and the visibility timeout"
    );
    // The returned handles work.
    for m in &later {
        delete(&t, &url, m).await;
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}

/// On FIFO queues a receipt handle whose visibility expired is rejected; extending the
/// visibility before it expires keeps the handle valid (§6.8, §5.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_receipt_handles_are_rejected() {
    let t = TestServer::start().await;
    let url = cbd_queue(
        &t,
        "handles.fifo",
        &[(QueueAttributeName::VisibilityTimeout, "30")],
    )
    .await;
    send_fifo(&t, &url, "m", "g", None).await;
    let m = only(t.receive(&url, 1).await, "first receive");
    let rh = m.receipt_handle().expect("ReceiptHandle").to_owned();
    t.advance_secs(31);
    let expired = format!(
        "Value {rh} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."
    );
    let r = t
        .client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&rh)
        .send()
        .await;
    expect_error(
        "DeleteMessage with an expired handle",
        r,
        400,
        "InvalidParameterValue",
        Some(&expired),
    );
    let r = t
        .client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&rh)
        .visibility_timeout(10)
        .send()
        .await;
    expect_error(
        "ChangeMessageVisibility with an expired handle",
        r,
        400,
        "InvalidParameterValue",
        Some(&expired),
    );

    let again = only(t.receive(&url, 1).await, "the message was not deleted");
    assert_eq!(again.message_id(), m.message_id());
    assert_eq!(receive_count(&again), "2");
    let rh2 = again.receipt_handle().expect("ReceiptHandle").to_owned();
    t.advance_secs(20);
    t.client
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&rh2)
        .visibility_timeout(60)
        .send()
        .await
        .expect("extend the visibility before it expires");
    t.advance_secs(30);
    assert!(
        t.receive(&url, 1).await.is_empty(),
        "50 s after the receive, still in flight thanks to the extension"
    );
    t.client
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&rh2)
        .send()
        .await
        .expect("the extended handle is still valid");
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.advance_secs(120);
    assert!(t.receive(&url, 10).await.is_empty(), "deleted for good");
    t.shutdown().await;
}

/// FIFO batch entries are enqueued in request order, with increasing SequenceNumbers
/// (§6.6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_entries_are_enqueued_in_request_order() {
    let t = TestServer::start().await;
    let url = cbd_queue(&t, "batch.fifo", &[]).await;
    let mut req = t.client.send_message_batch().queue_url(&url);
    for i in 0..10 {
        req = req.entries(entry(&format!("e{i}"), &format!("m{i}"), Some("g"), None));
    }
    let out = req.send().await.expect("SendMessageBatch");
    assert!(out.failed().is_empty(), "{out:?}");
    assert_eq!(out.successful().len(), 10);
    let seq_of: HashMap<&str, u128> = out
        .successful()
        .iter()
        .map(|e| (e.id(), sequence(e.sequence_number())))
        .collect();
    for i in 1..10 {
        let (prev, cur) = (seq_of[&*format!("e{}", i - 1)], seq_of[&*format!("e{i}")]);
        assert!(
            prev < cur,
            "e{i} has a larger SequenceNumber than its predecessor"
        );
    }
    let got = t.receive(&url, 10).await;
    let expected: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies(&got), expected);
    for (i, m) in got.iter().enumerate() {
        assert_eq!(
            sequence(sys(m, &MessageSystemAttributeName::SequenceNumber)),
            seq_of[&*format!("e{i}")]
        );
        delete(&t, &url, m).await;
    }

    // Mixed groups in one batch: each group keeps entry order.
    let out = t
        .client
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("1", "x1", Some("x"), None))
        .entries(entry("2", "y1", Some("y"), None))
        .entries(entry("3", "x2", Some("x"), None))
        .entries(entry("4", "y2", Some("y"), None))
        .send()
        .await
        .expect("SendMessageBatch with two groups");
    assert_eq!(out.successful().len(), 4, "{out:?}");
    assert_eq!(bodies(&t.receive(&url, 10).await), ["x1", "x2", "y1", "y2"]);

    // A duplicate inside one batch is accepted with the first entry's ids and not delivered.
    let dup_url = fifo_queue(&t, "batch-dup.fifo", &[]).await;
    let out = t
        .client
        .send_message_batch()
        .queue_url(&dup_url)
        .entries(entry("first", "one", Some("g"), Some("same")))
        .entries(entry("second", "two", Some("g"), Some("same")))
        .send()
        .await
        .expect("SendMessageBatch with a duplicate id");
    assert!(out.failed().is_empty(), "{out:?}");
    let by_id: HashMap<&str, _> = out.successful().iter().map(|e| (e.id(), e)).collect();
    assert_eq!(by_id.len(), 2, "{out:?}");
    assert_eq!(by_id["second"].message_id(), by_id["first"].message_id());
    assert_eq!(
        by_id["second"].sequence_number(),
        by_id["first"].sequence_number()
    );
    assert_eq!(by_id["second"].md5_of_message_body(), md5_hex(b"two"));
    assert_eq!(bodies(&t.receive(&dup_url, 10).await), ["one"]);
    t.shutdown().await;
}

/// Who holds a group's messages, as seen by the consumers of the concurrency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Received; the delete has not been sent yet, so the server must still see it in flight.
    Received,
    /// The delete has been sent; the server may already have freed the group.
    Deleting,
}

#[derive(Debug, Default)]
struct Tracker {
    /// Per group: the consumer holding it and how far along it is.
    holders: HashMap<String, (usize, Hold)>,
    /// Per group: message indexes in the order they were received.
    received: HashMap<String, Vec<usize>>,
    total: usize,
    violations: Vec<String>,
}

/// 50 groups × 20 messages consumed by 8 concurrent consumers (batch sizes 1 to 10, deleting
/// each batch before receiving again): each group arrives in send order,
/// no group is ever handed to two consumers at once, and every message is delivered exactly
/// once.
///
/// The locking check is race-free: a consumer marks its groups `Received` as soon as a receive
/// returns and moves them to `Deleting` just before it sends the delete. A receive that returns
/// a message of a group some other consumer still holds as `Received` is a violation: that
/// consumer had not even sent its delete, so both messages were in flight at the server at the
/// same time (visibility never expires here: the clock is frozen and the timeout is 10 minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_consumers_keep_group_order_and_locking() {
    const GROUPS: usize = 50;
    const PER_GROUP: usize = 20;
    const TOTAL: usize = GROUPS * PER_GROUP;
    const CONSUMERS: usize = 8;
    const MAX_ITERATIONS: usize = 20_000;

    const RUN: usize = 10;

    let t = TestServer::start().await;
    let url = cbd_queue(&t, "concurrent.fifo", &[]).await;
    // Each group's messages are sent in runs of 10 (g00:00-09, g01:00-09, …, g00:10-19, …), so
    // that a server without group locking would hand the rest of a run to another consumer
    // while the first one still holds the start of it.
    let all: Vec<(usize, usize)> = (0..PER_GROUP / RUN)
        .flat_map(|run| {
            (0..GROUPS).flat_map(move |g| (run * RUN..(run + 1) * RUN).map(move |i| (g, i)))
        })
        .collect();
    for chunk in all.chunks(10) {
        let mut req = t.client.send_message_batch().queue_url(&url);
        for (n, (g, i)) in chunk.iter().enumerate() {
            req = req.entries(entry(
                &n.to_string(),
                &format!("g{g:02}:{i:02}"),
                Some(&format!("g{g:02}")),
                None,
            ));
        }
        let out = req.send().await.expect("SendMessageBatch");
        assert!(out.failed().is_empty(), "{out:?}");
    }
    assert_eq!(t.counts(&url).await, (TOTAL as u64, 0, 0));

    let tracker = Arc::new(Mutex::new(Tracker::default()));
    let mut consumers = Vec::new();
    for me in 0..CONSUMERS {
        // Mixed batch sizes: 1, 4, 7, 10, 3, 6, 9, 2.
        let max = i32::try_from(1 + (me * 3) % 10).expect("fits");
        let client = t.client.clone();
        let url = url.clone();
        let tracker = tracker.clone();
        consumers.push(tokio::spawn(async move {
            for _ in 0..MAX_ITERATIONS {
                if tracker.lock().expect("tracker").total >= TOTAL {
                    return;
                }
                let msgs = client
                    .receive_message()
                    .queue_url(&url)
                    .max_number_of_messages(max)
                    .visibility_timeout(600)
                    .wait_time_seconds(0)
                    .send()
                    .await
                    .expect("ReceiveMessage")
                    .messages
                    .unwrap_or_default();
                if msgs.is_empty() {
                    tokio::task::yield_now().await;
                    continue;
                }
                let mut groups = HashSet::new();
                {
                    let mut tr = tracker.lock().expect("tracker");
                    for m in &msgs {
                        let body = m.body().expect("Body");
                        let (g, i) = body.split_once(':').expect("g:i body");
                        let i: usize = i.parse().expect("index");
                        if let Some((other, Hold::Received)) = tr.holders.get(g).copied()
                            && other != me
                        {
                            tr.violations.push(format!(
                                "consumer {me} received {body} while consumer {other} held an undeleted message of {g}"
                            ));
                        }
                        tr.holders.insert(g.to_owned(), (me, Hold::Received));
                        tr.received.entry(g.to_owned()).or_default().push(i);
                        tr.total += 1;
                        groups.insert(g.to_owned());
                    }
                }
                // "Process" the batch: other consumers run while this one holds its groups
                // as Received, which is when a violation can be seen.
                tokio::task::yield_now().await;
                {
                    let mut tr = tracker.lock().expect("tracker");
                    for g in &groups {
                        tr.holders.insert(g.clone(), (me, Hold::Deleting));
                    }
                }
                let mut req = client.delete_message_batch().queue_url(&url);
                for (n, m) in msgs.iter().enumerate() {
                    req = req.entries(
                        DeleteMessageBatchRequestEntry::builder()
                            .id(n.to_string())
                            .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
                            .build()
                            .expect("delete entry builds"),
                    );
                }
                let out = req.send().await.expect("DeleteMessageBatch");
                assert!(out.failed().is_empty(), "{out:?}");
                let mut tr = tracker.lock().expect("tracker");
                for g in &groups {
                    if tr.holders.get(g).is_some_and(|(c, _)| *c == me) {
                        tr.holders.remove(g);
                    }
                }
            }
            panic!("consumer {me} gave up after {MAX_ITERATIONS} iterations");
        }));
    }
    tokio::time::timeout(HANG_GUARD, async {
        for c in consumers {
            c.await.expect("consumer task");
        }
    })
    .await
    .expect("consumers finish");

    // Every consumer has finished: take the record out of the mutex.
    let tr = std::mem::take(&mut *tracker.lock().expect("tracker"));
    assert!(
        tr.violations.is_empty(),
        "group locking violated: {:?}",
        tr.violations
    );
    assert_eq!(tr.total, TOTAL, "every message delivered exactly once");
    assert_eq!(tr.received.len(), GROUPS);
    let expected: Vec<usize> = (0..PER_GROUP).collect();
    for (g, got) in &tr.received {
        assert_eq!(
            got, &expected,
            "group {g}: send order, each message exactly once"
        );
    }
    assert_eq!(t.counts(&url).await, (0, 0, 0));
    t.shutdown().await;
}
