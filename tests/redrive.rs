//! Dead-letter queues and message move tasks through aws-sdk-sqs (GitHub issue #5):
//! RedrivePolicy and RedriveAllowPolicy validation, poison messages moving to the DLQ on
//! receive, ListDeadLetterSourceQueues, and StartMessageMoveTask / CancelMessageMoveTask /
//! ListMessageMoveTasks including rate limits, cancellation, failure and restarts.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock). Move tasks run in the background;
//! after moving the clock the tests wake the engine and poll (bounded, with short yields) until
//! the task has caught up. Nothing asserts a real duration. Expected texts come from
//! `../shared/reference/sqs-protocol.md` (§4, §5.5, §6.1, §6.10, §6.11).

mod common;

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesOutput;
use aws_sdk_sqs::types::{
    ListMessageMoveTasksResultEntry, Message, MessageAttributeValue, MessageSystemAttributeName,
    QueueAttributeName,
};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use common::{START_MS, TestServer, binary_attr, md5_of_attributes, only, string_attr, wire_error};
use localsqs::engine::ManualClock;

/// How long a background move task is given to catch up before a test gives up (hang guard
/// only; never asserted as a duration).
const CATCH_UP: Duration = Duration::from_secs(5);
/// The pause between two polls of a background task.
const POLL: Duration = Duration::from_millis(5);

/// Asserts that `res` failed with the given HTTP status, error code and (when given) message.
fn expect_error<T: Debug, E: ProvideErrorMetadata + Debug>(
    what: &str,
    res: Result<T, SdkError<E, HttpResponse>>,
    status: u16,
    code: &str,
    message: Option<&str>,
) {
    let err = match res {
        Ok(v) => panic!("{what}: expected {code}, got success {v:?}"),
        Err(e) => e,
    };
    let w = wire_error(&err);
    assert_eq!(w.status, status, "{what}: {w:?}");
    assert_eq!(w.code.as_deref(), Some(code), "{what}: {w:?}");
    if let Some(m) = message {
        assert_eq!(w.message.as_deref(), Some(m), "{what}: {w:?}");
    }
}

async fn arn(t: &TestServer, url: &str) -> String {
    t.queue_attr(url, QueueAttributeName::QueueArn).await
}

/// A RedrivePolicy in AWS's normalised form.
fn policy(dlq_arn: &str, max: u32) -> String {
    format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":{max}}}"#)
}

async fn set_attr(
    t: &TestServer,
    url: &str,
    name: QueueAttributeName,
    value: &str,
) -> Result<
    SetQueueAttributesOutput,
    SdkError<aws_sdk_sqs::operation::set_queue_attributes::SetQueueAttributesError, HttpResponse>,
> {
    t.client
        .set_queue_attributes()
        .queue_url(url)
        .attributes(name, value)
        .send()
        .await
}

async fn all_attributes(t: &TestServer, url: &str) -> HashMap<QueueAttributeName, String> {
    t.client
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("GetQueueAttributes All")
        .attributes
        .unwrap_or_default()
}

/// A short-poll receive with all system and message attributes.
async fn receive_full(t: &TestServer, url: &str, max: i32) -> Vec<Message> {
    t.client
        .receive_message()
        .queue_url(url)
        .max_number_of_messages(max)
        .wait_time_seconds(0)
        .message_attribute_names("All")
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("ReceiveMessage: {e:?}"))
        .messages
        .unwrap_or_default()
}

fn sys<'a>(m: &'a Message, name: &MessageSystemAttributeName) -> Option<&'a str> {
    m.attributes().and_then(|a| a.get(name)).map(String::as_str)
}

fn receive_count(m: &Message) -> &str {
    sys(m, &MessageSystemAttributeName::ApproximateReceiveCount)
        .expect("ApproximateReceiveCount requested")
}

fn sorted_bodies(msgs: &[Message]) -> Vec<String> {
    let mut b: Vec<String> = msgs
        .iter()
        .map(|m| m.body().expect("Body").to_owned())
        .collect();
    b.sort_unstable();
    b
}

async fn delete_all(t: &TestServer, url: &str, msgs: &[Message]) {
    for m in msgs {
        t.client
            .delete_message()
            .queue_url(url)
            .receipt_handle(m.receipt_handle().expect("ReceiptHandle"))
            .send()
            .await
            .expect("DeleteMessage");
    }
}

/// A source queue feeding `dlq_arn` that poisons quickly: VisibilityTimeout 0 and
/// maxReceiveCount 1 (one receive returns a message, the next moves it).
async fn quick_source(t: &TestServer, name: &str, dlq_arn: &str) -> String {
    t.create_queue(
        name,
        &[
            (QueueAttributeName::VisibilityTimeout, "0"),
            (QueueAttributeName::RedrivePolicy, &policy(dlq_arn, 1)),
        ],
    )
    .await
}

/// The attributes every poisoned message carries.
fn poison_attrs(body: &str) -> HashMap<String, MessageAttributeValue> {
    HashMap::from([
        ("origin".to_owned(), string_attr("String", body)),
        ("blob".to_owned(), binary_attr("Binary", &[0, 1, 2])),
    ])
}

/// Sends `bodies` to the quick source `src` and receives until all of them have moved to its
/// dead-letter queue. Returns body → MessageId.
async fn poison(t: &TestServer, src: &str, bodies: &[&str]) -> HashMap<String, String> {
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

async fn start_task(
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

async fn list_tasks(
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
async fn latest_task(t: &TestServer, source_arn: &str) -> ListMessageMoveTasksResultEntry {
    only(
        list_tasks(t, source_arn, None).await,
        "the most recent task",
    )
}

/// Polls the most recent task until `done` holds; every observation must satisfy
/// `invariant`. Hang-guarded by [`CATCH_UP`].
async fn wait_task(
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
async fn wait_moved(t: &TestServer, source_arn: &str, n: i64) -> ListMessageMoveTasksResultEntry {
    wait_task(
        t,
        source_arn,
        &format!("{n} moved"),
        |e| e.approximate_number_of_messages_moved() == n,
        |e| e.approximate_number_of_messages_moved() <= n,
    )
    .await
}

async fn wait_status(
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
async fn assert_settled(t: &TestServer, source_arn: &str, moved: i64, queues: &[(&str, u64)]) {
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

/// RedrivePolicy validation and normalisation (§5.5, §6.1, §6.10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_policy_validation() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t.create_queue("src", &[]).await;

    let p = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}"}}"#);
    expect_error(
        "RedrivePolicy without maxReceiveCount",
        set_attr(&t, &src, QueueAttributeName::RedrivePolicy, &p).await,
        400,
        "InvalidParameterValue",
        Some(&format!(
            "Value {p} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: maxReceiveCount."
        )),
    );
    for n in [0, 1001] {
        expect_error(
            &format!("maxReceiveCount {n}"),
            set_attr(
                &t,
                &src,
                QueueAttributeName::RedrivePolicy,
                &policy(&dlq_arn, n),
            )
            .await,
            400,
            "InvalidParameterValue",
            None,
        );
    }
    let missing_arn = format!(
        "{}nope",
        dlq_arn.strip_suffix("dlq").expect("ARN ends in dlq")
    );
    expect_error(
        "RedrivePolicy naming a queue that does not exist",
        set_attr(
            &t,
            &src,
            QueueAttributeName::RedrivePolicy,
            &policy(&missing_arn, 3),
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );
    assert!(
        !all_attributes(&t, &src)
            .await
            .contains_key(&QueueAttributeName::RedrivePolicy),
        "failed attempts set nothing"
    );

    // A FIFO source cannot use a standard dead-letter queue.
    let r = t
        .client
        .create_queue()
        .queue_name("src.fifo")
        .attributes(QueueAttributeName::FifoQueue, "true")
        .attributes(QueueAttributeName::RedrivePolicy, policy(&dlq_arn, 3))
        .send()
        .await;
    expect_error(
        "FIFO source with a standard DLQ (CreateQueue)",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let fifo_src = t
        .create_queue("src2.fifo", &[(QueueAttributeName::FifoQueue, "true")])
        .await;
    expect_error(
        "FIFO source with a standard DLQ (SetQueueAttributes)",
        set_attr(
            &t,
            &fifo_src,
            QueueAttributeName::RedrivePolicy,
            &policy(&dlq_arn, 3),
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );

    // Nor can a standard source use a FIFO dead-letter queue.
    let fifo_dlq = t
        .create_queue("dlq.fifo", &[(QueueAttributeName::FifoQueue, "true")])
        .await;
    let fifo_dlq_arn = arn(&t, &fifo_dlq).await;
    expect_error(
        "standard source with a FIFO DLQ",
        set_attr(
            &t,
            &src,
            QueueAttributeName::RedrivePolicy,
            &policy(&fifo_dlq_arn, 3),
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );
    set_attr(
        &t,
        &fifo_src,
        QueueAttributeName::RedrivePolicy,
        &policy(&fifo_dlq_arn, 3),
    )
    .await
    .expect("FIFO source with a FIFO DLQ");

    // maxReceiveCount as a string is accepted; the policy reads back normalised.
    set_attr(
        &t,
        &src,
        QueueAttributeName::RedrivePolicy,
        &format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"3"}}"#),
    )
    .await
    .expect("maxReceiveCount \"3\" is accepted");
    assert_eq!(
        t.queue_attr(&src, QueueAttributeName::RedrivePolicy).await,
        policy(&dlq_arn, 3)
    );
    set_attr(
        &t,
        &src,
        QueueAttributeName::RedrivePolicy,
        &format!("{{ \"maxReceiveCount\": 1000,\n \"deadLetterTargetArn\": \"{dlq_arn}\" }}"),
    )
    .await
    .expect("maxReceiveCount 1000 with other key order and whitespace");
    assert_eq!(
        t.queue_attr(&src, QueueAttributeName::RedrivePolicy).await,
        policy(&dlq_arn, 1000)
    );

    // "" removes the policy.
    set_attr(&t, &src, QueueAttributeName::RedrivePolicy, "")
        .await
        .expect("RedrivePolicy \"\"");
    assert!(
        !all_attributes(&t, &src)
            .await
            .contains_key(&QueueAttributeName::RedrivePolicy),
        "the empty string removes RedrivePolicy"
    );
    let sources = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues");
    assert!(sources.queue_urls().is_empty(), "{sources:?}");

    // CreateQueue with a policy, minimum count.
    let created = t
        .create_queue(
            "src3",
            &[(QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 1))],
        )
        .await;
    assert_eq!(
        t.queue_attr(&created, QueueAttributeName::RedrivePolicy)
            .await,
        policy(&dlq_arn, 1)
    );
    t.shutdown().await;
}

/// A standard queue's poison message is returned maxReceiveCount times, then moves to the DLQ
/// on the next receive, keeping id, body, attributes, timestamps and receive count (§6.10,
/// G-26).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_poison_message_moves_after_max_receive_count() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t
        .create_queue(
            "src",
            &[
                (QueueAttributeName::VisibilityTimeout, "0"),
                (QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 3)),
            ],
        )
        .await;
    let src_arn = arn(&t, &src).await;
    let attrs = HashMap::from([
        ("MyAttribute".to_owned(), string_attr("String", "foobar")),
        ("bin".to_owned(), binary_attr("Binary", &[9, 8, 7])),
    ]);
    let sent = t
        .client
        .send_message()
        .queue_url(&src)
        .message_body("poison")
        .set_message_attributes(Some(attrs.clone()))
        .send()
        .await
        .expect("SendMessage");
    let id = sent.message_id().expect("MessageId").to_owned();
    let attr_md5 = sent
        .md5_of_message_attributes()
        .expect("MD5OfMessageAttributes")
        .to_owned();
    assert_eq!(attr_md5, md5_of_attributes(&attrs));

    t.advance_secs(5);
    let first_receive_ms = START_MS + 5000;
    for n in 1..=3 {
        let m = only(t.receive(&src, 10).await, &format!("receive {n}"));
        assert_eq!(m.message_id(), Some(id.as_str()));
        assert_eq!(receive_count(&m), n.to_string());
        t.advance_secs(1);
    }
    assert!(
        t.receive(&src, 10).await.is_empty(),
        "receive 4 moves the message instead of returning it"
    );
    assert_eq!(t.counts(&src).await, (0, 0, 0));
    assert_eq!(t.counts(&dlq).await, (1, 0, 0));

    t.advance_secs(10);
    let m = only(receive_full(&t, &dlq, 10).await, "the message in the DLQ");
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("poison"));
    assert_eq!(m.md5_of_message_attributes(), Some(attr_md5.as_str()));
    assert_eq!(
        md5_of_attributes(m.message_attributes().expect("MessageAttributes")),
        attr_md5
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::SentTimestamp),
        Some(START_MS.to_string().as_str()),
        "SentTimestamp is kept"
    );
    assert_eq!(
        sys(
            &m,
            &MessageSystemAttributeName::ApproximateFirstReceiveTimestamp
        ),
        Some(first_receive_ms.to_string().as_str()),
        "ApproximateFirstReceiveTimestamp is kept"
    );
    assert_eq!(
        receive_count(&m),
        "4",
        "the receive count is not reset: maxReceiveCount + 1"
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(src_arn.as_str())
    );
    t.shutdown().await;
}

/// A FIFO poison message moves to the FIFO DLQ after maxReceiveCount receives, and its group
/// in the source is free again afterwards (§6.10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_poison_message_moves_and_frees_its_group() {
    let t = TestServer::start().await;
    let dlq = t
        .create_queue("dlq.fifo", &[(QueueAttributeName::FifoQueue, "true")])
        .await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t
        .create_queue(
            "src.fifo",
            &[
                (QueueAttributeName::FifoQueue, "true"),
                (QueueAttributeName::ContentBasedDeduplication, "true"),
                (QueueAttributeName::VisibilityTimeout, "30"),
                (QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 3)),
            ],
        )
        .await;
    let src_arn = arn(&t, &src).await;
    let mut ids = HashMap::new();
    for (body, group) in [("poison", "g"), ("next", "g"), ("other", "h")] {
        let out = t
            .client
            .send_message()
            .queue_url(&src)
            .message_body(body)
            .message_group_id(group)
            .message_attributes("MyAttribute", string_attr("String", "foobar"))
            .send()
            .await
            .expect("SendMessage");
        ids.insert(body, out.message_id().expect("MessageId").to_owned());
    }
    for n in 1..=3 {
        let m = only(t.receive(&src, 1).await, &format!("receive {n}"));
        assert_eq!(m.body(), Some("poison"), "receive {n}");
        assert_eq!(receive_count(&m), n.to_string());
        t.advance_secs(31);
    }
    // The next receives move the poison message and hand out the rest; group g is free again.
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.extend(t.receive(&src, 10).await);
    }
    let bodies: Vec<&str> = seen.iter().filter_map(Message::body).collect();
    assert!(
        !bodies.contains(&"poison"),
        "poison is not returned a 4th time: {bodies:?}"
    );
    assert!(
        bodies.contains(&"next"),
        "the next message of group g is receivable after the move: {bodies:?}"
    );
    assert!(bodies.contains(&"other"), "{bodies:?}");

    let m = only(receive_full(&t, &dlq, 10).await, "the message in the DLQ");
    assert_eq!(m.message_id(), Some(ids["poison"].as_str()));
    assert_eq!(m.body(), Some("poison"));
    assert_eq!(receive_count(&m), "4");
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(src_arn.as_str())
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::MessageGroupId),
        Some("g")
    );
    assert_eq!(
        m.md5_of_message_attributes(),
        Some("adb59cd4678ea5a855436b949cd07ab6"),
        "§6.4 vector for MyAttribute=foobar"
    );
    t.shutdown().await;
}

/// RedriveAllowPolicy on the DLQ decides which sources may name it (§6.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_allow_policy() {
    let t = TestServer::start().await;
    let dlq = t
        .create_queue(
            "dlq",
            &[(
                QueueAttributeName::RedriveAllowPolicy,
                r#"{"redrivePermission":"denyAll"}"#,
            )],
        )
        .await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t.create_queue("src", &[]).await;
    let src_arn = arn(&t, &src).await;
    let other = t.create_queue("other", &[]).await;

    expect_error(
        "denyAll",
        set_attr(
            &t,
            &src,
            QueueAttributeName::RedrivePolicy,
            &policy(&dlq_arn, 3),
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t
        .client
        .create_queue()
        .queue_name("created")
        .attributes(QueueAttributeName::RedrivePolicy, policy(&dlq_arn, 3))
        .send()
        .await;
    expect_error(
        "denyAll (CreateQueue)",
        r,
        400,
        "InvalidParameterValue",
        None,
    );

    let by_queue = format!(r#"{{"redrivePermission":"byQueue","sourceQueueArns":["{src_arn}"]}}"#);
    set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &by_queue)
        .await
        .expect("byQueue");
    let stored: serde_json::Value = serde_json::from_str(
        &t.queue_attr(&dlq, QueueAttributeName::RedriveAllowPolicy)
            .await,
    )
    .expect("RedriveAllowPolicy is JSON");
    assert_eq!(
        stored,
        serde_json::from_str::<serde_json::Value>(&by_queue).expect("JSON")
    );
    set_attr(
        &t,
        &src,
        QueueAttributeName::RedrivePolicy,
        &policy(&dlq_arn, 3),
    )
    .await
    .expect("a listed source may use the DLQ");
    expect_error(
        "byQueue, source not listed",
        set_attr(
            &t,
            &other,
            QueueAttributeName::RedrivePolicy,
            &policy(&dlq_arn, 3),
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );

    set_attr(
        &t,
        &dlq,
        QueueAttributeName::RedriveAllowPolicy,
        r#"{"redrivePermission":"allowAll"}"#,
    )
    .await
    .expect("allowAll");
    set_attr(
        &t,
        &other,
        QueueAttributeName::RedrivePolicy,
        &policy(&dlq_arn, 3),
    )
    .await
    .expect("allowAll lets any source use the DLQ");

    expect_error(
        "unknown redrivePermission",
        set_attr(
            &t,
            &dlq,
            QueueAttributeName::RedriveAllowPolicy,
            r#"{"redrivePermission":"sometimes"}"#,
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );
    let arns = |n: usize| -> String {
        let list: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    "\"{}{i}\"",
                    src_arn.strip_suffix("src").expect("ARN ends in src")
                )
            })
            .collect();
        format!(
            r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
            list.join(",")
        )
    };
    expect_error(
        "byQueue with 11 ARNs",
        set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &arns(11)).await,
        400,
        "InvalidParameterValue",
        None,
    );
    set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &arns(10))
        .await
        .expect("byQueue with 10 ARNs");
    t.shutdown().await;
}

/// ListDeadLetterSourceQueues returns the sources' URLs, with MaxResults/NextToken paging
/// (§6.10, §6.12, G-9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dead_letter_source_queues() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let dlq2 = t.create_queue("dlq2", &[]).await;
    let dlq2_arn = arn(&t, &dlq2).await;
    let mut expected = HashSet::new();
    for i in 0..5 {
        let url = t
            .create_queue(
                &format!("source-{i}"),
                &[(QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 3))],
            )
            .await;
        expected.insert(url);
    }
    let elsewhere = t
        .create_queue(
            "elsewhere",
            &[(QueueAttributeName::RedrivePolicy, &policy(&dlq2_arn, 3))],
        )
        .await;
    let plain = t.create_queue("plain", &[]).await;

    let all = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues");
    let got: HashSet<String> = all.queue_urls().iter().cloned().collect();
    assert_eq!(got, expected);
    assert_eq!(all.queue_urls().len(), 5);
    assert!(all.next_token().is_none(), "no MaxResults, no NextToken");

    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..10 {
        let page = t
            .client
            .list_dead_letter_source_queues()
            .queue_url(&dlq)
            .max_results(2)
            .set_next_token(token.clone())
            .send()
            .await
            .expect("ListDeadLetterSourceQueues page");
        pages.push(page.queue_urls().to_vec());
        token = page.next_token().map(str::to_owned);
        if token.is_none() {
            break;
        }
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1], "pages of 2, the last without NextToken");
    let paged: Vec<String> = pages.concat();
    let paged_set: HashSet<String> = paged.iter().cloned().collect();
    assert_eq!(paged_set.len(), paged.len(), "no URL twice: {paged:?}");
    assert_eq!(paged_set, expected);

    let other = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq2)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues dlq2");
    assert_eq!(other.queue_urls(), [elsewhere]);
    let none = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&plain)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues of a queue nobody uses");
    assert!(none.queue_urls().is_empty());
    t.shutdown().await;
}

/// StartMessageMoveTask errors, the TaskHandle format, and one active task per source (§4,
/// §5.5, §6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_task_errors_and_handle_format() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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

/// Without DestinationArn, messages go back to their original queues with a fresh receive
/// count; the task completes; ListMessageMoveTasks lists most recent first, with a TaskHandle
/// only while RUNNING and no DestinationArn (§6.11).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_back_to_the_source_queues() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let s1 = quick_source(&t, "s1", &dlq_arn).await;
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
            assert_eq!(
                m.message_id(),
                Some(ids[body].as_str()),
                "{body} keeps its id"
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
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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
        assert_eq!(m.message_id(), Some(ids[body].as_str()));
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
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = quick_source(&t, "src", &dlq_arn).await;
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
    let got_ids: HashSet<&str> = got.iter().filter_map(Message::message_id).collect();
    let expected: HashSet<&str> = ids.values().map(String::as_str).collect();
    assert_eq!(got_ids, expected);
    t.shutdown().await;
}
