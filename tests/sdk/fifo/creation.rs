//! FIFO creation rules and defaults, required MessageGroupId and deduplication ids, and delays.

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};

use super::{cbd_queue, entry, fifo_queue, send_fifo};
use crate::harness::{
    TestServer, all_attributes, bodies, delete, expect_error, only, set_attr, sys,
};

/// docs/protocol.md §5.5: FIFO send without MessageGroupId.
const NO_GROUP: &str = "The request must contain the parameter MessageGroupId.";
/// docs/protocol.md §5.5: FIFO send without a deduplication id on a queue without content-based
/// deduplication.
const NO_DEDUP: &str = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

/// Creation rules (§6.1, §6.2, §5.5, G-28) and the FIFO defaults returned by
/// GetQueueAttributes All; the queue type cannot be changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_rules_and_default_attributes() {
    let t = TestServer::start().await;
    let r = t
        .try_create_queue("no-suffix", &[(QueueAttributeName::FifoQueue, "true")])
        .await;
    expect_error(
        "FifoQueue=true on a name without .fifo",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t.try_create_queue("suffix-only.fifo", &[]).await;
    expect_error(
        "a .fifo name without FifoQueue=true",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t
        .try_create_queue("standard", &[(QueueAttributeName::FifoQueue, "false")])
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

    let r = set_attr(&t, &url, QueueAttributeName::FifoQueue, "false").await;
    expect_error(
        "SetQueueAttributes FifoQueue=false on a FIFO queue",
        r,
        400,
        "InvalidAttributeValue",
        Some(
            "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
        ),
    );
    set_attr(&t, &url, QueueAttributeName::FifoQueue, "true")
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
    set_attr(&t, &url, QueueAttributeName::DelaySeconds, "60")
        .await
        .expect("DelaySeconds=60");
    send_fifo(&t, &url, "late", "g", None).await;
    assert!(t.receive(&url, 10).await.is_empty());
    set_attr(&t, &url, QueueAttributeName::DelaySeconds, "0")
        .await
        .expect("DelaySeconds=0");
    let m = only(
        t.receive(&url, 10).await,
        "receivable at once after the queue delay was removed",
    );
    assert_eq!(m.body(), Some("late"));
    t.shutdown().await;
}
