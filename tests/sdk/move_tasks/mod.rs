//! Message move tasks through aws-sdk-sqs (GitHub issue #5): StartMessageMoveTask /
//! CancelMessageMoveTask / ListMessageMoveTasks, with their errors (`errors`), and tasks that run,
//! are rate limited, cancelled, failed or restarted (`runs`); plus the helpers both share.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock). Move tasks run in the background;
//! after moving the clock the tests wake the engine and poll (bounded, with short yields) until
//! the task has caught up. Nothing asserts a real duration. Expected texts come from
//! docs/protocol.md (§4, §5.5, §6.11).

mod errors;
mod runs;
mod types;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use aws_sdk_sqs::types::{
    ListMessageMoveTasksResultEntry, MessageAttributeValue, QueueAttributeName,
};

use crate::harness::{DeadLetter, TestServer, binary_attr, only, string_attr};

/// How long a background move task is given to catch up before a test gives up (hang guard
/// only; never asserted as a duration).
const CATCH_UP: Duration = Duration::from_secs(5);
/// The pause between two polls of a background task.
const POLL: Duration = Duration::from_millis(5);

/// The attributes of a source queue that poisons quickly, with maxReceiveCount 1: one receive
/// returns a message, the next moves it.
const QUICK: &[(QueueAttributeName, &str)] = &[(QueueAttributeName::VisibilityTimeout, "0")];

/// A quick source queue `name` feeding `dlq_arn`.
pub async fn quick_source(t: &TestServer, name: &str, dlq_arn: &str) -> String {
    t.create_source_queue(name, QUICK, dlq_arn, 1).await
}

/// The dead-letter queue `dlq` and a quick source `src` feeding it.
pub async fn quick_pair(t: &TestServer, src: &str, dlq: &str) -> DeadLetter {
    t.create_dead_letter_pair(src, QUICK, dlq, &[], 1).await
}

/// The attributes every poisoned message carries.
pub fn poison_attrs(body: &str) -> HashMap<String, MessageAttributeValue> {
    HashMap::from([
        ("origin".to_owned(), string_attr("String", body)),
        ("blob".to_owned(), binary_attr("Binary", &[0, 1, 2])),
    ])
}

/// Sends `bodies` to the quick source `src` and receives until all of them have moved to its
/// dead-letter queue. Returns body → MessageId.
pub async fn poison(t: &TestServer, src: &str, bodies: &[&str]) -> HashMap<String, String> {
    let mut ids = HashMap::new();
    for body in bodies {
        let out = t
            .client
            .send_message()
            .queue_url(src)
            .message_body(*body)
            .set_message_attributes(Some(poison_attrs(body)))
            .send()
            .await
            .expect("SendMessage");
        ids.insert(
            (*body).to_owned(),
            out.message_id().expect("MessageId").to_owned(),
        );
    }
    for _ in 0..=2 * bodies.len() + 2 {
        if t.counts(src).await == (0, 0, 0) {
            break;
        }
        t.receive(src, 10).await;
    }
    assert_eq!(
        t.counts(src).await,
        (0, 0, 0),
        "every message moved to the dead-letter queue"
    );
    ids
}

pub async fn start_task(
    t: &TestServer,
    source_arn: &str,
    destination_arn: Option<&str>,
    rate: Option<i32>,
) -> String {
    t.client
        .start_message_move_task()
        .source_arn(source_arn)
        .set_destination_arn(destination_arn.map(str::to_owned))
        .set_max_number_of_messages_per_second(rate)
        .send()
        .await
        .unwrap_or_else(|e| panic!("StartMessageMoveTask: {e:?}"))
        .task_handle()
        .expect("TaskHandle")
        .to_owned()
}

pub async fn list_tasks(
    t: &TestServer,
    source_arn: &str,
    max: Option<i32>,
) -> Vec<ListMessageMoveTasksResultEntry> {
    t.client
        .list_message_move_tasks()
        .source_arn(source_arn)
        .set_max_results(max)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ListMessageMoveTasks: {e:?}"))
        .results
        .unwrap_or_default()
}

/// The most recent task of `source_arn` (ListMessageMoveTasks' default MaxResults is 1).
pub async fn latest_task(t: &TestServer, source_arn: &str) -> ListMessageMoveTasksResultEntry {
    only(
        list_tasks(t, source_arn, None).await,
        "the most recent task",
    )
}

/// Polls the most recent task until `done` holds; every observation must satisfy
/// `invariant`. Hang-guarded by [`CATCH_UP`].
pub async fn wait_task(
    t: &TestServer,
    source_arn: &str,
    what: &str,
    done: impl Fn(&ListMessageMoveTasksResultEntry) -> bool,
    invariant: impl Fn(&ListMessageMoveTasksResultEntry) -> bool,
) -> ListMessageMoveTasksResultEntry {
    let deadline = Instant::now() + CATCH_UP;
    loop {
        let task = latest_task(t, source_arn).await;
        assert!(invariant(&task), "{what}: invariant broken by {task:?}");
        if done(&task) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the task did not get there: {task:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// Waits until the most recent task has moved exactly `n` messages (never more).
pub async fn wait_moved(
    t: &TestServer,
    source_arn: &str,
    n: i64,
) -> ListMessageMoveTasksResultEntry {
    wait_task(
        t,
        source_arn,
        &format!("{n} moved"),
        |e| e.approximate_number_of_messages_moved() == n,
        |e| e.approximate_number_of_messages_moved() <= n,
    )
    .await
}

pub async fn wait_status(
    t: &TestServer,
    source_arn: &str,
    status: &str,
) -> ListMessageMoveTasksResultEntry {
    wait_task(
        t,
        source_arn,
        status,
        |e| e.status() == Some(status),
        |_| true,
    )
    .await
}

/// For a short while (a few polls, letting background tasks run), the most recent task keeps
/// `moved` and the queues keep their counts: nothing moves while it should not.
pub async fn assert_settled(t: &TestServer, source_arn: &str, moved: i64, queues: &[(&str, u64)]) {
    for _ in 0..20 {
        tokio::time::sleep(POLL).await;
        let task = latest_task(t, source_arn).await;
        assert_eq!(
            task.approximate_number_of_messages_moved(),
            moved,
            "{task:?}"
        );
        for (url, visible) in queues {
            assert_eq!(t.counts(url).await, (*visible, 0, 0), "{url}");
        }
    }
}
