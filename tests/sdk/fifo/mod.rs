//! FIFO queues through aws-sdk-sqs (GitHub issue #4), and the helpers their tests share:
//! creation rules and required ids (`creation`), deduplication (`dedup`), sequence numbers,
//! group ordering and locking, receive-attempt retries and receipt-handle expiry (`ordering`),
//! the order groups are served in and what makes a group available (`scheduling`), and many
//! concurrent consumers (`concurrency`).
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock); nothing sleeps for seconds.
//! Expected texts come from docs/protocol.md (§5.5, §6.6–§6.9, §4).

mod concurrency;
mod creation;
mod dedup;
mod ordering;
mod scheduling;

use aws_sdk_sqs::operation::send_message::SendMessageOutput;
use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchRequestEntry};
use sha2::{Digest, Sha256};

use crate::harness::TestServer;

/// Creates a FIFO queue (`name` must end in `.fifo`) with extra attributes.
pub async fn fifo_queue(
    t: &TestServer,
    name: &str,
    extra: &[(QueueAttributeName, &str)],
) -> String {
    let mut attrs = vec![(QueueAttributeName::FifoQueue, "true")];
    attrs.extend(extra.iter().cloned());
    t.create_queue(name, &attrs).await
}

/// A FIFO queue with content-based deduplication, so bodies double as deduplication ids.
pub async fn cbd_queue(t: &TestServer, name: &str, extra: &[(QueueAttributeName, &str)]) -> String {
    let mut attrs = vec![(QueueAttributeName::ContentBasedDeduplication, "true")];
    attrs.extend(extra.iter().cloned());
    fifo_queue(t, name, &attrs).await
}

/// Sends one FIFO message; panics on failure.
pub async fn send_fifo(
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
pub fn entry(
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

pub fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Parses a SequenceNumber: 20 decimal digits, above u64::MAX (§4, G-23).
pub fn sequence(s: Option<&str>) -> u128 {
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
