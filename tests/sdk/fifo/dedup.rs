//! FIFO deduplication: explicit and content-based ids, the 5-minute window, PurgeQueue, and
//! DeduplicationScope.

use std::collections::HashMap;

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};

use super::{cbd_queue, fifo_queue, send_fifo, sequence, sha256_hex};
use crate::harness::{
    TestServer, bodies, delete, md5_hex, md5_of_attributes, only, set_attr, string_attr, sys,
};

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
    set_attr(
        &t,
        &was_queue,
        QueueAttributeName::DeduplicationScope,
        "messageGroup",
    )
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
    set_attr(
        &t,
        &was_group,
        QueueAttributeName::DeduplicationScope,
        "queue",
    )
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
