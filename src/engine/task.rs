//! Engine layer: a message move task as the engine keeps it, with a typed status, and its
//! conversion to and from the stored [`TaskRecord`] (docs/protocol.md §6.11).

use super::record::TaskRecord;
use super::store::Op;

/// Where a move task is in its life. CANCELLING is never shown: a cancel takes effect at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskStatus {
    /// Moving messages.
    Running,
    /// Every message that was there at the start has been moved.
    Completed,
    /// Stopped by CancelMessageMoveTask.
    Cancelled,
    /// Stopped because a queue it needs is gone; see the failure reason.
    Failed,
}

impl TaskStatus {
    const ALL: [TaskStatus; 4] = [
        TaskStatus::Running,
        TaskStatus::Completed,
        TaskStatus::Cancelled,
        TaskStatus::Failed,
    ];

    /// The wire (and stored) text.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "RUNNING",
            TaskStatus::Completed => "COMPLETED",
            TaskStatus::Cancelled => "CANCELLED",
            TaskStatus::Failed => "FAILED",
        }
    }

    fn parse(s: &str) -> Option<TaskStatus> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A message move task.
#[derive(Debug, Clone)]
pub(super) struct Task {
    /// Task id (UUID).
    pub id: String,
    /// Opaque handle given to the client (§4).
    pub handle: String,
    /// Dead-letter queue ARN.
    pub source_arn: String,
    /// Destination ARN, when given.
    pub destination_arn: Option<String>,
    /// Rate limit (messages per second), when given.
    pub rate: Option<u64>,
    /// Status.
    pub status: TaskStatus,
    /// Moved so far.
    pub moved: u64,
    /// Messages in the source when the task started.
    pub to_move: u64,
    /// Why the task failed (only with [`TaskStatus::Failed`]).
    pub failure_reason: Option<String>,
    /// Epoch ms.
    pub started_ms: u64,
}

impl Task {
    /// A task read back at start-up.
    pub fn from_record(r: TaskRecord) -> Result<Task, String> {
        let status = TaskStatus::parse(&r.status)
            .ok_or_else(|| format!("move task {}: unknown status {:?}", r.id, r.status))?;
        Ok(Task {
            id: r.id,
            handle: r.handle,
            source_arn: r.source_arn,
            destination_arn: r.destination_arn,
            rate: r.rate,
            status,
            moved: r.moved,
            to_move: r.to_move,
            failure_reason: r.failure_reason,
            started_ms: r.started_ms,
        })
    }

    /// Whether the task is still moving messages.
    pub fn running(&self) -> bool {
        self.status == TaskStatus::Running
    }

    /// The op that persists the task.
    pub fn put_op(&self) -> Op {
        Op::PutTask(TaskRecord {
            id: self.id.clone(),
            handle: self.handle.clone(),
            source_arn: self.source_arn.clone(),
            destination_arn: self.destination_arn.clone(),
            rate: self.rate,
            status: self.status.as_str().to_owned(),
            moved: self.moved,
            to_move: self.to_move,
            failure_reason: self.failure_reason.clone(),
            started_ms: self.started_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_as_text() {
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(TaskStatus::parse("CANCELLING"), None);
    }
}
