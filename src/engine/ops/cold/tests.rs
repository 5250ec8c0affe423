//! Engine layer, ops: tests of records that leave memory: read back on receive, peek, inspect,
//! delete by id, moves to a dead-letter queue and move tasks; the cache's bound; a restart
//! that loads no bodies.

use std::sync::Arc;

use crate::command::{
    Command, CreateQueue, DeleteMessage, MessageAttributeValue, MessageToSend, PurgeQueue,
    ReceiveMessage, Reply, RequestContext, SendMessage, StartMessageMoveTask,
};
use crate::engine::clock::{Clock, ManualClock, SeededIds};
use crate::engine::handle::Engine;
use crate::engine::options::EngineOptions;

const URL: &str = "http://localhost:9324/000000000000/q";
const DLQ_URL: &str = "http://localhost:9324/000000000000/dlq";

fn open(dir: &tempfile::TempDir, cache: usize, seed: u64) -> (Engine, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_700_000_000_000));
    let options = EngineOptions {
        data_dir: Some(dir.path().to_owned()),
        body_cache_bytes: cache,
        ..EngineOptions::default()
    };
    let engine = Engine::open(options, clock.clone(), Arc::new(SeededIds::new(seed)))
        .expect("the engine opens");
    (engine, clock)
}

async fn run(e: &Engine, cmd: Command) -> Reply {
    let ctx = RequestContext::new("http://localhost:9324", e.default_scope());
    e.execute(&ctx, cmd).await.expect("the command succeeds")
}

async fn create(e: &Engine, name: &str, attributes: &[(&str, &str)]) {
    let attributes = attributes
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    run(
        e,
        Command::CreateQueue(CreateQueue {
            queue_name: name.into(),
            attributes,
            ..CreateQueue::default()
        }),
    )
    .await;
}

fn body(i: usize) -> String {
    format!("body {i} {}", "x".repeat(i % 50))
}

/// Sends `n` messages with an attribute; answers their ids in order.
async fn send(e: &Engine, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let mut c = SendMessage {
            queue_url: URL.into(),
            message: MessageToSend {
                message_body: body(i),
                ..MessageToSend::default()
            },
        };
        c.message.message_attributes.insert(
            "n".into(),
            MessageAttributeValue::string("Number", &i.to_string()),
        );
        let Reply::SendMessage(r) = run(e, Command::SendMessage(c)).await else {
            panic!("a send result");
        };
        ids.push(r.message_id);
    }
    ids
}

/// Receives everything receivable (visibility 30 s), in batches of 10.
async fn receive_all(e: &Engine, url: &str) -> Vec<crate::command::Message> {
    let mut out = Vec::new();
    loop {
        let c = ReceiveMessage {
            queue_url: url.into(),
            max_number_of_messages: Some(10),
            message_attribute_names: vec!["All".into()],
            message_system_attribute_names: vec!["All".into()],
            visibility_timeout: Some(30),
            ..ReceiveMessage::default()
        };
        let Reply::ReceiveMessage(r) = run(e, Command::ReceiveMessage(c)).await else {
            panic!("a receive result");
        };
        if r.messages.is_empty() {
            return out;
        }
        out.extend(r.messages);
    }
}

/// Every received message has its own body and attributes.
fn check_bodies(ids: &[String], got: &[crate::command::Message]) {
    assert_eq!(got.len(), ids.len());
    for m in got {
        let i = own_body(ids, m);
        assert_eq!(
            m.message_attributes["n"].string_value.as_deref(),
            Some(i.to_string().as_str())
        );
        assert!(m.md5_of_message_attributes.is_some());
    }
}

/// Checks that a received message carries the body sent with its id; answers the send's index.
fn own_body(ids: &[String], m: &crate::command::Message) -> usize {
    let i = ids
        .iter()
        .position(|id| *id == m.message_id)
        .expect("a sent id");
    assert_eq!(m.body, body(i));
    i
}

#[tokio::test]
async fn records_evicted_from_memory_are_read_back_on_receive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = open(&dir, 0, 1);
    create(&e, "q", &[]).await;
    let ids = send(&e, 40).await;
    // Each send finds the previous one committed, so at most the latest record is held.
    assert!(
        e.cached_record_bytes() < 1024,
        "{}",
        e.cached_record_bytes()
    );
    let got = receive_all(&e, URL).await;
    check_bodies(&ids, &got);
    for m in &got {
        let c = DeleteMessage {
            queue_url: URL.into(),
            receipt_handle: m.receipt_handle.clone(),
        };
        run(&e, Command::DeleteMessage(c)).await;
    }
    assert!(receive_all(&e, URL).await.is_empty());
}

#[tokio::test]
async fn the_cache_holds_at_most_its_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let budget = 4096;
    let (e, _) = open(&dir, budget, 2);
    create(&e, "q", &[]).await;
    let mut most = 0;
    for _ in 0..10 {
        send(&e, 10).await;
        most = most.max(e.cached_record_bytes());
        assert!(e.cached_record_bytes() <= budget);
    }
    assert!(most > budget / 2, "the cache is used: {most}");
    assert_eq!(receive_all(&e, URL).await.len(), 100);
}

#[tokio::test]
async fn a_restart_loads_no_bodies_and_reads_them_when_needed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = {
        let (e, _) = open(&dir, 32 << 20, 3);
        create(&e, "q", &[]).await;
        let ids = send(&e, 30).await;
        assert!(
            e.cached_record_bytes() > 0,
            "everything is held before the restart"
        );
        e.shutdown();
        e.close().await;
        ids
    };
    let (e, _) = open(&dir, 32 << 20, 4);
    assert_eq!(
        e.cached_record_bytes(),
        0,
        "no record is loaded at start-up"
    );
    let peeked = e
        .peek(&e.default_scope(), URL, false, false)
        .expect("peeks");
    check_bodies(&ids, &peeked);
    let (total, page) = e
        .inspect(&e.default_scope(), URL, None, Some(&ids[7]), 0, 10)
        .expect("inspects");
    assert_eq!((total, page.len()), (1, 1));
    assert_eq!(page[0].message.body, body(7));
    assert!(
        e.delete_by_id(&e.default_scope(), URL, &ids[3])
            .await
            .expect("deletes")
    );
    let got = receive_all(&e, URL).await;
    assert_eq!(got.len(), 29);
    assert!(got.iter().all(|m| m.message_id != ids[3]));
    for m in &got {
        own_body(ids.as_slice(), m);
    }
}

#[tokio::test]
async fn purged_and_deleted_cold_messages_are_never_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = open(&dir, 0, 5);
    create(&e, "q", &[]).await;
    let ids = send(&e, 20).await;
    assert!(
        e.delete_by_id(&e.default_scope(), URL, &ids[0])
            .await
            .expect("deletes")
    );
    assert!(
        !e.delete_by_id(&e.default_scope(), URL, &ids[0])
            .await
            .expect("deletes")
    );
    run(
        &e,
        Command::PurgeQueue(PurgeQueue {
            queue_url: URL.into(),
        }),
    )
    .await;
    assert!(receive_all(&e, URL).await.is_empty());
    assert!(
        e.peek(&e.default_scope(), URL, true, true)
            .expect("peeks")
            .is_empty()
    );
    // Sent after the purge, evicted, and read back: the new messages only.
    let ids = send(&e, 5).await;
    check_bodies(&ids, &receive_all(&e, URL).await);
}

#[tokio::test]
async fn cold_messages_move_to_the_dead_letter_queue_with_their_bodies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, clock) = open(&dir, 0, 6);
    create(&e, "dlq", &[]).await;
    let policy =
        r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}"#;
    create(&e, "q", &[("RedrivePolicy", policy)]).await;
    let ids = send(&e, 12).await;
    check_bodies(&ids, &receive_all(&e, URL).await);
    clock.advance_ms(31_000);
    // Past maxReceiveCount: each receive moves them instead.
    assert!(receive_all(&e, URL).await.is_empty());
    let moved = receive_all(&e, DLQ_URL).await;
    check_bodies(&ids, &moved);
    assert!(moved.iter().all(|m| {
        m.attributes
            .iter()
            .any(|(k, v)| k == "DeadLetterQueueSourceArn" && v.ends_with(":q"))
    }));
    // A move task back to the source reads each message's source from its (cold) record.
    clock.advance_ms(31_000);
    let c = StartMessageMoveTask {
        source_arn: "arn:aws:sqs:us-east-1:000000000000:dlq".into(),
        ..StartMessageMoveTask::default()
    };
    run(&e, Command::StartMessageMoveTask(c)).await;
    let mut back = Vec::new();
    for _ in 0..200 {
        back.extend(receive_all(&e, URL).await);
        if back.len() >= ids.len() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // Redriven messages are new messages, with new ids: their attribute `n` names the send.
    let mut sends: Vec<usize> = back
        .iter()
        .map(|m| {
            assert!(!ids.contains(&m.message_id), "a new id");
            let i: usize = m.message_attributes["n"]
                .string_value
                .as_deref()
                .and_then(|n| n.parse().ok())
                .expect("attribute n");
            assert_eq!(m.body, body(i), "its own body");
            i
        })
        .collect();
    sends.sort_unstable();
    assert_eq!(sends, (0..ids.len()).collect::<Vec<_>>());
}

/// A receive takes messages under the lock and reads their records after it: a message
/// deleted in between (here by id, from the console) is left out of the answer, and the
/// others keep their own bodies.
#[tokio::test]
async fn a_message_deleted_between_pick_and_read_is_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, clock) = open(&dir, 0, 7);
    create(&e, "q", &[]).await;
    let ids = send(&e, 6).await;
    let c = ReceiveMessage {
        queue_url: URL.into(),
        max_number_of_messages: Some(10),
        message_attribute_names: vec!["All".into()],
        ..ReceiveMessage::default()
    };
    let opts = super::super::poll::receive_options(&c).expect("valid options");
    let (picked, commit) = {
        let mut reg = e.lock();
        let id = e
            .resolve(&reg, &e.default_scope(), URL)
            .expect("the queue exists");
        let mut ops = Vec::new();
        let now = clock.now_ms();
        let picked = e
            .try_receive(&mut reg, id, &c, opts, now, &mut ops)
            .expect("receives");
        (picked, e.submit_puts(&mut reg, ops))
    };
    commit.wait().await.expect("commits");
    assert!(
        e.delete_by_id(&e.default_scope(), URL, &ids[2])
            .await
            .expect("deletes")
    );
    let got = e.complete(picked, &c);
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|m| m.message_id != ids[2]));
    for m in &got {
        own_body(ids.as_slice(), m);
    }
}
