//! Engine layer: message move tasks (StartMessageMoveTask, CancelMessageMoveTask,
//! ListMessageMoveTasks) and the background mover (§6.11 of sqs-protocol.md).
//!
//! A task moves the messages of a dead-letter queue back to their sources, or to a named
//! destination, at most MaxNumberOfMessagesPerSecond per second of the injected clock. Tasks
//! are persisted, so a running task continues after a restart.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::state::Queue;
use super::store::{MessageRecord, Op, StateRecord, encode};
use super::{Engine, State};
use crate::command::{
    CancelMessageMoveTask, CancelMessageMoveTaskResult, ListMessageMoveTasks,
    ListMessageMoveTasksResult, ListMessageMoveTasksResultEntry, StartMessageMoveTask,
    StartMessageMoveTaskResult, arn_name,
};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// Messages moved per step when no rate is set.
const UNLIMITED_STEP: u64 = 100;

pub use super::record::TaskRecord;

/// Where a task sends message `seq` of its source: the task's destination, or the queue the
/// message was dead-lettered from. `None` for a message with neither (it stays).
fn destination(task: &TaskRecord, q: &Queue, seq: u64) -> Option<String> {
    task.destination_arn.clone().or_else(|| {
        q.msgs
            .get(&seq)
            .and_then(|m| m.rec.extra().dead_letter_source_arn.clone())
    })
}

fn not_found(param: &str) -> SqsError {
    SqsError::new(
        ErrorCode::ResourceNotFoundException,
        format!("The resource that you specified for the {param} parameter doesn't exist."),
    )
}

impl Engine {
    /// Finds a queue by ARN in this account and region.
    fn queue_by_arn(&self, st: &State, arn: &str) -> Option<u64> {
        let name = arn_name(arn)?;
        let id = *st.by_name.get(name)?;
        (self.queue_arn(name) == arn).then_some(id)
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
            let mut st = self.lock();
            let source = self
                .queue_by_arn(&st, &c.source_arn)
                .ok_or_else(|| not_found("SourceArn"))?;
            let source_name = st.queues[&source].rec.name.clone();
            let is_dlq = st.queues.values().any(|q| {
                q.settings
                    .redrive
                    .as_ref()
                    .is_some_and(|(_, n)| *n == source_name)
            });
            if !is_dlq {
                return Err(SqsError::invalid_value(
                    "Source queue must be configured as a Dead Letter Queue.",
                ));
            }
            if let Some(d) = &c.destination_arn
                && self.queue_by_arn(&st, d).is_none()
            {
                return Err(not_found("DestinationArn"));
            }
            if st
                .tasks
                .iter()
                .any(|t| t.source_arn == c.source_arn && t.status == "RUNNING")
            {
                return Err(SqsError::invalid_value(
                    "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
                ));
            }
            let id = self.inner.ids.uuid();
            let handle =
                STANDARD.encode(json!({ "taskId": id, "sourceArn": c.source_arn }).to_string());
            let task = TaskRecord {
                id,
                handle,
                source_arn: c.source_arn.clone(),
                destination_arn: c.destination_arn.clone(),
                rate: c.max_number_of_messages_per_second.map(i64::unsigned_abs),
                status: "RUNNING".into(),
                moved: 0,
                to_move: st.queues[&source].msgs.len() as u64,
                failure_reason: None,
                started_ms: now,
            };
            let op = Op::PutTask(task.id.clone(), encode(&task));
            st.tasks.push(task.clone());
            (task, self.inner.store.submit(vec![op]))
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
            let mut st = self.lock();
            if self.queue_by_arn(&st, source_arn).is_none() {
                return Err(not_found("SourceArn"));
            }
            let task = st
                .tasks
                .iter_mut()
                .find(|t| t.id == task_id && t.status == "RUNNING")
                .ok_or_else(|| {
                    SqsError::new(ErrorCode::ResourceNotFoundException, "Task does not exist.")
                })?;
            task.status = "CANCELLED".into();
            let op = Op::PutTask(task.id.clone(), encode(&*task));
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
        let st = self.lock();
        if self.queue_by_arn(&st, &c.source_arn).is_none() {
            return Err(not_found("SourceArn"));
        }
        let results = st
            .tasks
            .iter()
            .rev()
            .filter(|t| t.source_arn == c.source_arn)
            .take(usize::try_from(max).unwrap_or(1))
            .map(|t| ListMessageMoveTasksResultEntry {
                task_handle: (t.status == "RUNNING").then(|| t.handle.clone()),
                status: t.status.clone(),
                source_arn: t.source_arn.clone(),
                destination_arn: t.destination_arn.clone(),
                max_number_of_messages_per_second: t.rate.and_then(|r| i64::try_from(r).ok()),
                approximate_number_of_messages_moved: i64::try_from(t.moved).unwrap_or(i64::MAX),
                approximate_number_of_messages_to_move: i64::try_from(t.to_move).ok(),
                failure_reason: t.failure_reason.clone().filter(|_| t.status == "FAILED"),
                started_timestamp: i64::try_from(t.started_ms).unwrap_or(i64::MAX),
            })
            .collect();
        Ok(ListMessageMoveTasksResult { results })
    }

    /// Starts the background mover of a task (also used at start-up for RUNNING tasks).
    pub(super) fn spawn_mover(&self, task_id: String) {
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
            let now = self.now();
            let (next, commit) = {
                let mut st = self.lock();
                let mut ops = Vec::new();
                let next = self.mover_step(&mut st, task_id, now, &mut ops);
                (next, self.inner.store.submit(ops))
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
        st: &mut State,
        task_id: &str,
        now: u64,
        ops: &mut Vec<Op>,
    ) -> Option<u64> {
        let ti = st.tasks.iter().position(|t| t.id == task_id)?;
        if st.tasks[ti].status != "RUNNING" {
            return None;
        }
        let task = st.tasks[ti].clone();
        let Some(source) = self.queue_by_arn(st, &task.source_arn) else {
            return self.finish(
                st,
                ti,
                "FAILED",
                Some("AWS.SimpleQueueService.NonExistentQueue"),
                ops,
            );
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
            let q = st.queues.get_mut(&source)?;
            q.promote(now);
            let Some((seq, target_arn)) = q
                .ready
                .iter()
                .find_map(|&s| destination(&task, q, s).map(|d| (s, d)))
            else {
                break;
            };
            let Some(target) = self.queue_by_arn(st, &target_arn).filter(|&t| t != source) else {
                return self.finish(
                    st,
                    ti,
                    "FAILED",
                    Some("AWS.SimpleQueueService.NonExistentQueue"),
                    ops,
                );
            };
            let Some(m) = st.queues.get_mut(&source).and_then(|q| q.remove(seq)) else {
                break;
            };
            ops.push(Op::DeleteMessage(source, seq));
            let dest = st.queues.get_mut(&target)?;
            let mut rec: MessageRecord = Arc::unwrap_or_clone(m.rec);
            // [E] A moved message starts afresh in its destination: new send time and receive
            // count, no DLQ source; id, body and attributes are kept.
            rec.extra_mut().dead_letter_source_arn = None;
            rec.sent_ms = now.max(dest.last_sent_ms);
            rec.delay_s = 0;
            if dest.rec.fifo {
                rec.extra_mut().sequence_number = Some(dest.fifo.next_sequence(rec.sent_ms));
            }
            rec.compact();
            let state = StateRecord {
                visible_at_ms: now,
                ..StateRecord::default()
            };
            let dseq = dest.next_seq;
            ops.push(Op::PutMessage(target, dseq, encode(&rec)));
            ops.push(Op::PutState(target, dseq, encode(&state)));
            dest.insert(dseq, Arc::new(rec), state, now);
            dest.notify.notify_waiters();
            moved += 1;
        }
        let t = &mut st.tasks[ti];
        t.moved += moved;
        let source_left = st
            .queues
            .get(&source)
            .is_some_and(|q| q.ready.iter().any(|&s| destination(&task, q, s).is_some()));
        if st.tasks[ti].moved >= task.to_move || (!source_left && moved < budget) {
            return self.finish(st, ti, "COMPLETED", None, ops);
        }
        ops.push(Op::PutTask(task.id.clone(), encode(&st.tasks[ti])));
        Some(match task.rate {
            Some(_) if moved >= budget => task.started_ms + (elapsed_s + 1) * 1000,
            _ => now,
        })
    }

    fn finish(
        &self,
        st: &mut State,
        ti: usize,
        status: &str,
        reason: Option<&str>,
        ops: &mut Vec<Op>,
    ) -> Option<u64> {
        let t = &mut st.tasks[ti];
        t.status = status.into();
        t.failure_reason = reason.map(str::to_owned);
        ops.push(Op::PutTask(t.id.clone(), encode(&*t)));
        None
    }
}
