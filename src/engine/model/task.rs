//! Engine layer, model: a message move task as the engine keeps it, with a typed status, and its
//! conversion to and from the stored [`TaskRecord`] (docs/protocol.md §6.11).

use crate::engine::store::record::TaskRecord;
use crate::engine::store::schema::Op;

/// Where a move task is in its life. CANCELLING is never shown: a cancel takes effect at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskStatus {
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
pub(crate) struct Task {
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

/// A task id that sorts, as text, in start order: a version 7 UUID of the start time, whose 12
/// bits after the version count the tasks started in that same millisecond, and whose other
/// bits come from `random` (a version 4 UUID). Tasks are stored by id and loaded in (start
/// time, id) order, so ListMessageMoveTasks keeps its newest-first order across a restart even
/// when a test clock stands still. (Past 4,096 tasks in one millisecond the count wraps.)
pub(crate) fn new_task_id(started_ms: u64, existing: &[Task], random: &str) -> String {
    let time = format!(
        "{:08x}-{:04x}",
        (started_ms >> 16) & 0xFFFF_FFFF,
        started_ms & 0xFFFF
    );
    let count = existing
        .iter()
        .filter_map(|t| {
            let rest = t.id.strip_prefix(time.as_str())?.strip_prefix("-7")?;
            u16::from_str_radix(rest.get(..3)?, 16).ok()
        })
        .max()
        .map_or(0, |n| n + 1);
    let tail = random.get(19..).unwrap_or("8000-000000000000");
    format!("{time}-7{:03x}-{tail}", count & 0xFFF)
}

/// Most tasks kept per source queue. ListMessageMoveTasks shows at most the 10 newest, so
/// older finished ones are forgotten (in memory and on disk) when a new one starts; without
/// this, the list would grow with every task a client starts.
pub(crate) const KEPT_PER_SOURCE: usize = 10;

/// Forgets the oldest finished tasks of `source_arn` until at most `keep` of its tasks are
/// left, pushing their deletions to `ops`. Running tasks stay. (`keep` 0: the source queue is
/// gone, and with it every way to list or cancel its tasks; a running one stops at its next
/// step, which no longer finds it.)
pub(crate) fn forget_tasks(
    tasks: &mut Vec<Task>,
    source_arn: &str,
    keep: usize,
    ops: &mut Vec<Op>,
) {
    let mut excess = tasks
        .iter()
        .filter(|t| t.source_arn == source_arn)
        .count()
        .saturating_sub(keep);
    tasks.retain(|t| {
        let forget = excess > 0 && t.source_arn == source_arn && (keep == 0 || !t.running());
        if forget {
            excess -= 1;
            ops.push(Op::DeleteTask(t.id.clone()));
        }
        !forget
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, source: &str, status: TaskStatus) -> Task {
        Task {
            id: id.into(),
            handle: String::new(),
            source_arn: source.into(),
            destination_arn: None,
            rate: None,
            status,
            moved: 0,
            to_move: 0,
            failure_reason: None,
            started_ms: 0,
        }
    }

    fn ids(tasks: &[Task]) -> Vec<&str> {
        tasks.iter().map(|t| t.id.as_str()).collect()
    }

    #[test]
    fn task_ids_are_version_7_uuids_in_start_order() {
        let random = "0f1e2d3c-4b5a-4978-a695-a4b3c2d1e0ff";
        let mut tasks = Vec::new();
        let mut ids = Vec::new();
        for ms in [
            1_700_000_000_000,
            1_700_000_000_000,
            1_700_000_000_000,
            1_700_000_000_001,
        ] {
            let id = new_task_id(ms, &tasks, random);
            let parsed = uuid::Uuid::parse_str(&id).expect("a UUID");
            assert_eq!(parsed.get_version_num(), 7, "{id}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{id}");
            let (secs, nanos) = parsed.get_timestamp().expect("a time").to_unix();
            assert_eq!(secs * 1000 + u64::from(nanos) / 1_000_000, ms, "{id}");
            let mut t = task(&id, "a", TaskStatus::Completed);
            t.started_ms = ms;
            tasks.push(t);
            ids.push(id);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "as text, in start order");
        assert!(
            ids[1].contains("-7001-") && ids[2].contains("-7002-"),
            "{ids:?}"
        );
        assert!(
            ids[3].contains("-7000-"),
            "a new millisecond counts from 0: {ids:?}"
        );
        // The count goes on from the highest left, even after older tasks were forgotten.
        tasks.remove(0);
        let next = new_task_id(1_700_000_000_000, &tasks, random);
        assert!(next.contains("-7003-"), "{next}");
    }

    /// The oldest finished tasks of one source go (from memory and, through the ops, from
    /// disk); other sources' tasks and running tasks stay.
    #[test]
    fn old_finished_tasks_are_forgotten() {
        let mut tasks = vec![
            task("a1", "a", TaskStatus::Completed),
            task("b1", "b", TaskStatus::Completed),
            task("a2", "a", TaskStatus::Running),
            task("a3", "a", TaskStatus::Cancelled),
            task("a4", "a", TaskStatus::Failed),
        ];
        let mut ops = Vec::new();
        forget_tasks(&mut tasks, "a", 2, &mut ops);
        assert_eq!(
            ids(&tasks),
            ["b1", "a2", "a4"],
            "a1 and a3 go; running a2 stays"
        );
        let deleted: Vec<&str> = ops
            .iter()
            .map(|op| match op {
                Op::DeleteTask(id) => id.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(deleted, ["a1", "a3"]);
        forget_tasks(&mut tasks, "a", 0, &mut ops);
        assert_eq!(
            ids(&tasks),
            ["b1"],
            "a deleted source leaves nothing, running or not"
        );
        assert_eq!(ops.len(), 4);
    }

    #[test]
    fn statuses_round_trip_as_text() {
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(TaskStatus::parse("CANCELLING"), None);
    }
}
