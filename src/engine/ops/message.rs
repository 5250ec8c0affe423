//! Engine layer, ops: single-message actions (send, delete, change visibility) and the rendering of
//! received messages.
//!
//! Rules from docs/protocol.md §6.3–§6.8. ReceiveMessage and long polling live in `poll.rs`.
//! Each change wakes parked long polls only when it may have made a message receivable
//! ([`Queue::wake_after`]).

use super::prepare::Prepared;
use crate::command::checksum::{hex, md5_of_attributes};
use crate::command::validate;
use crate::command::{
    ChangeMessageVisibility, DeleteMessage, Message, MessageAttributes, ReceiveMessage,
    RequestContext, Scope, SendMessage, SendMessageResult,
};
use crate::engine::handle::Engine;
use crate::engine::model::fifo;
use crate::engine::model::index::msg::Phase;
use crate::engine::model::queue::Queue;
use crate::engine::model::receipt::{Receipt, fingerprint};
use crate::engine::store::record::{self, DedupRecord, MessageExtra, MessageRecord, StateRecord};
use crate::engine::store::schema::Op;
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Longest total time a message may stay invisible after a receive (§6.8).
pub(super) const MAX_VISIBILITY_S: i64 = 43_200;

/// The system attribute names a receive can select (§6.5).
const SYSTEM_ATTRIBUTES: &[&str] = &[
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
];

impl Engine {
    pub(super) async fn send_message(
        &self,
        ctx: &RequestContext,
        c: SendMessage,
    ) -> SqsResult<SendMessageResult> {
        let now = self.send_now()?;
        // Checks and checksums that need no queue state run before the lock (`prepare.rs`).
        let SendMessage { queue_url, message } = c;
        let p = Prepared::new(message);
        let (result, commit) = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, &ctx.scope, &queue_url)?;
            let mut ops = Vec::with_capacity(2);
            let before = q.watch(self.max_inflight());
            let result = self.enqueue(q, ctx, p, now, false, &mut ops)?;
            q.wake_after(before, self.max_inflight());
            (result, self.submit_puts(&mut reg, ops))
        };
        self.commit(commit).await?;
        Ok(result)
    }

    /// Validates one prepared message against its queue and adds it, pushing the ops that
    /// persist it. `batch` selects the per-entry wording of the size error (§5.5).
    pub(super) fn enqueue(
        &self,
        q: &mut Queue,
        ctx: &RequestContext,
        p: Prepared,
        now: u64,
        batch: bool,
        ops: &mut Vec<Op>,
    ) -> SqsResult<SendMessageResult> {
        if q.is_fifo() {
            fifo::check_send(q.content_based(), &p.msg)?;
        }
        check_message(q, &p, batch)?;
        let md5_body = p.md5_of_body;
        let c = p.msg;
        let mut result = SendMessageResult {
            md5_of_message_body: hex(&md5_body),
            md5_of_message_attributes: p.md5_of_attributes,
            md5_of_message_system_attributes: p.md5_of_system_attributes,
            message_id: String::new(),
            sequence_number: None,
        };
        let sent_ms = q.send_time(now);
        let mut dedup_id = None;
        if q.is_fifo() {
            let queue_id = q.id();
            q.fifo_state().prune(queue_id, now, ops);
            let group = c.message_group_id.as_deref().unwrap_or_default();
            let id = c
                .message_deduplication_id
                .clone()
                .unwrap_or_else(|| fifo::content_dedup_id(&c.message_body));
            let key = q.dedup_key(group, &id);
            if let Some(orig) = q.fifo_state().duplicate_of(&key, now) {
                // Accepted but not enqueued; the original's id and number come back (§6.9).
                result.message_id.clone_from(&orig.message_id);
                result.sequence_number = Some(orig.sequence_number.to_string());
                return Ok(result);
            }
            let n = q.fifo_state().next_sequence(sent_ms);
            result.message_id = self.inner.ids.uuid();
            result.sequence_number = Some(n.to_string());
            let rec = DedupRecord {
                expires_ms: now + fifo::DEDUP_WINDOW_MS,
                message_id: result.message_id.clone(),
                sequence_number: n,
            };
            q.fifo_state().remember(queue_id, key, rec, ops);
            dedup_id = Some(id);
        } else {
            result.message_id = self.inner.ids.uuid();
        }
        // FIFO queues accept only DelaySeconds=0 per message; the queue delay applies (§6.6).
        let delay_s = match c.delay_seconds {
            Some(d) if !q.is_fifo() => d.unsigned_abs(),
            _ => u64::from(q.attributes().delay_seconds),
        };
        let trace = c
            .message_system_attributes
            .get("AWSTraceHeader")
            .and_then(|v| v.string_value.clone())
            .or_else(|| ctx.trace_header.clone());
        let mut rec = MessageRecord {
            id: parse_id(&result.message_id),
            body: c.message_body.into_boxed_str(),
            sent_ms,
            delay_s: u32::try_from(delay_s).unwrap_or(u32::MAX),
            md5_of_body: md5_body,
            extra: Some(Box::new(MessageExtra {
                attributes: record::store_attributes(c.message_attributes),
                trace_header: trace,
                group_id: c.message_group_id,
                dedup_id,
                sequence_number: result
                    .sequence_number
                    .as_deref()
                    .and_then(|n| n.parse().ok()),
                dead_letter_source_arn: None,
            })),
        };
        rec.compact();
        self.inner.metrics.sent.inc();
        q.traffic_mut().sent += 1;
        let state = StateRecord::initial(&rec);
        q.append(rec, state, now, ops);
        Ok(result)
    }

    pub(super) async fn delete_message(&self, scope: &Scope, c: &DeleteMessage) -> SqsResult<()> {
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let mut ops = Vec::with_capacity(1);
            let before = q.watch(self.max_inflight());
            self.delete_one(q, &c.receipt_handle, self.now(), &mut ops)?;
            // A delete that frees a FIFO group, or room under the in-flight limit, wakes polls.
            q.wake_after(before, self.max_inflight());
            self.inner.store.submit(ops)
        };
        self.commit(commit).await
    }

    /// The in-flight limit per queue (§6.8); `None` when lifted.
    pub(super) fn max_inflight(&self) -> Option<usize> {
        self.inner.cfg.max_inflight
    }

    /// Deletes the message a receipt handle points at. Standard queues accept stale handles
    /// and repeated deletes; FIFO queues refuse a handle whose visibility has run out, even
    /// when nobody has received the message since (§6.8).
    pub(super) fn delete_one(
        &self,
        q: &mut Queue,
        handle: &str,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> SqsResult<()> {
        let r = decode_handle(handle, q.id())?;
        q.promote(now);
        check_fifo_handle(q, handle, r)?;
        if handle_target(q, r).is_some() && q.delete(r.seq, ops).is_some() {
            self.inner.metrics.deleted.inc();
            q.traffic_mut().deleted += 1;
        }
        Ok(())
    }

    pub(super) async fn change_message_visibility(
        &self,
        scope: &Scope,
        c: &ChangeMessageVisibility,
    ) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let before = q.watch(self.max_inflight());
            let op = change_visibility(q, &c.receipt_handle, c.visibility_timeout, now)?;
            q.wake_after(before, self.max_inflight());
            self.inner.store.submit(vec![op])
        };
        self.commit(commit).await
    }
}

/// Validates a send against the queue's limits (§6.3, §6.4, §6.6), reporting the checks made
/// before the lock at their place in the order.
fn check_message(q: &Queue, p: &Prepared, batch: bool) -> SqsResult<()> {
    let c = &p.msg;
    p.body_check.clone()?;
    if let Some(d) = c.delay_seconds
        && !q.is_fifo()
    {
        validate::delay_seconds(d)?;
    }
    p.attribute_check.clone()?;
    if let Some(g) = &c.message_group_id {
        validate::fifo_param(g, "MessageGroupId")?;
    }
    if let Some(d) = c.message_deduplication_id.as_ref().filter(|_| !q.is_fifo()) {
        // [E] wording.
        return Err(SqsError::invalid_param(
            d,
            "MessageDeduplicationId",
            "The request includes a parameter that is not valid for this queue type.",
        ));
    }
    let size = p.size;
    let max_size = q.attributes().maximum_message_size;
    if size as u64 > u64::from(max_size) {
        let verb = if batch {
            "cannot be validated"
        } else {
            "are invalid"
        };
        return Err(SqsError::invalid_value(format!(
            "One or more parameters {verb}. Reason: Message must be shorter than {max_size} bytes."
        )));
    }
    Ok(())
}

/// The message a handle points at, if it still exists: same sequence number *and* the same
/// message id fingerprint, so a reused sequence number never matches an old handle.
fn handle_target(q: &Queue, r: Receipt) -> Option<u64> {
    q.messages()
        .get(r.seq)
        .filter(|m| m.fp() == r.message)
        .map(|_| r.seq)
}

/// On FIFO queues a handle is good only while its receive's visibility lasts (§6.8).
fn check_fifo_handle(q: &Queue, handle: &str, r: Receipt) -> SqsResult<()> {
    if !q.is_fifo() {
        return Ok(());
    }
    match handle_target(q, r).and_then(|seq| q.messages().get(seq)) {
        Some(m) if m.phase() != Phase::InFlight || m.state().nonce != r.nonce => Err(
            SqsError::invalid_param(handle, "ReceiptHandle", "The receipt handle has expired."),
        ),
        _ => Ok(()),
    }
}

/// Decodes a receipt handle for queue `queue_id`, with AWS's two errors (§5.5).
pub(super) fn decode_handle(handle: &str, queue_id: u64) -> SqsResult<Receipt> {
    let r = Receipt::decode(handle).ok_or_else(|| {
        SqsError::new(
            ErrorCode::ReceiptHandleIsInvalid,
            format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
        )
    })?;
    if r.queue_id != queue_id {
        return Err(SqsError::new(
            ErrorCode::ReceiptHandleIsInvalid,
            format!("The receipt handle \"{handle}\" is not valid for this queue."),
        ));
    }
    Ok(r)
}

/// A generated message id as stored. Ids that are not UUIDs (never produced by the id
/// generators) are hashed into one so that nothing panics.
pub(super) fn parse_id(id: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(id)
        .unwrap_or_else(|_| uuid::Uuid::from_u64_pair(fingerprint(id.as_bytes()), 0))
}

/// Applies a visibility change to one message and returns the op that persists it.
pub(super) fn change_visibility(
    q: &mut Queue,
    handle: &str,
    timeout: i64,
    now: u64,
) -> SqsResult<Op> {
    let r = decode_handle(handle, q.id())?;
    if !(0..=MAX_VISIBILITY_S).contains(&timeout) {
        // [E] wording.
        return Err(SqsError::invalid_param(
            &timeout.to_string(),
            "VisibilityTimeout",
            "Must be between 0 and 43200, if provided.",
        ));
    }
    let not_available = || {
        SqsError::invalid_param(
            handle,
            "ReceiptHandle",
            "Message does not exist or is not available for visibility timeout change.",
        )
    };
    q.promote(now);
    let m = handle_target(q, r)
        .and_then(|seq| q.messages().get(seq))
        .ok_or_else(not_available)?;
    check_fifo_handle(q, handle, r)?;
    let Some(received) = m.state().last_receive_ms else {
        return Err(not_available());
    };
    if m.phase() == Phase::Delayed {
        return Err(not_available());
    }
    let timeout_ms = timeout.unsigned_abs() * 1000;
    let cap_ms = MAX_VISIBILITY_S.unsigned_abs() * 1000;
    if now.saturating_sub(received) + timeout_ms > cap_ms {
        return Err(SqsError::invalid_param(
            &timeout.to_string(),
            "VisibilityTimeout",
            "Total VisibilityTimeout for the message is beyond the limit [43200 seconds].",
        ));
    }
    q.change_visibility(r.seq, now + timeout_ms, now)
        .ok_or_else(not_available)
}

/// Builds the returned message: system attributes and user attributes filtered as requested,
/// with the attribute MD5 over exactly what is returned (G-6).
pub(super) fn render(
    rec: &MessageRecord,
    state: &StateRecord,
    handle: String,
    c: &ReceiveMessage,
    sender_id: &str,
) -> Message {
    let names = c
        .attribute_names
        .iter()
        .chain(&c.message_system_attribute_names);
    let all = names.clone().any(|n| n == "All");
    let wanted = |n: &str| all || names.clone().any(|w| w == n);
    let x = rec.extra();
    let mut attributes = Vec::new();
    for name in SYSTEM_ATTRIBUTES {
        if !wanted(name) {
            continue;
        }
        let value = match *name {
            "SenderId" => Some(sender_id.to_owned()),
            "SentTimestamp" => Some(rec.sent_ms.to_string()),
            "ApproximateReceiveCount" => Some(state.receive_count.to_string()),
            "ApproximateFirstReceiveTimestamp" => state.first_receive_ms.map(|t| t.to_string()),
            "SequenceNumber" => x.sequence_number.map(|s| s.to_string()),
            "MessageDeduplicationId" => x.dedup_id.clone(),
            "MessageGroupId" => x.group_id.clone(),
            "AWSTraceHeader" => x.trace_header.clone(),
            "DeadLetterQueueSourceArn" => x.dead_letter_source_arn.clone(),
            _ => None,
        };
        if let Some(v) = value {
            attributes.push(((*name).to_owned(), v));
        }
    }
    let message_attributes: MessageAttributes = x
        .attributes
        .iter()
        .filter(|(n, _)| attribute_selected(n, &c.message_attribute_names))
        .map(|(n, v)| (n.clone(), v.into()))
        .collect();
    Message {
        message_id: rec.message_id(),
        receipt_handle: handle,
        md5_of_body: hex(&rec.md5_of_body),
        body: rec.body.to_string(),
        attributes,
        md5_of_message_attributes: md5_of_attributes(message_attributes.iter()),
        message_attributes,
    }
}

/// Whether a user attribute is selected by MessageAttributeNames: exact names, `All`, `.*`,
/// `*`, or `prefix.*` (§6.7).
fn attribute_selected(name: &str, selectors: &[String]) -> bool {
    selectors.iter().any(|s| match s.as_str() {
        "All" | ".*" | "*" => true,
        s => match s.strip_suffix(".*") {
            Some(prefix) => name.starts_with(prefix),
            None => s == name,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::{attribute_selected, parse_id};

    #[test]
    fn message_ids() {
        let id = "4c0e4e1e-0b6f-4b7e-9c43-6f0c7b8c1a2d";
        assert_eq!(parse_id(id).hyphenated().to_string(), id);
        assert_ne!(parse_id("not-a-uuid"), parse_id("other"));
    }

    #[test]
    fn attribute_selectors() {
        let sel = |s: &[&str]| s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert!(attribute_selected("Hello", &sel(&["All"])));
        assert!(attribute_selected("Hello", &sel(&[".*"])));
        assert!(attribute_selected("Hello", &sel(&["Hel.*"])));
        assert!(attribute_selected("Help.Me", &sel(&["Hel.*"])));
        assert!(!attribute_selected("General", &sel(&["Hel.*"])));
        assert!(!attribute_selected("Help.Me", &sel(&["Help"])));
        assert!(!attribute_selected("Hello", &sel(&[])));
        assert!(!attribute_selected("Hello", &sel(&["AWS.", "..foo"])));
    }
}
