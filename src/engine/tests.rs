//! Engine layer, top: tests of an engine reopened on its data directory: the start-up scan across
//! its batches (`store/scan.rs`), and FIFO sequence numbers after a purge (`load.rs`); and the
//! sweep over idle queues (`handle.rs`).

/// Building the model from the store's rows (`load.rs`).
mod load {
    use std::sync::Arc;

    use crate::command::{
        Command, CreateQueue, MessageToSend, PurgeQueue, Reply, RequestContext, SendMessage,
        SendMessageResult,
    };
    use crate::engine::clock::{ManualClock, SeededIds};
    use crate::engine::handle::Engine;
    use crate::engine::options::EngineOptions;

    const URL: &str = "http://localhost:9324/000000000000/q.fifo";

    /// A durable engine whose clock stands still at the same millisecond on every opening.
    fn open(dir: &tempfile::TempDir) -> Engine {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let options = EngineOptions {
            data_dir: Some(dir.path().to_owned()),
            ..EngineOptions::default()
        };
        Engine::open(options, clock, Arc::new(SeededIds::new(1))).expect("the engine opens")
    }

    async fn run(e: &Engine, cmd: Command) -> Reply {
        let ctx = RequestContext::new("http://localhost:9324", e.default_scope());
        e.execute(&ctx, cmd).await.expect("the command succeeds")
    }

    async fn send(e: &Engine, dedup: &str) -> u128 {
        let c = SendMessage {
            queue_url: URL.into(),
            message: MessageToSend {
                message_body: "m".into(),
                message_group_id: Some("g".into()),
                message_deduplication_id: Some(dedup.into()),
                ..MessageToSend::default()
            },
        };
        let Reply::SendMessage(SendMessageResult {
            sequence_number: Some(n),
            ..
        }) = run(e, Command::SendMessage(c)).await
        else {
            panic!("a FIFO send answers a sequence number");
        };
        n.parse().expect("a number")
    }

    /// PurgeQueue removes every message and deduplication entry a restart would restore the
    /// last sequence number from; in the same millisecond, the next number is still higher.
    #[tokio::test]
    async fn sequence_numbers_keep_growing_after_a_purge_and_a_restart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let last = {
            let e = open(&dir);
            let create = CreateQueue {
                queue_name: "q.fifo".into(),
                attributes: [("FifoQueue".to_owned(), "true".to_owned())].into(),
                ..CreateQueue::default()
            };
            run(&e, Command::CreateQueue(create)).await;
            send(&e, "a").await;
            let last = send(&e, "b").await;
            let purge = PurgeQueue {
                queue_url: URL.into(),
            };
            run(&e, Command::PurgeQueue(purge)).await;
            e.shutdown();
            e.close().await;
            last
        };
        let e = open(&dir);
        let next = send(&e, "c").await;
        assert!(next > last, "{next} after {last}");
        e.shutdown();
        e.close().await;
    }
}

/// The start-up scan of the message tables (`store/scan.rs`).
mod scan {
    use std::sync::Arc;

    use crate::command::{
        Command, CreateQueue, MessageToSend, ReceiveMessage, Reply, RequestContext,
        SendMessageBatch, SendMessageBatchRequestEntry,
    };
    use crate::engine::clock::{ManualClock, SeededIds};
    use crate::engine::handle::Engine;
    use crate::engine::options::EngineOptions;
    use crate::engine::store::scan::BATCH;

    const BASE: &str = "http://localhost:9324";

    fn open(dir: &tempfile::TempDir, seed: u64) -> Engine {
        let options = EngineOptions {
            data_dir: Some(dir.path().to_owned()),
            body_cache_bytes: 0,
            ..EngineOptions::default()
        };
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        Engine::open(options, clock, Arc::new(SeededIds::new(seed))).expect("opens")
    }

    async fn run(e: &Engine, cmd: Command) -> Reply {
        let ctx = RequestContext::new(BASE, e.default_scope());
        e.execute(&ctx, cmd).await.expect("succeeds")
    }

    fn url(name: &str) -> String {
        format!("{BASE}/000000000000/{name}")
    }

    async fn fill(e: &Engine, name: &str, n: usize) {
        let queue_name = name.to_owned();
        run(
            e,
            Command::CreateQueue(CreateQueue {
                queue_name,
                ..CreateQueue::default()
            }),
        )
        .await;
        for start in (0..n).step_by(10) {
            let entries = (start..n.min(start + 10))
                .map(|i| SendMessageBatchRequestEntry {
                    id: format!("e{i}"),
                    message: MessageToSend {
                        message_body: format!("{name} {i}"),
                        ..MessageToSend::default()
                    },
                })
                .collect();
            let c = SendMessageBatch {
                queue_url: url(name),
                entries,
            };
            run(e, Command::SendMessageBatch(c)).await;
        }
    }

    async fn drain(e: &Engine, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let c = ReceiveMessage {
                queue_url: url(name),
                max_number_of_messages: Some(10),
                visibility_timeout: Some(600),
                ..ReceiveMessage::default()
            };
            let Reply::ReceiveMessage(r) = run(e, Command::ReceiveMessage(c)).await else {
                panic!("a receive result");
            };
            if r.messages.is_empty() {
                return out;
            }
            out.extend(r.messages.into_iter().map(|m| m.body));
        }
    }

    /// More rows than fit in a few batches, over two queues: a restart indexes every one, in
    /// order, each under its own queue.
    #[tokio::test]
    async fn a_restart_indexes_every_row_across_batches_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = 2 * BATCH + 17;
        {
            let e = open(&dir, 1);
            fill(&e, "big", n).await;
            fill(&e, "small", 3).await;
            e.shutdown();
            e.close().await;
        }
        let e = open(&dir, 2);
        let big = drain(&e, "big").await;
        let expected: Vec<String> = (0..n).map(|i| format!("big {i}")).collect();
        assert_eq!(big.len(), n, "every message is back once");
        assert!(big == expected, "in send order, with their own bodies");
        assert_eq!(drain(&e, "small").await, ["small 0", "small 1", "small 2"]);
    }
}

/// The sweep of idle queues (`Engine::sweep_some`). The engine is opened outside any runtime, so
/// it starts no background sweep that could run between a test's steps.
mod sweep {
    use std::sync::Arc;

    use crate::command::{Command, CreateQueue, MessageToSend, RequestContext, SendMessage};
    use crate::engine::clock::{ManualClock, SeededIds};
    use crate::engine::handle::{Engine, SWEEP_CHUNK};
    use crate::engine::options::EngineOptions;

    /// `n` queues that keep messages for 60 s, each holding one message sent now; and the clock.
    fn queues_with_one_message(n: usize) -> (Engine, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let e = Engine::open(
            EngineOptions::default(),
            clock.clone(),
            Arc::new(SeededIds::new(1)),
        )
        .expect("opens");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let ctx = RequestContext::new("http://localhost:9324", e.default_scope());
            for i in 0..n {
                let create = CreateQueue {
                    queue_name: format!("idle-{i}"),
                    attributes: vec![("MessageRetentionPeriod".into(), "60".into())],
                    ..CreateQueue::default()
                };
                e.execute(&ctx, Command::CreateQueue(create))
                    .await
                    .expect("created");
                let send = SendMessage {
                    queue_url: format!("http://localhost:9324/000000000000/idle-{i}"),
                    message: MessageToSend {
                        message_body: "old".into(),
                        ..MessageToSend::default()
                    },
                };
                e.execute(&ctx, Command::SendMessage(send))
                    .await
                    .expect("sent");
            }
        });
        (e, clock)
    }

    fn messages(e: &Engine) -> usize {
        e.queue_counts().iter().map(|c| c.visible).sum()
    }

    /// Expired messages leave even queues nobody reads, on both sides of every chunk boundary
    /// and in the last partial chunk.
    #[test]
    fn a_sweep_reaches_every_queue_across_its_chunks() {
        let n = SWEEP_CHUNK * 2 + 3;
        let (e, clock) = queues_with_one_message(n);
        e.sweep();
        assert_eq!(messages(&e), n, "nothing expired yet");
        clock.advance_ms(61_000);
        assert_eq!(messages(&e), n, "counted until swept");
        e.sweep();
        assert_eq!(messages(&e), 0, "every chunk was swept");
    }

    /// The background sweep visits a budget of queues each second and goes on from there.
    #[test]
    fn a_budgeted_sweep_goes_on_where_it_stopped() {
        let n = SWEEP_CHUNK * 2 + 3;
        let (e, clock) = queues_with_one_message(n);
        clock.advance_ms(61_000);
        let next = e.sweep_some(0, SWEEP_CHUNK + 1);
        assert!(next.is_some(), "stopped on its budget");
        assert_eq!(
            messages(&e),
            n - SWEEP_CHUNK - 1,
            "swept its budget, no more"
        );
        let next = e.sweep_some(next.expect("a cursor"), SWEEP_CHUNK + 1);
        assert_eq!(messages(&e), 1);
        assert_eq!(e.sweep_some(next.expect("a cursor"), SWEEP_CHUNK + 1), None);
        assert_eq!(messages(&e), 0, "the pass reached the last queue");
    }
}
