//! HTTP layer: one request's journey. HTTP → [`WireRequest`]; then either an admin route
//! ([`crate::admin`]) or the SQS API: `wire::decode` → the hooks' before-steps →
//! `Engine::execute` → their after-steps → `wire::encode`; then [`WireResponse`] → HTTP, with
//! the request id, and every hook told that the request finished.

use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    ACCEPT, AUTHORIZATION, AsHeaderName, CONTENT_LENGTH, CONTENT_TYPE, HOST, HeaderMap, HeaderName,
    HeaderValue,
};
use hyper::{Request, Response, StatusCode};

mod answered;

use self::answered::{Executed, log_request};
use super::base_url::{base_url, localstack_base, port_of};
use super::body::{self, BodyRules};
use super::front::Front;
use super::guard::gate;
use super::guard::sigv4;
use super::options::Compat;
use crate::admin::routes;
use crate::command::hooks::{Before, Call, Finished, before_all};
use crate::command::{Action, Command, Reply, RequestContext};
use crate::error::{ErrorCode, SqsError};
use crate::wire::{self, Protocol, WireRequest, WireResponse};

// Header names the request path reads, named once: a `&str` name is parsed on every lookup.
const X_AMZ_TARGET: HeaderName = HeaderName::from_static("x-amz-target");
const X_AMZN_TRACE_ID: HeaderName = HeaderName::from_static("x-amzn-trace-id");

fn header(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Answers one HTTP request. `reserved`: the connection holds a reserve slot (health and admin
/// endpoints only).
pub(super) async fn serve(
    front: &Front,
    req: Request<Incoming>,
    local: Option<SocketAddr>,
    reserved: bool,
) -> Response<Full<Bytes>> {
    let started = std::time::Instant::now();
    let request_id = front.engine.new_uuid();
    // The head stays here while the body is read, so headers are borrowed, not copied.
    let (head, body) = req.into_parts();
    let h = &head.headers;
    let target = header(h, X_AMZ_TARGET);
    let path = head.uri.path();
    let accept = header(h, ACCEPT);
    let localstack = front.options.compat == Compat::LocalStack;
    let route =
        routes::route_in(localstack, head.method.as_str(), path, target.is_some()).or_else(|| {
            routes::browser_home(
                head.method.as_str(),
                path,
                head.uri.query(),
                accept,
                target.is_some(),
            )
            .then_some(routes::Route::ConsoleHome)
        });
    let accept_json = accept.is_some_and(|a| a.contains("application/json"));
    let protocol = Protocol::detect(target, header(h, CONTENT_TYPE)).negotiate(accept_json);
    if reserved && route.is_none() {
        return respond(crowded(protocol, &request_id), &request_id);
    }
    let signed_head = sigv4::Head {
        method: head.method.as_str(),
        raw_path: path,
        raw_query: head.uri.query(),
        headers: h,
    };
    let passed = match gate::check(front, route, &signed_head, protocol, local, &request_id) {
        Ok(p) => p,
        Err(resp) => return respond(resp, &request_id),
    };
    let rules = BodyRules {
        max_bytes: front.options.max_request_bytes,
        timeout: front.options.limits.body_timeout,
        min_rate: front.options.min_body_rate,
        pressured: front.slots.pressured(),
    };
    let declared = header(h, CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    let body = match body::read(body, declared, rules, &front.budget).await {
        Ok(b) => b,
        Err(e) => {
            return respond(wire::error_response(protocol, &e, &request_id), &request_id);
        }
    };
    if let Some(signed) = &passed.signed
        && let Err(e) = signed.verify(&signed_head, &body.bytes)
    {
        return respond(wire::error_response(protocol, &e, &request_id), &request_id);
    }
    let base_url = base_url(
        &front.options,
        &front.engine.config().region,
        header(h, HOST),
        local,
    );
    let wreq = WireRequest {
        protocol,
        method: head.method.as_str(),
        path,
        query: head.uri.query(),
        target,
        trace_header: header(h, X_AMZN_TRACE_ID),
        authorization: header(h, AUTHORIZATION),
        base_url,
        body: &body.bytes,
    };
    let mut done = match route {
        Some(route) => Executed::bare(
            front
                .admin
                .handle(route, &wreq, accept_json, passed.authorized, &request_id)
                .await,
        ),
        None => execute(front, &wreq, h, &request_id).await,
    };
    done.resp.headers.extend(passed.cors);
    if let Some((_, hint)) = done
        .resp
        .headers
        .iter()
        .find(|(k, _)| *k == wire::HINT_HEADER)
    {
        tracing::info!(request_id = %request_id, %hint, "not found");
    }
    let finished = Finished {
        action: done.resp.action,
        queue: done.queue.as_deref(),
        error: done.error,
        status: done.resp.status,
        elapsed: started.elapsed(),
    };
    for h in &front.hooks {
        h.finished(&finished);
    }
    log_request(&done, &wreq, &request_id, finished.elapsed);
    respond(done.resp, &request_id)
}

/// A LocalStack override header's value: a positive integer, else none (LocalStack ignores a
/// value that is not an integer, or 0).
fn override_header(headers: &HeaderMap, name: &str) -> Option<u32> {
    header(headers, name)
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
}

/// The answer to an SQS request on a reserve slot: the server is at its connection cap.
fn crowded(protocol: Protocol, request_id: &str) -> WireResponse {
    let err = SqsError::new(
        ErrorCode::ServiceUnavailable,
        "localsqs is at its connection limit (--max-connections); this connection may reach only /health and the admin endpoints. Please try again.",
    );
    let mut resp = wire::error_response(protocol, &err, request_id);
    resp.headers.push(("connection", "close".to_owned()));
    resp
}

/// The SQS API: decode, execute (with the hooks' before- and after-steps), encode. Also tells
/// the name of the queue addressed when a hook or the log wants it, the error answered, the
/// request's scope and, for the debug log, how many messages a receive handed out.
async fn execute(
    front: &Front,
    req: &WireRequest<'_>,
    headers: &HeaderMap,
    request_id: &str,
) -> Executed {
    // The service is chosen before the body is decoded.
    let decoded = match wire::Api::detect(req) {
        wire::Api::Sqs => wire::sqs::decode(req, request_id),
        wire::Api::Sns => return Executed::bare(super::sns::execute(front, req, request_id).await),
    };
    let mut d = match decoded {
        Err(rejected) => {
            let error = rejected.error;
            return Executed {
                error,
                ..Executed::bare(rejected)
            };
        }
        Ok(d) => d,
    };
    let engine = &front.engine;
    let hooks = &front.hooks;
    let called = hooks.iter().any(|h| h.wants_calls());
    let debug = tracing::enabled!(tracing::Level::DEBUG);
    // The queue's name is wanted for the debug log line and by hooks; without either, a
    // request does not pay for copying it.
    let queue = (called || debug)
        .then(|| d.command.queue_name().map(str::to_owned))
        .flatten();
    let scope = engine.scope_for(d.access_key.as_deref(), d.region.as_deref());
    if let Some(reason) = engine.storage_failure() {
        // Memory may hold changes the disk refused; nothing is served until the store has
        // recovered and memory has been rebuilt from the file.
        let err = SqsError::new(
            ErrorCode::ServiceUnavailable,
            format!("Storage is failing: {reason}"),
        );
        return Executed {
            error: Some(err.code),
            queue,
            scope: Some(scope),
            received: None,
            resp: wire::encode(d.protocol, d.action, &Err(err), request_id),
        };
    }
    if front.options.compat == Compat::LocalStack {
        if let Some(region) = &d.region {
            // LocalStack's queue URLs name the region the client signed for.
            d.base_url = localstack_base(region, port_of(&req.base_url));
        }
        if let Command::ReceiveMessage(c) = &mut d.command {
            // LocalStack's overrides of MaxNumberOfMessages and WaitTimeSeconds (§6.7).
            c.override_max = override_header(headers, "x-localstack-sqs-override-message-count");
            c.override_wait_s =
                override_header(headers, "x-localstack-sqs-override-wait-time-seconds");
        }
    }
    let before = if called {
        let call = Call {
            action: d.action,
            command: &d.command,
            queue: queue.as_deref(),
        };
        before_all(hooks, &call)
    } else {
        Before::default()
    };
    if let Some(delay) = before.delay {
        tokio::time::sleep(delay).await;
    }
    let ctx = RequestContext {
        scope,
        base_url: d.base_url,
        trace_header: d.trace_header,
    };
    let result = match before.answer {
        Some(answer) => answer,
        None => {
            let mut result = engine.execute(&ctx, d.command).await;
            if let Some(after) = before.after {
                after(&mut result);
            }
            result
        }
    };
    let received = match &result {
        Ok(Reply::ReceiveMessage(r)) if debug => Some(r.messages.len()),
        _ => None,
    };
    let error = result.as_ref().err().map(|e| e.code);
    let mut resp = wire::encode(d.protocol, d.action, &result, request_id);
    if d.action == Action::ReceiveMessage && front.slots.crowded() {
        // Every slot is taken: the slot this (possibly long) poll held goes to a waiting
        // client; the poller reconnects for its next receive.
        resp.headers.push(("connection", "close".to_owned()));
    }
    Executed {
        resp,
        queue,
        error,
        scope: Some(ctx.scope),
        received,
    }
}

/// Named once: a `&str` name is parsed, lowercased and copied on every response.
const REQUEST_ID: HeaderName = HeaderName::from_static("x-amzn-requestid");

fn respond(resp: WireResponse, request_id: &str) -> Response<Full<Bytes>> {
    let mut out = Response::new(Full::new(Bytes::from(resp.body)));
    *out.status_mut() =
        StatusCode::from_u16(resp.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = out.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(resp.content_type));
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(REQUEST_ID, v);
    }
    for (name, value) in resp.headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    out
}
