//! The system under test: a real `Engine` driven through `Engine::execute` with a
//! `ManualClock` and `SeededIds`, in memory or on a temporary data directory that it can close
//! and open again. After each clock move it runs one retention sweep, as the background
//! sweeper would, so that expiry does not depend on which queue was looked at last.

use std::sync::Arc;

use localsqs::command::{Command, CreateQueue, Message, Reply, RequestContext};
use localsqs::engine::{Engine, EngineOptions, ManualClock, SeededIds};
use localsqs::error::SqsResult;
use tempfile::TempDir;

use super::ops::{QUEUES, Setup};

/// Where every run's clock starts (2023-11-14T22:13:20Z).
pub const START_MS: u64 = 1_700_000_000_000;
/// The base of queue URLs.
pub const BASE_URL: &str = "http://localhost:9324";

/// The queue URL of a queue name.
pub fn url(name: &str) -> String {
    format!("{BASE_URL}/000000000000/{name}")
}

/// The ARN of a queue name.
pub fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{name}")
}

/// The engine, its clock and, for a durable run, its data directory.
pub struct Sut {
    engine: Engine,
    clock: Arc<ManualClock>,
    dir: Option<TempDir>,
    seed: u64,
    opens: u64,
}

fn open(clock: &Arc<ManualClock>, dir: Option<&TempDir>, seed: u64) -> Engine {
    let options = EngineOptions {
        data_dir: dir.map(|d| d.path().to_owned()),
        // A durable engine keeps only this many bytes of message records in memory and reads
        // the rest back from the file: none at all, or a few, so that runs exercise records
        // read back (and the moves between memory and disk) against the model.
        body_cache_bytes: if seed.is_multiple_of(2) { 0 } else { 1 << 10 },
        ..EngineOptions::default()
    };
    // A restarted process draws other ids: never the same seed twice in one run.
    Engine::open(options, clock.clone(), Arc::new(SeededIds::new(seed)))
        .unwrap_or_else(|e| panic!("the engine opens: {e}"))
}

impl Sut {
    /// A fresh engine (durable when `durable`) with the queues of `setup`.
    pub async fn start(setup: &Setup, durable: bool, seed: u64) -> Sut {
        let clock = Arc::new(ManualClock::new(START_MS));
        let dir = durable.then(|| tempfile::tempdir().expect("a temporary directory"));
        let engine = open(&clock, dir.as_ref(), seed);
        let sut = Sut {
            engine,
            clock,
            dir,
            seed,
            opens: 1,
        };
        // Dead-letter queues first: a RedrivePolicy must name an existing queue.
        for q in [1, 0, 3, 2] {
            let s = &setup.queues[q];
            let mut attributes = vec![
                ("VisibilityTimeout".to_owned(), s.visibility_s.to_string()),
                ("DelaySeconds".to_owned(), s.delay_s.to_string()),
                (
                    "MessageRetentionPeriod".to_owned(),
                    s.retention_s.to_string(),
                ),
            ];
            if s.fifo {
                attributes.push(("FifoQueue".into(), "true".into()));
                attributes.push((
                    "ContentBasedDeduplication".into(),
                    s.content_based.to_string(),
                ));
            }
            if let Some(max) = s.max_receives {
                let dlq = arn(setup.queues[q + 1].name);
                let policy =
                    format!(r#"{{"deadLetterTargetArn":"{dlq}","maxReceiveCount":{max}}}"#);
                attributes.push(("RedrivePolicy".into(), policy));
            }
            let created = sut
                .exec(Command::CreateQueue(CreateQueue {
                    queue_name: s.name.to_owned(),
                    attributes,
                    tags: Vec::new(),
                }))
                .await;
            assert!(created.is_ok(), "CreateQueue {}: {created:?}", s.name);
        }
        assert_eq!(setup.queues.len(), QUEUES);
        sut
    }

    /// Runs one command.
    pub async fn exec(&self, cmd: Command) -> SqsResult<Reply> {
        let ctx = RequestContext::new(BASE_URL, self.engine.default_scope());
        self.engine.execute(&ctx, cmd).await
    }

    /// Moves the clock, then sweeps expired messages as the background sweeper would.
    pub fn advance(&self, ms: u64) {
        self.clock.advance_ms(ms);
        self.engine.sweep();
        self.engine.wake_all();
    }

    /// A queue's messages in queue order, without changing them: ready ones, plus in-flight
    /// and delayed ones as asked.
    pub fn peek(&self, name: &str, in_flight: bool, delayed: bool) -> Vec<Message> {
        self.engine
            .peek(&self.engine.default_scope(), &url(name), in_flight, delayed)
            .unwrap_or_else(|e| panic!("peek {name}: {e:?}"))
    }

    /// Closes the engine and opens it again on the same data directory (a no-op in memory).
    pub async fn reopen(&mut self) {
        let Some(dir) = &self.dir else {
            return;
        };
        self.engine.shutdown();
        self.engine.close().await;
        self.engine = open(&self.clock, Some(dir), self.seed.wrapping_add(self.opens));
        self.opens += 1;
    }

    /// Stops the engine and removes its data directory.
    pub async fn finish(self) {
        self.engine.shutdown();
        self.engine.close().await;
        drop(self.dir);
    }
}
