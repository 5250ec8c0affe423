//! Server layer: the route table of every endpoint that is not the SQS API, and their
//! handlers: health, Prometheus metrics, the LocalStack-compatible peek and the reset.
//!
//! To add an endpoint: a [`Route`] variant, a row in [`ROUTES`], an arm in [`handle`]
//! (docs/adding-an-action.md, "Adding an admin endpoint").

use serde_json::json;

use super::faults::FaultRule;
use super::push::PUSH_PATH;
use super::{Shared, console};
use crate::command::{Action, ReceiveMessageResult, Reply, Scope};
use crate::error::SqsError;
use crate::wire::{self, Protocol, WireRequest, WireResponse};

/// A non-SQS endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /health`: liveness and readiness as JSON.
    Health,
    /// `GET /metrics`: Prometheus text format.
    Metrics,
    /// `GET /_aws/sqs/messages[/<region>/<account>/<queue>]`: LocalStack-compatible peek.
    Peek,
    /// `POST /_localsqs/reset`: drops every queue and message, then restores the starting
    /// state: the declared queues, fault rules and clock.
    Reset,
    /// `GET /_localstack/health`: LocalStack's health check, answering that SQS is running.
    LocalStackHealth,
    /// `GET /_localsqs/clock`: the server's time, offset and whether it is frozen.
    ShowClock,
    /// `POST /_localsqs/clock`: advance, freeze, resume or reset the clock.
    SetClock,
    /// `GET /_localsqs/faults`: the fault-injection rules.
    ListFaults,
    /// `POST /_localsqs/faults`: adds a rule, answers its id.
    AddFault,
    /// `DELETE /_localsqs/faults`: removes every rule.
    ClearFaults,
    /// `DELETE /_localsqs/faults/<id>`: removes one rule.
    RemoveFault,
    /// `GET /_localsqs/push`: push targets with their last invocations.
    ListPush,
    /// `POST /_localsqs/push`: adds a push target, answers its id.
    AddPush,
    /// `DELETE /_localsqs/push`: removes every push target.
    ClearPush,
    /// `DELETE /_localsqs/push/<id>`: removes one push target.
    RemovePush,
    /// `GET /_localsqs/ui[/<file>]`: the web console and its embedded assets.
    Console,
    /// `GET /_localsqs/queues?prefix=&contains=&offset=&limit=`: a page of queues with counts.
    ConsoleQueues,
    /// `GET /_localsqs/queues/<name>[/messages?state=&offset=&limit=]`: a queue's counts, or a
    /// page of its messages with their state, without receiving them.
    ConsoleMessages,
    /// `DELETE /_localsqs/queues/<name>/messages/<id>`: deletes one message by id (501 for now).
    ConsoleDeleteMessage,
}

/// How a route's path matches.
#[derive(Debug, Clone, Copy)]
enum PathMatch {
    /// Exactly this path.
    Exact(&'static str),
    /// This path, or this path followed by `/` and more segments.
    Tree(&'static str),
    /// This path followed by `/` and one more non-empty segment.
    Under(&'static str),
}

impl PathMatch {
    fn matches(self, path: &str) -> bool {
        match self {
            PathMatch::Exact(p) => path == p,
            PathMatch::Tree(p) => path
                .strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
            PathMatch::Under(p) => path
                .strip_prefix(p)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|seg| !seg.is_empty() && !seg.contains('/')),
        }
    }
}

/// Path of the LocalStack-compatible peek endpoint.
pub const PEEK_PATH: &str = "/_aws/sqs/messages";
/// Most messages one peek answers; more come page by page.
const PEEK_PAGE: usize = 1000;
/// The response header carrying the NextToken of the next peek page.
pub const PEEK_NEXT_HEADER: &str = "x-localsqs-next-token";

/// Every admin endpoint: method, path, route.
const ROUTES: &[(&str, PathMatch, Route)] = &[
    ("GET", PathMatch::Exact("/health"), Route::Health),
    ("GET", PathMatch::Exact("/metrics"), Route::Metrics),
    (
        "GET",
        PathMatch::Exact("/_localstack/health"),
        Route::LocalStackHealth,
    ),
    (
        "HEAD",
        PathMatch::Exact("/_localstack/health"),
        Route::LocalStackHealth,
    ),
    ("GET", PathMatch::Tree(PEEK_PATH), Route::Peek),
    ("POST", PathMatch::Exact("/_localsqs/reset"), Route::Reset),
    ("GET", PathMatch::Exact(CLOCK_PATH), Route::ShowClock),
    ("POST", PathMatch::Exact(CLOCK_PATH), Route::SetClock),
    ("GET", PathMatch::Exact(FAULTS_PATH), Route::ListFaults),
    ("POST", PathMatch::Exact(FAULTS_PATH), Route::AddFault),
    ("DELETE", PathMatch::Exact(FAULTS_PATH), Route::ClearFaults),
    ("DELETE", PathMatch::Under(FAULTS_PATH), Route::RemoveFault),
    ("GET", PathMatch::Exact(PUSH_PATH), Route::ListPush),
    ("POST", PathMatch::Exact(PUSH_PATH), Route::AddPush),
    ("DELETE", PathMatch::Exact(PUSH_PATH), Route::ClearPush),
    ("DELETE", PathMatch::Under(PUSH_PATH), Route::RemovePush),
    ("GET", PathMatch::Tree(console::UI_PATH), Route::Console),
    (
        "GET",
        PathMatch::Exact(console::QUEUES_PATH),
        Route::ConsoleQueues,
    ),
    (
        "GET",
        PathMatch::Tree(console::QUEUES_PATH),
        Route::ConsoleMessages,
    ),
    (
        "DELETE",
        PathMatch::Tree(console::QUEUES_PATH),
        Route::ConsoleDeleteMessage,
    ),
];

/// Path of the clock control.
pub const CLOCK_PATH: &str = "/_localsqs/clock";
/// Path of the fault-injection rules.
pub const FAULTS_PATH: &str = "/_localsqs/faults";

/// The admin route a request addresses, if any. A request naming an SQS operation in
/// `X-Amz-Target` is always the SQS API's.
#[must_use]
pub fn route(method: &str, path: &str, has_target: bool) -> Option<Route> {
    if has_target {
        return None;
    }
    ROUTES
        .iter()
        .find(|(m, p, _)| *m == method && p.matches(path))
        .map(|(_, _, r)| *r)
}

/// Answers an admin request.
pub(super) async fn handle(
    route: Route,
    shared: &Shared,
    req: &WireRequest<'_>,
    accept_json: bool,
    request_id: &str,
) -> WireResponse {
    match route {
        Route::Health => health(shared),
        Route::Metrics => WireResponse::new(
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            shared.metrics.render(),
        ),
        Route::Peek => peek(shared, req, accept_json, request_id),
        Route::Reset => {
            if let Err(e) = shared.engine.reset().await {
                return wire::error_response(Protocol::Json, &e, request_id);
            }
            match shared
                .startup
                .restore(&shared.engine, &shared.faults, &shared.clock, &shared.push)
                .await
            {
                Ok(()) => WireResponse::json(200, &json!({ "reset": true })),
                Err(e) => WireResponse::json(500, &json!({ "error": e })),
            }
        }
        // The shape LocalStack answers; suites and wait scripts check services.sqs.
        Route::LocalStackHealth => WireResponse::json(
            200,
            &json!({
                "services": { "sqs": "running" },
                "edition": "community",
                "version": concat!("localsqs-", env!("CARGO_PKG_VERSION")),
            }),
        ),
        Route::ShowClock => WireResponse::json(200, &json!(shared.clock.state())),
        Route::SetClock => set_clock(shared, req.body),
        Route::ListFaults => {
            let rules: Vec<serde_json::Value> = shared
                .faults
                .list()
                .into_iter()
                .map(|(id, rule)| {
                    let mut v = serde_json::to_value(rule).unwrap_or_default();
                    v["id"] = json!(id);
                    v
                })
                .collect();
            WireResponse::json(200, &json!({ "faults": rules }))
        }
        Route::AddFault => match serde_json::from_slice::<FaultRule>(req.body) {
            Err(e) => bad_request(&format!("not a fault rule: {e}")),
            Ok(rule) => match shared.faults.add(rule) {
                Ok(id) => WireResponse::json(200, &json!({ "id": id })),
                Err(e) => bad_request(&e),
            },
        },
        Route::ClearFaults => {
            shared.faults.clear();
            WireResponse::json(200, &json!({ "removed": "all" }))
        }
        Route::RemoveFault => {
            let id = req.path.rsplit('/').next().unwrap_or_default();
            if shared.faults.remove(id) {
                WireResponse::json(200, &json!({ "removed": id }))
            } else {
                WireResponse::json(404, &json!({ "error": format!("no fault rule {id}") }))
            }
        }
        Route::ListPush => shared.push.http_list(),
        Route::AddPush => shared.push.http_add(req.body).await,
        Route::ClearPush => shared.push.http_clear(),
        Route::RemovePush => shared.push.http_remove(req.path),
        Route::Console => console::asset(shared, req).await,
        Route::ConsoleQueues => console::queues_json(shared, req).await,
        Route::ConsoleMessages => console::messages_json(shared, req).await,
        Route::ConsoleDeleteMessage => console::delete_message(shared, req).await,
    }
}

/// A change of the clock, as `POST /_localsqs/clock` takes it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockChange {
    /// Move forward by this many seconds (fractions allowed).
    advance_seconds: Option<f64>,
    /// Stop (`true`) or restart (`false`) time.
    freeze: Option<bool>,
    /// Return to real time.
    #[serde(default)]
    reset: bool,
}

fn set_clock(shared: &Shared, body: &[u8]) -> WireResponse {
    let change: ClockChange = match serde_json::from_slice(body) {
        Ok(c) => c,
        Err(e) => return bad_request(&format!("not a clock change: {e}")),
    };
    let advance_ms = match change.advance_seconds {
        None => None,
        Some(s) if (0.0..=1e12).contains(&s) => {
            // Rounded to the millisecond the clock counts in; the range check bounds the cast.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Some((s * 1000.0).round() as u64)
        }
        Some(_) => {
            return bad_request(
                "advance_seconds must be a number of seconds >= 0: the clock never moves backwards",
            );
        }
    };
    let clock = &shared.clock;
    if change.reset {
        clock.reset();
    }
    match change.freeze {
        Some(true) => clock.freeze(),
        Some(false) => clock.resume(),
        None => {}
    }
    if let Some(ms) = advance_ms {
        clock.advance_ms(ms);
    }
    shared.engine.wake_all();
    WireResponse::json(200, &json!(clock.state()))
}

/// A 400 with a JSON `error` member: the admin endpoints' own error shape.
fn bad_request(message: &str) -> WireResponse {
    WireResponse::json(400, &json!({ "error": message }))
}

/// Live while it answers; ready unless storage is failing (then 503, with the reason, so
/// orchestrators and wait scripts stop sending it traffic until it recovers).
fn health(shared: &Shared) -> WireResponse {
    let engine = &shared.engine;
    let mode = if engine.durable() {
        "durable"
    } else {
        "memory"
    };
    match engine.storage_failure() {
        None => WireResponse::json(
            200,
            &json!({
                "status": "ok",
                "live": true,
                "ready": true,
                "mode": mode,
                "queues": engine.queue_counts().len(),
            }),
        ),
        Some(reason) => WireResponse::json(
            503,
            &json!({
                "status": "storage failing",
                "live": true,
                "ready": false,
                "mode": mode,
                "reason": reason,
            }),
        ),
    }
}

/// `GET /_aws/sqs/messages?QueueUrl=…&ShowInvisible=true&ShowDelayed=true`, or the path form
/// `/_aws/sqs/messages/<region>/<account>/<queue>`. Answers a ReceiveMessage-shaped body, XML
/// by default and JSON when the client accepts `application/json`. Visibility and receive
/// counts are untouched.
fn peek(
    shared: &Shared,
    req: &WireRequest<'_>,
    accept_json: bool,
    request_id: &str,
) -> WireResponse {
    let protocol = if accept_json {
        Protocol::Json
    } else {
        Protocol::Query
    };
    let fields = match wire::form_fields(req.query, req.body) {
        Ok(f) => f,
        Err(e) => return wire::error_response(protocol, &e, request_id),
    };
    let flag = |name: &str| {
        fields
            .get(name)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    };
    // The path form names region, account and queue: /_aws/sqs/messages/<region>/<account>/<q>.
    let segs: Vec<&str> = req
        .path
        .strip_prefix(PEEK_PATH)
        .unwrap_or_default()
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let engine = &shared.engine;
    let mut scope = Scope::clone(&engine.default_scope());
    let from_path = match segs.as_slice() {
        [region, account, name] => {
            (*region).clone_into(&mut scope.region);
            Some(format!("/{account}/{name}"))
        }
        [name] => Some((*name).to_owned()),
        _ => None,
    };
    let Some(url) = fields.get("QueueUrl").cloned().or(from_path) else {
        return wire::error_response(protocol, &SqsError::missing("QueueUrl"), request_id);
    };
    // Paged: MaxResults (default and most 1,000) and the NextToken of the previous page.
    let max = match fields.get("MaxResults").map(|m| m.parse::<usize>()) {
        None => PEEK_PAGE,
        Some(Ok(m)) if (1..=PEEK_PAGE).contains(&m) => m,
        Some(_) => {
            let err = SqsError::invalid_param(
                fields.get("MaxResults").map_or("", String::as_str),
                "MaxResults",
                "MaxResults must be an integer between 1 and 1000.",
            );
            return wire::error_response(protocol, &err, request_id);
        }
    };
    let from = match fields.get("NextToken").map(|t| t.parse::<u64>()) {
        None => 0,
        Some(Ok(t)) => t,
        Some(Err(_)) => {
            let token = fields.get("NextToken").map_or("", String::as_str);
            let err = SqsError::invalid_param(token, "NextToken", "Invalid token.");
            return wire::error_response(protocol, &err, request_id);
        }
    };
    let result = engine.peek_page(
        &scope,
        &url,
        flag("ShowInvisible"),
        flag("ShowDelayed"),
        from,
        max,
    );
    let next = result.as_ref().ok().and_then(|(_, next)| *next);
    let result =
        result.map(|(messages, _)| Reply::ReceiveMessage(ReceiveMessageResult { messages }));
    let mut resp = match (&result, accept_json) {
        // LocalStack answers JSON peeks with its XML document's names (`Message`, `Attribute`).
        (Ok(reply), true) => wire::encode_xml_names(Action::ReceiveMessage, reply, request_id),
        _ => wire::encode(protocol, Action::ReceiveMessage, &result, request_id),
    };
    if let Some(next) = next {
        resp.headers.push((PEEK_NEXT_HEADER, next.to_string()));
    }
    // A peek is not an SQS request: keep it out of the per-action latency metrics.
    resp.action = None;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_whole_segments() {
        assert_eq!(route("GET", "/health", false), Some(Route::Health));
        assert_eq!(route("GET", "/metrics", false), Some(Route::Metrics));
        assert_eq!(route("POST", "/_localsqs/reset", false), Some(Route::Reset));
        assert_eq!(route("GET", PEEK_PATH, false), Some(Route::Peek));
        assert_eq!(
            route("GET", "/_aws/sqs/messages/us-east-1/000000000000/q", false),
            Some(Route::Peek)
        );
        assert_eq!(route("GET", "/_aws/sqs/messagesxq", false), None);
        assert_eq!(route("GET", "/_localsqs/reset", false), None);
        assert_eq!(route("POST", "/health", false), None);
        assert_eq!(route("GET", "/health", true), None);
        assert_eq!(route("POST", FAULTS_PATH, false), Some(Route::AddFault));
        assert_eq!(
            route("DELETE", "/_localsqs/faults/fault-1", false),
            Some(Route::RemoveFault)
        );
        assert_eq!(route("DELETE", "/_localsqs/faults/a/b", false), None);
        assert_eq!(
            route("DELETE", FAULTS_PATH, false),
            Some(Route::ClearFaults)
        );
        assert_eq!(route("POST", PUSH_PATH, false), Some(Route::AddPush));
        assert_eq!(
            route("DELETE", "/_localsqs/push/push-1", false),
            Some(Route::RemovePush)
        );
        assert_eq!(route("GET", "/_localsqs/ui", false), Some(Route::Console));
        assert_eq!(
            route("GET", "/_localsqs/ui/js/main.js", false),
            Some(Route::Console)
        );
        assert_eq!(route("GET", "/_localsqs/uix", false), None);
        assert_eq!(
            route("GET", "/_localsqs/queues", false),
            Some(Route::ConsoleQueues)
        );
        assert_eq!(
            route("GET", "/_localsqs/queues/q/messages", false),
            Some(Route::ConsoleMessages)
        );
        assert_eq!(
            route("DELETE", "/_localsqs/queues/q/messages/id", false),
            Some(Route::ConsoleDeleteMessage)
        );
        assert_eq!(route("POST", "/_localsqs/queues", false), None);
    }
}
