//! Engine layer, ops: SendMessageBatch, DeleteMessageBatch and ChangeMessageVisibilityBatch.
//!
//! Whole-request failures are told apart from per-entry failures as AWS does
//! (docs/protocol.md §6.6, G-19):
//! the queue, the entry count, the ids and the total size fail the whole request; everything
//! about one message fails only that entry.

use std::collections::HashSet;

use super::message::change_visibility;
use super::prepare::Prepared;
use crate::command::validate::short_name;
use crate::command::{
    BatchResultErrorEntry, ChangeMessageVisibilityBatch, ChangeMessageVisibilityBatchResult,
    DeleteMessageBatch, DeleteMessageBatchResult, RequestContext, Scope, SendMessageBatch,
    SendMessageBatchResult, SendMessageBatchResultEntry,
};
use crate::engine::handle::Engine;
use crate::engine::model::fifo;
use crate::engine::model::queue::Queue;
use crate::engine::store::schema::Op;
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Most entries in one batch.
const MAX_ENTRIES: usize = 10;
/// Largest total payload of one SendMessageBatch, whatever the queue's MaximumMessageSize.
const MAX_BATCH_BYTES: usize = 1_048_576;

/// Checks the entry list of a batch: not empty, at most 10, valid and distinct ids (§5.5).
fn check_entries<'a>(
    kind: &str,
    ids: impl ExactSizeIterator<Item = &'a str> + Clone,
) -> SqsResult<()> {
    if ids.len() == 0 {
        return Err(SqsError::new(
            ErrorCode::EmptyBatchRequest,
            format!("There should be at least one {kind}RequestEntry in the request."),
        ));
    }
    if ids.len() > MAX_ENTRIES {
        return Err(SqsError::new(
            ErrorCode::TooManyEntriesInBatchRequest,
            format!(
                "Maximum number of entries per request are {MAX_ENTRIES}. You have sent {}.",
                ids.len()
            ),
        ));
    }
    if ids.clone().any(|id| !short_name(id)) {
        return Err(SqsError::new(
            ErrorCode::InvalidBatchEntryId,
            "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
        ));
    }
    let mut seen = HashSet::new();
    if let Some(dup) = ids.clone().find(|id| !seen.insert(*id)) {
        return Err(SqsError::new(
            ErrorCode::BatchEntryIdsNotDistinct,
            format!("Id {dup} repeated."),
        ));
    }
    Ok(())
}

fn entry_error(id: &str, e: &SqsError) -> BatchResultErrorEntry {
    BatchResultErrorEntry {
        id: id.to_owned(),
        code: e.code,
        message: e.message.to_string(),
    }
}

impl Engine {
    pub(super) async fn send_message_batch(
        &self,
        ctx: &RequestContext,
        c: SendMessageBatch,
    ) -> SqsResult<SendMessageBatchResult> {
        let now = self.send_now()?;
        // Checks and checksums that need no queue state run before the lock (`prepare.rs`).
        let ids: Vec<String> = c.entries.iter().map(|e| e.id.clone()).collect();
        let fifo_ids: Vec<(bool, bool)> = c
            .entries
            .iter()
            .map(|e| {
                (
                    e.message.message_group_id.is_some(),
                    e.message.message_deduplication_id.is_some(),
                )
            })
            .collect();
        let prepared: Vec<Prepared> = c
            .entries
            .into_iter()
            .map(|e| Prepared::new(e.message))
            .collect();
        let (result, commit) = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, &ctx.scope, &c.queue_url)?;
            check_entries("SendMessageBatch", ids.iter().map(String::as_str))?;
            let total: usize = prepared.iter().map(|p| p.size).sum();
            if total > MAX_BATCH_BYTES {
                return Err(SqsError::new(
                    ErrorCode::BatchRequestTooLong,
                    format!(
                        "Batch requests cannot be longer than {MAX_BATCH_BYTES} bytes. You have sent {total} bytes."
                    ),
                ));
            }
            if q.is_fifo() {
                // Missing FIFO ids fail the whole batch, with InvalidParameterValue (§5.5).
                if fifo_ids.iter().any(|&(group, _)| !group) {
                    return Err(SqsError::invalid_value(
                        "The request must contain the parameter MessageGroupId.",
                    ));
                }
                if !q.content_based() && fifo_ids.iter().any(|&(_, dedup)| !dedup) {
                    return Err(SqsError::invalid_value(fifo::NO_DEDUP_ID));
                }
            }
            let mut result = SendMessageBatchResult::default();
            let mut ops = Vec::with_capacity(prepared.len() * 2);
            let before = q.watch(self.max_inflight());
            for (entry_id, p) in ids.into_iter().zip(prepared) {
                match self.enqueue(q, ctx, p, now, true, &mut ops) {
                    Ok(r) => result.successful.push(SendMessageBatchResultEntry {
                        id: entry_id,
                        message_id: r.message_id,
                        md5_of_message_body: r.md5_of_message_body,
                        md5_of_message_attributes: r.md5_of_message_attributes,
                        md5_of_message_system_attributes: r.md5_of_message_system_attributes,
                        sequence_number: r.sequence_number,
                    }),
                    Err(err) => result.failed.push(entry_error(&entry_id, &err)),
                }
            }
            q.wake_after(before, self.max_inflight());
            (result, self.submit_puts(&mut reg, ops))
        };
        self.commit(commit).await?;
        Ok(result)
    }

    pub(super) async fn delete_message_batch(
        &self,
        scope: &Scope,
        c: &DeleteMessageBatch,
    ) -> SqsResult<DeleteMessageBatchResult> {
        let entries: Vec<(&str, &str)> = c
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.receipt_handle.as_str()))
            .collect();
        let (successful, failed) = self
            .per_handle(
                "DeleteMessageBatch",
                scope,
                &c.queue_url,
                &entries,
                |q, i, now, ops| self.delete_one(q, entries[i].1, now, ops),
            )
            .await?;
        Ok(DeleteMessageBatchResult { successful, failed })
    }

    pub(super) async fn change_message_visibility_batch(
        &self,
        scope: &Scope,
        c: &ChangeMessageVisibilityBatch,
    ) -> SqsResult<ChangeMessageVisibilityBatchResult> {
        let entries: Vec<(&str, &str)> = c
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.receipt_handle.as_str()))
            .collect();
        let (successful, failed) = self
            .per_handle(
                "ChangeMessageVisibilityBatch",
                scope,
                &c.queue_url,
                &entries,
                |q, i, now, ops| {
                    // [E] An entry without VisibilityTimeout is treated as 0.
                    let timeout = c.entries[i].visibility_timeout.unwrap_or(0);
                    ops.push(change_visibility(q, entries[i].1, timeout, now)?);
                    Ok(())
                },
            )
            .await?;
        Ok(ChangeMessageVisibilityBatchResult { successful, failed })
    }

    /// Runs `apply` for each (id, receipt handle) entry of a delete or visibility batch under
    /// one lock and one commit, splitting the entries into successful ids and failures.
    async fn per_handle(
        &self,
        kind: &str,
        scope: &Scope,
        queue_url: &str,
        entries: &[(&str, &str)],
        mut apply: impl FnMut(&mut Queue, usize, u64, &mut Vec<Op>) -> SqsResult<()>,
    ) -> SqsResult<(Vec<String>, Vec<BatchResultErrorEntry>)> {
        let now = self.now();
        let (result, commit) = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, queue_url)?;
            check_entries(kind, entries.iter().map(|(id, _)| *id))?;
            let (mut successful, mut failed) = (Vec::new(), Vec::new());
            let mut ops = Vec::new();
            let before = q.watch(self.max_inflight());
            for (i, (id, _)) in entries.iter().enumerate() {
                match apply(q, i, now, &mut ops) {
                    Ok(()) => successful.push((*id).to_owned()),
                    Err(err) => failed.push(entry_error(id, &err)),
                }
            }
            q.wake_after(before, self.max_inflight());
            ((successful, failed), self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_list_checks_in_order() {
        let e = |ids: &[&str]| check_entries("SendMessageBatch", ids.iter().copied()).unwrap_err();
        assert_eq!(
            e(&[]).message,
            "There should be at least one SendMessageBatchRequestEntry in the request."
        );
        let many: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            e(&many).message,
            "Maximum number of entries per request are 10. You have sent 20."
        );
        assert_eq!(e(&["a", "b.c"]).code, ErrorCode::InvalidBatchEntryId);
        assert_eq!(e(&[""]).code, ErrorCode::InvalidBatchEntryId);
        assert_eq!(
            e(&["id_1", "id_2", "id_2", "id_1"]).message,
            "Id id_2 repeated."
        );
        assert!(check_entries("X", ["a", "b"].into_iter()).is_ok());
    }
}
