//! The server's path without the sockets: `wire::decode`, then, for a request that decodes,
//! `Engine::execute` on a fresh in-memory engine holding a few queues and messages, then
//! `wire::encode`. Every step's output is checked: a rejection is a well-formed AWS error, an
//! answer parses, and nothing is ever a 5xx.

use std::cell::RefCell;
use std::sync::Arc;

use localsqs::command::{
    Command, CreateQueue, MessageToSend, ReceiveMessage, Reply, RequestContext, SendMessage,
};
use localsqs::engine::{Engine, EngineOptions, ManualClock, SeededIds};
use localsqs::wire::{self, WireRequest, WireResponse};

use super::check::{assert_answer, assert_error};
use super::strategies::{BASE_URL, FIFO_HANDLE, HANDLE};

thread_local! {
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

/// Runs a future on this thread's runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    RUNTIME.with(|rt| {
        let mut rt = rt.borrow_mut();
        let rt = rt.get_or_insert_with(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
        });
        rt.block_on(f)
    })
}

/// A fresh engine with queues `fuzz` (redriving to `dlq` after 2 receives), `dlq`,
/// `fuzz.fifo` (content-based, redriving to `dlq.fifo`) and `dlq.fifo`, a message in flight
/// on each source queue and one waiting, and the live receipt handles of the two in flight.
pub struct Pipeline {
    engine: Engine,
    /// A live receipt handle of `fuzz`.
    pub handle: String,
    /// A live receipt handle of `fuzz.fifo`.
    pub fifo_handle: String,
}

fn ctx(engine: &Engine) -> RequestContext {
    RequestContext::new(BASE_URL, engine.default_scope())
}

fn url(name: &str) -> String {
    format!("{BASE_URL}/000000000000/{name}")
}

fn arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{name}")
}

impl Pipeline {
    /// Sets up the engine (the same way every time: the clock and ids are fixed).
    pub fn new() -> Pipeline {
        block_on(async {
            let engine = Engine::open(
                EngineOptions::default(),
                Arc::new(ManualClock::new(1_700_000_000_000)),
                Arc::new(SeededIds::new(7)),
            )
            .expect("engine opens");
            let pairs = |v: &[(&str, String)]| -> Vec<(String, String)> {
                v.iter()
                    .map(|(k, x)| ((*k).to_owned(), x.clone()))
                    .collect()
            };
            let policy = |dlq: &str| {
                format!(
                    r#"{{"deadLetterTargetArn":"{}","maxReceiveCount":2}}"#,
                    arn(dlq)
                )
            };
            let fifo = [("FifoQueue", "true".to_owned())];
            let queues = [
                ("dlq", pairs(&[])),
                ("fuzz", pairs(&[("RedrivePolicy", policy("dlq"))])),
                ("dlq.fifo", pairs(&fifo)),
                (
                    "fuzz.fifo",
                    pairs(&[
                        ("FifoQueue", "true".to_owned()),
                        ("ContentBasedDeduplication", "true".to_owned()),
                        ("RedrivePolicy", policy("dlq.fifo")),
                    ]),
                ),
            ];
            for (name, attributes) in queues {
                let cmd = Command::CreateQueue(CreateQueue {
                    queue_name: name.to_owned(),
                    attributes,
                    tags: Vec::new(),
                });
                engine
                    .execute(&ctx(&engine), cmd)
                    .await
                    .expect("queue created");
            }
            let mut handles = Vec::new();
            for (name, group) in [("fuzz", None), ("fuzz.fifo", Some("g1"))] {
                for body in ["one", "two"] {
                    let cmd = Command::SendMessage(SendMessage {
                        queue_url: url(name),
                        message: MessageToSend {
                            message_body: body.to_owned(),
                            message_group_id: group.map(str::to_owned),
                            ..MessageToSend::default()
                        },
                    });
                    engine.execute(&ctx(&engine), cmd).await.expect("sent");
                }
                let cmd = Command::ReceiveMessage(ReceiveMessage {
                    queue_url: url(name),
                    wait_time_seconds: Some(0),
                    ..ReceiveMessage::default()
                });
                let Ok(Reply::ReceiveMessage(r)) = engine.execute(&ctx(&engine), cmd).await else {
                    panic!("receive failed");
                };
                handles.push(r.messages[0].receipt_handle.clone());
            }
            // Long polls answer at once from here on: the clock never moves in these tests.
            engine.shutdown();
            let fifo_handle = handles.pop().expect("two handles");
            let handle = handles.pop().expect("two handles");
            Pipeline {
                engine,
                handle,
                fifo_handle,
            }
        })
    }

    /// Replaces the receipt-handle placeholders in a generated string.
    pub fn fill(&self, s: &str) -> String {
        s.replace(FIFO_HANDLE, &self.fifo_handle)
            .replace(HANDLE, &self.handle)
    }

    /// Decodes `req`; a rejection must be a well-formed error. A request that decodes is
    /// executed and its answer encoded, which must parse (or be a well-formed error) and never
    /// be a 5xx. Returns the response sent.
    pub fn run(&self, req: &WireRequest<'_>) -> WireResponse {
        let request_id = "fuzz-request-id";
        let decoded = match wire::decode(req, request_id) {
            Ok(d) => d,
            Err(resp) => {
                assert_error(&resp, req);
                return resp;
            }
        };
        assert_eq!(
            decoded.protocol, req.protocol,
            "the answer's protocol: {req:?}"
        );
        let action = decoded.action;
        let scope = self
            .engine
            .scope_for(decoded.access_key.as_deref(), decoded.region.as_deref());
        let ctx = RequestContext {
            base_url: decoded.base_url,
            trace_header: decoded.trace_header,
            scope,
        };
        let result = block_on(self.engine.execute(&ctx, decoded.command));
        let resp = wire::encode(decoded.protocol, action, &result, request_id);
        assert!(resp.status < 500, "{req:?} → {result:?} → {resp:?}");
        assert_answer(&resp, &(req, &result));
        resp
    }
}
