//! Engine layer, ops: message move tasks (StartMessageMoveTask, CancelMessageMoveTask,
//! ListMessageMoveTasks) and the background mover (docs/protocol.md §6.11).
//!
//! A task moves the messages of a dead-letter queue back to their sources, or to a named
//! destination, at most MaxNumberOfMessagesPerSecond per second of the injected clock. Tasks
//! are persisted, so a running task continues after a restart.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::command::{
    CancelMessageMoveTask, CancelMessageMoveTaskResult, ListMessageMoveTasks,
    ListMessageMoveTasksResult, ListMessageMoveTasksResultEntry, StartMessageMoveTask,
    StartMessageMoveTaskResult,
};
use crate::engine::handle::{Access, Engine};
use crate::engine::model::queue::Queue;
use crate::engine::model::registry::Registry;
use crate::engine::model::task::{Task, TaskStatus};
use crate::engine::store::record::StateRecord;
use crate::engine::store::schema::Op;
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Messages moved per step when no rate is set.
const UNLIMITED_STEP: u64 = 100;

/// Why a task fails when a queue it needs is gone.
const NON_EXISTENT_QUEUE: &str = "AWS.SimpleQueueService.NonExistentQueue";

fn not_found(param: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ResourceNotFoundException,
        format!("The resource that you specified for the {param} parameter doesn't exist."),
    )
}

impl Engine {
    /// Where a task sends message `seq` of its source: the task's destination, or the queue
    /// the message was dead-lettered from (read from its record, in memory or on disk).
    /// `None` for a message with neither (it stays).
    fn destination(&self, task: &Task, q: &Queue, seq: u64) -> Option<String> {
        task.destination_arn.clone().or_else(|| {
            self.record(q, seq)
                .and_then(|r| r.extra().dead_letter_source_arn.clone())
        })
    }

    pub(super) async fn start_message_move_task(
        &self,
        c: &StartMessageMoveTask,
    ) -> SqsResult<StartMessageMoveTaskResult> {
        if let Some(r) = c.max_number_of_messages_per_second
            && !(1..=500).contains(&r)
        {
            // [E] wording.
            return Err(SqsError::invalid_param(
                &r.to_string(),
                "MaxNumberOfMessagesPerSecond",
                "Must be between 1 and 500, if provided.",
            ));
        }
        let now = self.now();
        let (task, commit) = {
            let mut reg = self.lock();
            let source = self
                .queue_by_arn(&reg, &c.source_arn)
                .and_then(|id| reg.get(id))
                .ok_or_else(|| not_found("SourceArn"))?;
            let to_move = source.messages().len() as u64;
            if reg.dead_letter_sources(&source.arn()).is_empty() {
                return Err(SqsError::invalid_value(
                    "Source queue must be configured as a Dead Letter Queue.",
                ));
            }
            // A destination in another account or region is, from the source's region, not there
            // [E: AWS's answer to a cross-region destination is not recorded].
            let source_scope = source.scope().clone();
            if let Some(d) = &c.destination_arn {
                let dest = self
                    .queue_by_arn(&reg, d)
                    .and_then(|id| reg.get(id))
                    .filter(|q| *q.scope() == source_scope)
                    .ok_or_else(|| not_found("DestinationArn"))?;
                // Messages of a standard queue carry no group id, so a FIFO queue could never
                // hand them out [E: AWS's text for this case is not recorded].
                if dest.is_fifo() && !source.is_fifo() {
                    return Err(SqsError::invalid_param(
                        d,
                        "DestinationArn",
                        "A standard queue's messages cannot be moved to a FIFO queue.",
                    ));
                }
            }
            if reg
                .tasks()
                .iter()
                .any(|t| t.source_arn == c.source_arn && t.running())
            {
                return Err(SqsError::invalid_value(
                    "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
                ));
            }
            let id =
                crate::engine::model::task::new_task_id(now, reg.tasks(), &self.inner.ids.uuid());
            let handle =
                STANDARD.encode(json!({ "taskId": id, "sourceArn": c.source_arn }).to_string());
            let task = Task {
                id,
                handle,
                source_arn: c.source_arn.clone(),
                destination_arn: c.destination_arn.clone(),
                rate: c.max_number_of_messages_per_second.map(i64::unsigned_abs),
                status: TaskStatus::Running,
                moved: 0,
                to_move,
                failure_reason: None,
                started_ms: now,
            };
            let mut ops = vec![task.put_op()];
            reg.tasks_mut().push(task.clone());
            crate::engine::model::task::forget_tasks(
                reg.tasks_mut(),
                &c.source_arn,
                crate::engine::model::task::KEPT_PER_SOURCE,
                &mut ops,
            );
            (task, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        self.spawn_mover(task.id.clone());
        Ok(StartMessageMoveTaskResult {
            task_handle: task.handle,
        })
    }

    pub(super) async fn cancel_message_move_task(
        &self,
        c: &CancelMessageMoveTask,
    ) -> SqsResult<CancelMessageMoveTaskResult> {
        let bad = || SqsError::invalid_value("Value for parameter TaskHandle is invalid.");
        let decoded: serde_json::Value = STANDARD
            .decode(&c.task_handle)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(bad)?;
        let task_id = decoded
            .get("taskId")
            .and_then(|v| v.as_str())
            .ok_or_else(bad)?;
        let source_arn = decoded
            .get("sourceArn")
            .and_then(|v| v.as_str())
            .ok_or_else(bad)?;
        let (moved, commit) = {
            let mut reg = self.lock();
            if self.queue_by_arn(&reg, source_arn).is_none() {
                return Err(not_found("SourceArn"));
            }
            let task = reg
                .tasks_mut()
                .iter_mut()
                .find(|t| t.id == task_id && t.running())
                .ok_or_else(|| {
                    SqsError::new(ErrorCode::ResourceNotFoundException, "Task does not exist.")
                })?;
            task.status = TaskStatus::Cancelled;
            let op = task.put_op();
            (task.moved, self.inner.store.submit(vec![op]))
        };
        self.commit(commit).await?;
        self.inner.tasks_notify.notify_waiters();
        Ok(CancelMessageMoveTaskResult {
            approximate_number_of_messages_moved: i64::try_from(moved).unwrap_or(i64::MAX),
        })
    }

    pub(super) fn list_message_move_tasks(
        &self,
        c: &ListMessageMoveTasks,
    ) -> SqsResult<ListMessageMoveTasksResult> {
        let max = c.max_results.unwrap_or(1);
        if !(1..=10).contains(&max) {
            // [E] wording.
            return Err(SqsError::invalid_param(
                &max.to_string(),
                "MaxResults",
                "You must enter a number that's between 1 and 10.",
            ));
        }
        let reg = self.lock();
        if self.queue_by_arn(&reg, &c.source_arn).is_none() {
            return Err(not_found("SourceArn"));
        }
        let results = reg
            .tasks()
            .iter()
            .rev()
            .filter(|t| t.source_arn == c.source_arn)
            .take(usize::try_from(max).unwrap_or(1))
            .map(|t| ListMessageMoveTasksResultEntry {
                task_handle: t.running().then(|| t.handle.clone()),
                status: t.status.as_str().to_owned(),
                source_arn: t.source_arn.clone(),
                destination_arn: t.destination_arn.clone(),
                max_number_of_messages_per_second: t.rate.and_then(|r| i64::try_from(r).ok()),
                approximate_number_of_messages_moved: i64::try_from(t.moved).unwrap_or(i64::MAX),
                approximate_number_of_messages_to_move: i64::try_from(t.to_move).ok(),
                failure_reason: t
                    .failure_reason
                    .clone()
                    .filter(|_| t.status == TaskStatus::Failed),
                started_timestamp: i64::try_from(t.started_ms).unwrap_or(i64::MAX),
            })
            .collect();
        Ok(ListMessageMoveTasksResult { results })
    }

    /// Starts the background mover of a task (also used at start-up for RUNNING tasks).
    pub(crate) fn spawn_mover(&self, task_id: String) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let engine = self.clone();
        rt.spawn(async move { engine.run_mover(&task_id).await });
    }

    async fn run_mover(&self, task_id: &str) {
        loop {
            let notified = self.inner.tasks_notify.clone().notified_owned();
            let mut notified = Box::pin(notified);
            notified.as_mut().enable();
            if !self.writable(Access::Write) {
                // Memory must keep equal to a file that cannot be written: wait for storage.
                if self.closing() {
                    return;
                }
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep(Duration::from_millis(500)) => {}
                }
                continue;
            }
            let now = self.now();
            let (next, commit) = {
                let mut reg = self.lock();
                let mut ops = Vec::new();
                let next = self.mover_step(&mut reg, task_id, now, &mut ops);
                (next, self.submit_puts(&mut reg, ops))
            };
            if let Err(e) = commit.wait().await {
                tracing::error!(error = %e, task_id, "move task commit failed");
            }
            let Some(wake_at) = next else {
                return;
            };
            if self.closing() {
                return;
            }
            let sleep_ms = wake_at.saturating_sub(self.now());
            if sleep_ms == 0 {
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep(Duration::from_millis(sleep_ms)) => {}
            }
        }
    }

    /// Moves what the rate allows now. Returns when to run again, or `None` when the task is
    /// no longer running.
    fn mover_step(
        &self,
        reg: &mut Registry,
        task_id: &str,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> Option<u64> {
        let ti = reg.tasks().iter().position(|t| t.id == task_id)?;
        let task = reg.tasks()[ti].clone();
        if !task.running() {
            return None;
        }
        let Some(source) = self.queue_by_arn(reg, &task.source_arn) else {
            finish(reg, ti, TaskStatus::Failed, ops);
            return None;
        };
        // The first second's budget is available at once, then `rate` more each second.
        let elapsed_s = now.saturating_sub(task.started_ms) / 1000;
        let budget = task.rate.map_or(UNLIMITED_STEP, |r| {
            (r * (elapsed_s + 1))
                .saturating_sub(task.moved)
                .min(UNLIMITED_STEP)
        });
        let remaining = task.to_move.saturating_sub(task.moved);
        let mut moved = 0;
        while moved < budget.min(remaining) {
            let q = reg.get_mut(source)?;
            q.promote(now);
            let Some((seq, target_arn)) = q
                .messages()
                .ready_seqs()
                .find_map(|s| self.destination(&task, q, s).map(|d| (s, d)))
            else {
                break;
            };
            let Some(target) = self.queue_by_arn(reg, &target_arn).filter(|&t| t != source) else {
                finish(reg, ti, TaskStatus::Failed, ops);
                return None;
            };
            // The record is read (from memory or disk) before the delete takes the message.
            let Some(mut rec) = reg.get(source).and_then(|q| self.record(q, seq)) else {
                break;
            };
            if reg
                .get_mut(source)
                .and_then(|q| q.delete(seq, ops))
                .is_none()
            {
                break;
            }
            let dest = reg.get_mut(target)?;
            // A moved message is a new message in its destination: a new id and enqueue time,
            // so its retention starts again (AWS developer guide, "dead-letter queue
            // redrive"); [E] a fresh receive count and no DLQ source. Body and attributes stay.
            rec.id = super::message::parse_id(&self.inner.ids.uuid());
            rec.extra_mut().dead_letter_source_arn = None;
            rec.sent_ms = dest.send_time(now);
            rec.delay_s = 0;
            if dest.is_fifo() {
                rec.extra_mut().sequence_number =
                    Some(dest.fifo_state().next_sequence(rec.sent_ms));
            } else {
                // FIFO → standard: a standard queue has no deduplication or sequence numbers;
                // the group id stays (fair queues use it).
                let extra = rec.extra_mut();
                extra.dedup_id = None;
                extra.sequence_number = None;
            }
            rec.compact();
            let state = StateRecord {
                visible_at_ms: now,
                ..StateRecord::default()
            };
            dest.append(rec, state, now, ops);
            dest.wake();
            moved += 1;
        }
        let t = &mut reg.tasks_mut()[ti];
        t.moved += moved;
        let all_moved = t.moved >= task.to_move;
        let source_left = reg.get(source).is_some_and(|q| {
            q.messages()
                .ready_seqs()
                .any(|s| self.destination(&task, q, s).is_some())
        });
        if all_moved || (!source_left && moved < budget) {
            finish(reg, ti, TaskStatus::Completed, ops);
            return None;
        }
        ops.push(reg.tasks()[ti].put_op());
        Some(match task.rate {
            Some(_) if moved >= budget => task.started_ms + (elapsed_s + 1) * 1000,
            _ => now,
        })
    }
}

/// Ends task number `ti` with `status` (a failure always means a queue is gone) and pushes the
/// op that persists it.
fn finish(reg: &mut Registry, ti: usize, status: TaskStatus, ops: &mut Vec<Op>) {
    let t = &mut reg.tasks_mut()[ti];
    t.status = status;
    t.failure_reason = (status == TaskStatus::Failed).then(|| NON_EXISTENT_QUEUE.to_owned());
    ops.push(t.put_op());
}
