//! Admin layer: what the console's unit tests share: an [`Admin`] over an in-memory engine,
//! requests, and queues with messages.

use std::sync::Arc;

use serde_json::Value;

use crate::admin::routes::Route;
use crate::admin::state::Admin;
use crate::command::{
    Command, CreateQueue, MessageToSend, RequestContext, SendMessageBatch,
    SendMessageBatchRequestEntry,
};
use crate::engine::{Clock, Engine, EngineOptions, RandomIds, SystemClock};
use crate::tools::clock::ControlledClock;
use crate::tools::faults::Faults;
use crate::tools::metrics::Metrics;
use crate::tools::metrics_queues::MetricsOptions;
use crate::tools::push::PushTargets;
use crate::tools::setup::Setup;
use crate::wire::{Protocol, WireRequest, WireResponse};

pub(crate) const BASE: &str = "http://localhost:9324";

pub(crate) fn admin() -> Admin {
    let clock = Arc::new(ControlledClock::new(Arc::new(SystemClock)));
    let engine = Engine::open(
        EngineOptions::default(),
        Arc::clone(&clock) as Arc<dyn Clock>,
        Arc::new(RandomIds),
    )
    .expect("opens");
    let faults = Arc::new(Faults::new());
    let push = Arc::new(PushTargets::new(
        engine.clone(),
        Arc::clone(&clock) as Arc<dyn Clock>,
        Vec::new(),
    ));
    Admin {
        metrics: Arc::new(Metrics::new(&engine, &faults, MetricsOptions::default())),
        engine,
        faults,
        clock,
        startup: Setup::default(),
        init: Arc::new(crate::tools::init::InitHooks::none()),
        started_at: std::time::SystemTime::now(),
        session_id: "test-session".into(),
        push,
        localstack: false,
    }
}

/// A context in the configured account and region of [`admin`]'s engine.
pub(crate) fn ctx() -> RequestContext {
    let o = EngineOptions::default();
    let scope = crate::command::Scope {
        account: o.account_id,
        region: o.region,
    };
    RequestContext::new(BASE, Arc::new(scope))
}

pub(crate) fn get<'a>(path: &'a str, query: Option<&'a str>) -> WireRequest<'a> {
    WireRequest {
        protocol: Protocol::Query,
        method: "GET",
        path,
        query,
        target: None,
        trace_header: None,
        authorization: None,
        base_url: BASE.into(),
        body: &[],
    }
}

pub(crate) async fn create(s: &Admin, name: &str, attributes: &[(&str, &str)]) {
    let c = CreateQueue {
        queue_name: name.into(),
        attributes: attributes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..CreateQueue::default()
    };
    s.engine
        .execute(&ctx(), Command::CreateQueue(c))
        .await
        .expect("creates");
}

pub(crate) async fn send(s: &Admin, queue: &str, bodies: &[&str]) {
    for chunk in bodies.chunks(10) {
        let entries = chunk
            .iter()
            .enumerate()
            .map(|(i, b)| SendMessageBatchRequestEntry {
                id: format!("m{i}"),
                message: MessageToSend {
                    message_body: (*b).to_owned(),
                    ..MessageToSend::default()
                },
            })
            .collect();
        let c = SendMessageBatch {
            queue_url: queue.into(),
            entries,
        };
        s.engine
            .execute(&ctx(), Command::SendMessageBatch(c))
            .await
            .expect("sends");
    }
}

pub(crate) fn body(resp: &WireResponse) -> Value {
    serde_json::from_str(&resp.body).expect("json")
}

/// What the route answers to `req`, through the same match the server uses.
pub(crate) async fn call(s: &Admin, route: Route, req: &WireRequest<'_>) -> WireResponse {
    s.handle(route, req, false, true, "test-request").await
}
