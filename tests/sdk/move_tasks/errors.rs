//! StartMessageMoveTask, ListMessageMoveTasks and CancelMessageMoveTask errors, the TaskHandle
//! format, and one active task per source.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{latest_task, list_tasks, poison, quick_pair, start_task};
use crate::harness::{DeadLetter, TestServer, arn, expect_error};

/// StartMessageMoveTask errors, the TaskHandle format, and one active task per source (§4,
/// §5.5, §6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_task_errors_and_handle_format() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq_arn, .. } = quick_pair(&t, "src", "dlq").await;
    let plain = t.create_queue("plain", &[]).await;
    let plain_arn = arn(&t, &plain).await;
    poison(&t, &src, &["m1", "m2", "m3"]).await;
    let prefix = dlq_arn.strip_suffix("dlq").expect("ARN ends in dlq");

    let r = t
        .client
        .start_message_move_task()
        .source_arn(&plain_arn)
        .send()
        .await;
    expect_error(
        "StartMessageMoveTask on a queue that is no DLQ",
        r,
        400,
        "InvalidParameterValue",
        Some("Source queue must be configured as a Dead Letter Queue."),
    );
    let r = t
        .client
        .start_message_move_task()
        .source_arn(format!("{prefix}nope"))
        .send()
        .await;
    expect_error(
        "StartMessageMoveTask with an unknown SourceArn",
        r,
        404,
        "ResourceNotFoundException",
        None,
    );
    let r = t
        .client
        .start_message_move_task()
        .source_arn(&dlq_arn)
        .destination_arn(format!("{prefix}nope"))
        .send()
        .await;
    expect_error(
        "StartMessageMoveTask with a missing destination",
        r,
        404,
        "ResourceNotFoundException",
        Some("The resource that you specified for the DestinationArn parameter doesn't exist."),
    );
    for rate in [0, 501] {
        let r = t
            .client
            .start_message_move_task()
            .source_arn(&dlq_arn)
            .max_number_of_messages_per_second(rate)
            .send()
            .await;
        expect_error(
            &format!("MaxNumberOfMessagesPerSecond {rate}"),
            r,
            400,
            "InvalidParameterValue",
            None,
        );
    }
    assert!(
        list_tasks(&t, &dlq_arn, Some(10)).await.is_empty(),
        "failed starts create no task"
    );
    let r = t
        .client
        .list_message_move_tasks()
        .source_arn(format!("{prefix}nope"))
        .send()
        .await;
    expect_error(
        "ListMessageMoveTasks with an unknown SourceArn",
        r,
        404,
        "ResourceNotFoundException",
        None,
    );

    // With one message per second and a frozen clock the task stays RUNNING.
    let handle = start_task(&t, &dlq_arn, None, Some(1)).await;
    let decoded: serde_json::Value = serde_json::from_slice(
        &STANDARD
            .decode(&handle)
            .expect("TaskHandle is standard base64"),
    )
    .expect("TaskHandle decodes to JSON");
    let task_id = decoded["taskId"].as_str().expect("taskId is a string");
    let parsed = uuid::Uuid::parse_str(task_id).expect("taskId is a UUID");
    assert_eq!(parsed.to_string(), task_id, "lower-case hyphenated UUID");
    let raw = String::from_utf8(STANDARD.decode(&handle).expect("base64")).expect("UTF-8");
    assert_eq!(
        raw,
        format!(r#"{{"taskId":"{task_id}","sourceArn":"{dlq_arn}"}}"#),
        "TaskHandle is base64 of exactly this JSON (§4)"
    );

    for destination in [None, Some(arn(&t, &src).await)] {
        let r = t
            .client
            .start_message_move_task()
            .source_arn(&dlq_arn)
            .set_destination_arn(destination)
            .send()
            .await;
        expect_error(
            "a second task while one runs",
            r,
            400,
            "InvalidParameterValue",
            Some(
                "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
            ),
        );
    }
    let running = latest_task(&t, &dlq_arn).await;
    assert_eq!(running.status(), Some("RUNNING"));
    assert_eq!(running.task_handle(), Some(handle.as_str()));
    assert_eq!(running.max_number_of_messages_per_second(), Some(1));

    // CancelMessageMoveTask errors (§5.5).
    let forged = |task_id: &str, source_arn: &str| {
        STANDARD.encode(format!(
            r#"{{"taskId":"{task_id}","sourceArn":"{source_arn}"}}"#
        ))
    };
    let r = t
        .client
        .cancel_message_move_task()
        .task_handle("not a handle!")
        .send()
        .await;
    expect_error(
        "Cancel with an undecodable handle",
        r,
        400,
        "InvalidParameterValue",
        Some("Value for parameter TaskHandle is invalid."),
    );
    let r = t
        .client
        .cancel_message_move_task()
        .task_handle(forged(task_id, &format!("{prefix}nope")))
        .send()
        .await;
    expect_error(
        "Cancel with an unknown source ARN in the handle",
        r,
        404,
        "ResourceNotFoundException",
        Some("The resource that you specified for the SourceArn parameter doesn't exist."),
    );
    let r = t
        .client
        .cancel_message_move_task()
        .task_handle(forged("6f0c3bd1-3c0e-4b4e-9a51-6d7fcb0a2f11", &dlq_arn))
        .send()
        .await;
    expect_error(
        "Cancel with an unknown task id",
        r,
        404,
        "ResourceNotFoundException",
        Some("Task does not exist."),
    );

    t.client
        .cancel_message_move_task()
        .task_handle(&handle)
        .send()
        .await
        .expect("CancelMessageMoveTask");
    // Once cancelled, a new task may start.
    let second = start_task(&t, &dlq_arn, None, Some(1)).await;
    assert_ne!(second, handle);
    t.client
        .cancel_message_move_task()
        .task_handle(&second)
        .send()
        .await
        .expect("CancelMessageMoveTask");
    t.shutdown().await;
}
