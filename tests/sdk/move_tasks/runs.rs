//! Move tasks at work: back to the source queues or to a named destination, cancellation
//! midway, the rate limit, a destination deleted mid-run, and a restart while running.

use std::collections::HashSet;
use std::sync::Arc;

use aws_sdk_sqs::types::Message;
use localsqs::engine::ManualClock;

use super::{
    assert_settled, latest_task, list_tasks, poison, poison_attrs, quick_pair, quick_source,
    start_task, wait_moved, wait_status,
};
use crate::harness::{
    DeadLetter, START_MS, TestServer, arn, delete_all, md5_of_attributes, receive_count,
    receive_full, sorted_bodies,
};

/// Without DestinationArn, messages go back to their original queues with a fresh receive
/// count; the task completes; ListMessageMoveTasks lists most recent first, with a TaskHandle
/// only while RUNNING and no DestinationArn (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_back_to_the_source_queues() {
    let t = TestServer::start().await;
    let DeadLetter {
        src: s1,
        dlq,
        dlq_arn,
    } = quick_pair(&t, "s1", "dlq").await;
    let s2 = quick_source(&t, "s2", &dlq_arn).await;
    let ids1 = poison(&t, &s1, &["a1", "a2", "a3"]).await;
    let ids2 = poison(&t, &s2, &["b1", "b2"]).await;
    assert_eq!(t.counts(&dlq).await, (5, 0, 0));

    t.advance_secs(10);
    let first_started = START_MS + 10_000;
    start_task(&t, &dlq_arn, None, None).await;
    let done = wait_status(&t, &dlq_arn, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), 5, "{done:?}");
    assert_eq!(
        done.approximate_number_of_messages_to_move(),
        Some(5),
        "{done:?}"
    );
    assert_eq!(done.task_handle(), None, "no TaskHandle once COMPLETED");
    assert_eq!(
        done.destination_arn(),
        None,
        "no DestinationArn when none was given"
    );
    assert_eq!(done.source_arn(), Some(dlq_arn.as_str()));
    assert_eq!(done.failure_reason(), None);
    assert_eq!(
        done.started_timestamp(),
        i64::try_from(first_started).expect("fits")
    );
    assert_eq!(t.counts(&dlq).await, (0, 0, 0));

    for (url, ids) in [(&s1, &ids1), (&s2, &ids2)] {
        let got = receive_full(&t, url, 10).await;
        let mut expected: Vec<String> = ids.keys().cloned().collect();
        expected.sort_unstable();
        assert_eq!(sorted_bodies(&got), expected, "back in {url}");
        for m in &got {
            let body = m.body().expect("Body");
            // A redriven message is a new message: a new id, and its send time is the move.
            let id = m.message_id().expect("MessageId");
            assert_ne!(id, ids[body], "{body} gets a new id");
            assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
            assert_eq!(
                m.attributes()
                    .and_then(
                        |a| a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::SentTimestamp)
                    )
                    .map(String::as_str),
                Some(first_started.to_string().as_str()),
                "{body}: sent at the move"
            );
            assert_eq!(receive_count(m), "1", "{body}: a fresh receive count");
            assert_eq!(
                m.md5_of_message_attributes(),
                Some(md5_of_attributes(&poison_attrs(body)).as_str()),
                "{body} keeps its attributes"
            );
        }
        delete_all(&t, url, &got).await;
    }

    // A second, rate-limited task: listed first, with its handle while RUNNING.
    poison(&t, &s1, &["c1", "c2"]).await;
    t.advance_secs(5);
    let handle = start_task(&t, &dlq_arn, None, Some(1)).await;
    wait_moved(&t, &dlq_arn, 1).await;
    let listed = list_tasks(&t, &dlq_arn, Some(10)).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0].status(), Some("RUNNING"));
    assert_eq!(listed[0].task_handle(), Some(handle.as_str()));
    assert_eq!(listed[0].approximate_number_of_messages_to_move(), Some(2));
    assert!(listed[0].started_timestamp() > listed[1].started_timestamp());
    assert_eq!(listed[1].status(), Some("COMPLETED"));
    assert_eq!(listed[1].task_handle(), None);
    assert_eq!(
        list_tasks(&t, &dlq_arn, None).await.len(),
        1,
        "MaxResults defaults to 1"
    );

    t.advance_secs(1);
    let done = wait_status(&t, &dlq_arn, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), 2);
    assert_eq!(done.task_handle(), None);
    let listed = list_tasks(&t, &dlq_arn, Some(10)).await;
    assert!(
        listed.iter().all(|e| e.task_handle().is_none()),
        "{listed:?}"
    );
    assert_eq!(
        sorted_bodies(&t.receive(&s1, 10).await),
        ["c1", "c2"],
        "the second task's messages are back too"
    );
    t.shutdown().await;
}

/// With DestinationArn, every message goes to that queue (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_to_a_named_destination() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, dlq_arn } = quick_pair(&t, "src", "dlq").await;
    let dest = t.create_queue("dest", &[]).await;
    let dest_arn = arn(&t, &dest).await;
    let ids = poison(&t, &src, &["m1", "m2", "m3"]).await;

    start_task(&t, &dlq_arn, Some(&dest_arn), None).await;
    let done = wait_status(&t, &dlq_arn, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), 3);
    assert_eq!(done.destination_arn(), Some(dest_arn.as_str()));
    assert_eq!(t.counts(&dlq).await, (0, 0, 0));
    assert_eq!(
        t.counts(&src).await,
        (0, 0, 0),
        "nothing went to the source"
    );

    let got = receive_full(&t, &dest, 10).await;
    assert_eq!(sorted_bodies(&got), ["m1", "m2", "m3"]);
    for m in &got {
        let body = m.body().expect("Body");
        assert_ne!(m.message_id(), Some(ids[body].as_str()), "a new id");
        assert_eq!(
            md5_of_attributes(m.message_attributes().expect("MessageAttributes")),
            md5_of_attributes(&poison_attrs(body))
        );
    }
    t.shutdown().await;
}

/// Cancelling midway: the answer and the listing say how many moved, the status is CANCELLED
/// and nothing moves afterwards (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_midway() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, dlq_arn } = quick_pair(&t, "src", "dlq").await;
    let bodies: Vec<String> = (0..10).map(|i| format!("m{i}")).collect();
    let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
    poison(&t, &src, &refs).await;

    let handle = start_task(&t, &dlq_arn, None, Some(1)).await;
    wait_moved(&t, &dlq_arn, 1).await;
    for k in 2..=3 {
        t.advance_secs(1);
        wait_moved(&t, &dlq_arn, k).await;
    }
    assert_eq!(t.counts(&src).await, (3, 0, 0));
    let out = t
        .client
        .cancel_message_move_task()
        .task_handle(&handle)
        .send()
        .await
        .expect("CancelMessageMoveTask");
    assert_eq!(out.approximate_number_of_messages_moved(), 3);
    let task = latest_task(&t, &dlq_arn).await;
    assert_eq!(task.status(), Some("CANCELLED"), "{task:?}");
    assert_eq!(task.approximate_number_of_messages_moved(), 3);
    assert_eq!(task.task_handle(), None);

    t.advance_secs(10);
    assert_settled(&t, &dlq_arn, 3, &[(src.as_str(), 3), (dlq.as_str(), 7)]).await;
    assert_eq!(latest_task(&t, &dlq_arn).await.status(), Some("CANCELLED"));
    t.shutdown().await;
}

/// MaxNumberOfMessagesPerSecond=5: after each second of the injected clock no more than
/// 5 × (elapsed seconds + 1) messages have moved (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_is_honoured() {
    const RATE: i64 = 5;
    const TOTAL: i64 = 20;
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, dlq_arn } = quick_pair(&t, "src", "dlq").await;
    let bodies: Vec<String> = (0..TOTAL).map(|i| format!("m{i}")).collect();
    let refs: Vec<&str> = bodies.iter().map(String::as_str).collect();
    poison(&t, &src, &refs).await;

    start_task(&t, &dlq_arn, None, Some(i32::try_from(RATE).expect("fits"))).await;
    let mut elapsed = 0;
    loop {
        let allowed = RATE * (elapsed + 1);
        let expected = allowed.min(TOTAL);
        wait_moved(&t, &dlq_arn, expected).await;
        let visible = u64::try_from(expected).expect("fits");
        let left = u64::try_from(TOTAL - expected).expect("fits");
        if expected == TOTAL {
            break;
        }
        assert_settled(
            &t,
            &dlq_arn,
            expected,
            &[(src.as_str(), visible), (dlq.as_str(), left)],
        )
        .await;
        assert_eq!(
            latest_task(&t, &dlq_arn).await.status(),
            Some("RUNNING"),
            "after {elapsed} s"
        );
        t.advance_secs(1);
        elapsed += 1;
    }
    assert_eq!(
        elapsed, 3,
        "20 messages at 5 per second take 4 budget windows"
    );
    let done = wait_status(&t, &dlq_arn, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), TOTAL);
    assert_eq!(done.max_number_of_messages_per_second(), Some(5));
    assert_eq!(t.counts(&src).await, (20, 0, 0));
    assert_eq!(t.counts(&dlq).await, (0, 0, 0));
    t.shutdown().await;
}

/// Deleting the destination while the task runs fails it with NonExistentQueue (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destination_deleted_mid_run_fails_the_task() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, dlq_arn } = quick_pair(&t, "src", "dlq").await;
    let dest = t.create_queue("dest", &[]).await;
    let dest_arn = arn(&t, &dest).await;
    poison(&t, &src, &["m1", "m2", "m3", "m4", "m5"]).await;

    start_task(&t, &dlq_arn, Some(&dest_arn), Some(1)).await;
    wait_moved(&t, &dlq_arn, 1).await;
    t.client
        .delete_queue()
        .queue_url(&dest)
        .send()
        .await
        .expect("DeleteQueue dest");
    t.advance_secs(1);
    let failed = wait_status(&t, &dlq_arn, "FAILED").await;
    assert_eq!(
        failed.failure_reason(),
        Some("AWS.SimpleQueueService.NonExistentQueue"),
        "{failed:?}"
    );
    assert_eq!(failed.task_handle(), None);
    assert_eq!(failed.approximate_number_of_messages_moved(), 1);
    assert_eq!(t.counts(&dlq).await, (4, 0, 0), "the rest stay in the DLQ");
    t.shutdown().await;
}

/// A RUNNING rate-limited task survives a restart on the same data directory and finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_task_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::new(START_MS));
    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let DeadLetter { src, dlq_arn, .. } = quick_pair(&t, "src", "dlq").await;
    let ids = poison(&t, &src, &["m1", "m2", "m3", "m4", "m5", "m6"]).await;
    let handle = start_task(&t, &dlq_arn, None, Some(2)).await;
    wait_moved(&t, &dlq_arn, 2).await;
    t.shutdown().await;

    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let url_of = |name: &'static str| {
        let client = t.client.clone();
        async move {
            client
                .get_queue_url()
                .queue_name(name)
                .send()
                .await
                .expect("GetQueueUrl after the restart")
                .queue_url()
                .expect("QueueUrl")
                .to_owned()
        }
    };
    let (dlq, src) = (url_of("dlq").await, url_of("src").await);
    let task = latest_task(&t, &dlq_arn).await;
    assert_eq!(task.status(), Some("RUNNING"), "{task:?}");
    assert_eq!(task.task_handle(), Some(handle.as_str()));
    assert_eq!(task.approximate_number_of_messages_moved(), 2);
    assert_eq!(t.counts(&src).await, (2, 0, 0));

    t.advance_secs(1);
    wait_moved(&t, &dlq_arn, 4).await;
    t.advance_secs(1);
    let done = wait_status(&t, &dlq_arn, "COMPLETED").await;
    assert_eq!(done.approximate_number_of_messages_moved(), 6);
    assert_eq!(t.counts(&dlq).await, (0, 0, 0));
    let got = receive_full(&t, &src, 10).await;
    let mut bodies: Vec<&str> = got.iter().filter_map(Message::body).collect();
    bodies.sort_unstable();
    let mut expected: Vec<&str> = ids.keys().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(bodies, expected, "each message once, under a new id");
    let got_ids: HashSet<&str> = got.iter().filter_map(Message::message_id).collect();
    assert_eq!(got_ids.len(), 6);
    assert!(ids.values().all(|id| !got_ids.contains(id.as_str())));
    t.shutdown().await;
}

/// A source keeps its ten newest tasks: ListMessageMoveTasks still lists those, newest first,
/// after many more have run, and older finished ones are forgotten, also on disk (so the list
/// cannot grow with every task a client starts). Deleting the source forgets the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_keeps_its_ten_newest_tasks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(ManualClock::new(START_MS));
    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    let DeadLetter { src, dlq, dlq_arn } = quick_pair(&t, "src", "dlq").await;
    let mut rates = Vec::new();
    for rate in 1..=14 {
        poison(&t, &src, &[&format!("m{rate}")]).await;
        start_task(&t, &dlq_arn, None, Some(rate)).await;
        wait_status(&t, &dlq_arn, "COMPLETED").await;
        rates.push(rate);
    }
    let newest: Vec<i32> = rates.iter().rev().take(10).copied().collect();
    let listed = |t: &TestServer| {
        let (client, arn) = (t.client.clone(), dlq_arn.clone());
        async move {
            client
                .list_message_move_tasks()
                .source_arn(arn)
                .max_results(10)
                .send()
                .await
                .expect("ListMessageMoveTasks")
                .results()
                .iter()
                .map(|e| e.max_number_of_messages_per_second().expect("a rate"))
                .collect::<Vec<i32>>()
        }
    };
    assert_eq!(listed(&t).await, newest);
    assert_eq!(
        t.server.engine().task_count(),
        10,
        "the four oldest are forgotten"
    );
    t.shutdown().await;

    let t = TestServer::start_with(clock.clone(), Some(dir.path())).await;
    assert_eq!(
        t.server.engine().task_count(),
        10,
        "and stay forgotten on disk"
    );
    assert_eq!(listed(&t).await, newest);
    // Deleting the source queue forgets its tasks: nothing can list or cancel them any more.
    t.client
        .delete_queue()
        .queue_url(&dlq)
        .send()
        .await
        .expect("DeleteQueue");
    assert_eq!(t.server.engine().task_count(), 0);
    t.shutdown().await;
    let t = TestServer::start_with(clock, Some(dir.path())).await;
    assert_eq!(t.server.engine().task_count(), 0, "also on disk");
    t.shutdown().await;
}
