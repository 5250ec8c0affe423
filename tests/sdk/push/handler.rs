//! A scripted Lambda handler for the push tests: a hyper server on `127.0.0.1:0` that records
//! every event it gets (path, parsed body) and answers as its script says for that call.

use std::collections::HashSet;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;

use super::super::harness::HANG_GUARD;

/// What the handler answers to one call.
#[derive(Debug, Clone)]
pub enum Answer {
    /// This status and body.
    Status(u16, String),
    /// 200 with this body and `X-Amz-Function-Error: Unhandled`.
    FunctionError(String),
    /// Never answers.
    Hang,
}

impl Answer {
    /// 200 with an empty body.
    pub fn ok() -> Self {
        Self::Status(200, String::new())
    }
}

/// One call the handler got.
#[derive(Debug, Clone)]
pub struct Call {
    /// The request target.
    pub path: String,
    /// The event.
    pub event: Value,
}

impl Call {
    /// The event's records.
    pub fn records(&self) -> &[Value] {
        self.event["Records"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The bodies of the records, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.records()
            .iter()
            .map(|r| r["body"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

type Script = dyn Fn(usize, &Value) -> Answer + Send + Sync;

struct State {
    calls: Mutex<Vec<Call>>,
    script: Box<Script>,
    /// Calls take this long to answer (so that concurrent batches overlap).
    delay: Duration,
    /// FIFO groups of the batches being handled right now.
    groups_in_flight: Mutex<HashSet<String>>,
    /// Groups seen in two batches at once.
    overlaps: Mutex<Vec<String>>,
}

/// A running handler.
#[derive(Clone)]
pub struct Handler {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl Handler {
    /// Answers call `n` (from 0) to event `e` with `script(n, e)`.
    pub async fn start(script: impl Fn(usize, &Value) -> Answer + Send + Sync + 'static) -> Self {
        Self::start_slow(Duration::ZERO, script).await
    }

    /// Like [`Handler::start`], each answer `delay` late.
    pub async fn start_slow(
        delay: Duration,
        script: impl Fn(usize, &Value) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let addr = listener.local_addr().expect("address");
        let state = Arc::new(State {
            calls: Mutex::new(Vec::new()),
            script: Box::new(script),
            delay,
            groups_in_flight: Mutex::new(HashSet::new()),
            overlaps: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let s = Arc::clone(&s);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let s = Arc::clone(&s);
                        async move { Ok::<_, Infallible>(serve(&s, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { addr, state }
    }

    /// `http://127.0.0.1:<port>` (no path: the Runtime Interface Emulator's is used).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.state.calls.lock().expect("lock").clone()
    }

    /// Waits (hang-guarded) until at least `n` calls arrived, and returns them all.
    pub async fn wait_calls(&self, n: usize) -> Vec<Call> {
        eventually(&format!("{n} calls"), || {
            let calls = self.calls();
            async move { (calls.len() >= n).then_some(calls) }
        })
        .await
    }

    /// FIFO groups that were in two batches at once.
    pub fn overlaps(&self) -> Vec<String> {
        self.state.overlaps.lock().expect("lock").clone()
    }
}

fn groups(event: &Value) -> HashSet<String> {
    event["Records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["attributes"]["MessageGroupId"].as_str())
        .map(str::to_owned)
        .collect()
}

async fn serve(s: &State, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().to_string();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = {
        let mut calls = s.calls.lock().expect("lock");
        calls.push(Call {
            path,
            event: event.clone(),
        });
        calls.len() - 1
    };
    let mine = groups(&event);
    {
        let mut in_flight = s.groups_in_flight.lock().expect("lock");
        for g in &mine {
            if !in_flight.insert(g.clone()) {
                s.overlaps.lock().expect("lock").push(g.clone());
            }
        }
    }
    let answer = (s.script)(n, &event);
    if !s.delay.is_zero() {
        tokio::time::sleep(s.delay).await;
    }
    {
        let mut in_flight = s.groups_in_flight.lock().expect("lock");
        for g in &mine {
            in_flight.remove(g);
        }
    }
    let (status, body, function_error) = match answer {
        Answer::Status(status, body) => (status, body, false),
        Answer::FunctionError(body) => (200, body, true),
        Answer::Hang => std::future::pending().await,
    };
    let mut resp = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    if function_error {
        resp = resp.header("x-amz-function-error", "Unhandled");
    }
    resp.body(Full::new(Bytes::from(body)))
        .expect("response builds")
}

/// Polls `check` every 20 ms until it returns `Some`, hang-guarded.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let wait = async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(HANG_GUARD, wait)
        .await
        .unwrap_or_else(|_| panic!("hang guard: still waiting for {what}"))
}
