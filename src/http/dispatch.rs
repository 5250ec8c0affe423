//! HTTP layer: one request's journey. HTTP → [`WireRequest`]; then either an admin route
//! ([`crate::admin`]) or the SQS API: `wire::decode` → the hooks' before-steps →
//! `Engine::execute` → their after-steps → `wire::encode`; then [`WireResponse`] → HTTP, with
//! the request id, and every hook told that the request finished.

use std::net::SocketAddr;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    ACCEPT, ACCESS_CONTROL_REQUEST_HEADERS, AUTHORIZATION, AsHeaderName, CONTENT_TYPE, HOST,
    HeaderMap, HeaderName, HeaderValue, ORIGIN,
};
use hyper::{Request, Response, StatusCode};

use super::base_url::{base_url, localstack_base, port_of};
use super::front::Front;
use super::options::Compat;
use super::origin::{self, Verdict};
use super::sigv4;
use crate::admin::routes;
use crate::command::hooks::{Before, Call, Finished, before_all};
use crate::command::{Action, RequestContext};
use crate::error::{ErrorCode, SqsError};
use crate::wire::{self, Protocol, WireRequest, WireResponse};

// Header names the request path reads, named once: a `&str` name is parsed on every lookup.
const X_AMZ_TARGET: HeaderName = HeaderName::from_static("x-amz-target");
const X_AMZN_TRACE_ID: HeaderName = HeaderName::from_static("x-amzn-trace-id");
const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

fn header(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Answers one HTTP request.
pub(super) async fn serve(
    front: &Front,
    req: Request<Incoming>,
    local: Option<SocketAddr>,
) -> Response<Full<Bytes>> {
    let started = std::time::Instant::now();
    let request_id = front.engine.new_uuid();
    // The head stays here while the body is read, so headers are borrowed, not copied.
    let (head, body) = req.into_parts();
    let h = &head.headers;
    let target = header(h, X_AMZ_TARGET);
    let protocol = Protocol::detect(target, header(h, CONTENT_TYPE));
    let host_header = header(h, HOST);
    let verdict =
        front
            .options
            .cors_origins
            .judge(header(h, ORIGIN), header(h, SEC_FETCH_SITE), host_header);
    let cors = match verdict {
        Verdict::Plain => Vec::new(),
        Verdict::Allowed(o) if head.method == hyper::Method::OPTIONS => {
            let headers = origin::preflight_headers(&o, header(h, ACCESS_CONTROL_REQUEST_HEADERS));
            let mut resp = WireResponse::new(204, "text/plain", String::new());
            resp.headers = headers;
            return respond(resp, &request_id);
        }
        Verdict::Allowed(o) => origin::cors_headers(&o),
        Verdict::Refused(o) => {
            // [E] Not an AWS behaviour: AWS authenticates instead (docs/architecture.md).
            let err = SqsError::new(
                ErrorCode::AccessDenied,
                format!(
                    "Cross-origin request from {o} refused. Start localsqs with --cors-origin <origin> to allow a browser app."
                ),
            );
            return respond(
                wire::error_response(protocol, &err, &request_id),
                &request_id,
            );
        }
    };
    let base_url = base_url(
        &front.options,
        &front.engine.config().region,
        host_header,
        local,
    );
    let path = head.uri.path();
    let route = routes::route(head.method.as_str(), path, target.is_some());
    let accept_json = header(h, ACCEPT).is_some_and(|a| a.contains("application/json"));
    let protocol = protocol.negotiate(accept_json);
    let collect = Limited::new(body, front.options.max_request_bytes).collect();
    let body = match tokio::time::timeout(front.options.limits.body_timeout, collect).await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e)) => {
            let err = body_error(&*e, front.options.max_request_bytes);
            return respond(
                wire::error_response(protocol, &err, &request_id),
                &request_id,
            );
        }
        Err(_) => {
            // [E] AWS's front door closes such requests; a 408 tells the client why.
            let err = SqsError::new(
                ErrorCode::RequestTimeout,
                "The request body was not received in time.",
            );
            return respond(
                wire::error_response(protocol, &err, &request_id),
                &request_id,
            );
        }
    };
    let wreq = WireRequest {
        protocol,
        method: head.method.as_str(),
        path,
        query: head.uri.query(),
        target,
        trace_header: header(h, X_AMZN_TRACE_ID),
        authorization: header(h, AUTHORIZATION),
        base_url,
        body: &body,
    };
    if let (Some(creds), None) = (&front.options.sigv4, route) {
        let signed = sigv4::Signed {
            method: wreq.method,
            raw_path: wreq.path,
            raw_query: wreq.query,
            headers: h,
            body: wreq.body,
        };
        if let Err(e) = sigv4::verify(creds, &signed, std::time::SystemTime::now()) {
            return respond(wire::error_response(protocol, &e, &request_id), &request_id);
        }
    }
    let (mut resp, queue, error) = match route {
        Some(route) => (
            front
                .admin
                .handle(route, &wreq, accept_json, &request_id)
                .await,
            None,
            None,
        ),
        None => execute(front, &wreq, &request_id).await,
    };
    resp.headers.extend(cors);
    let done = Finished {
        action: resp.action,
        queue: queue.as_deref(),
        error,
        status: resp.status,
        elapsed: started.elapsed(),
    };
    for h in &front.hooks {
        h.finished(&done);
    }
    tracing::debug!(
        action = %resp.action.map_or("-", Action::name),
        queue = %queue.as_deref().unwrap_or("-"),
        request_id = %request_id,
        method = %wreq.method,
        path = %wreq.path,
        status = resp.status,
        elapsed_us = u64::try_from(done.elapsed.as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    respond(resp, &request_id)
}

/// The SQS API: decode, execute (with the hooks' before- and after-steps), encode. Also returns
/// the name of the queue addressed when a hook or the log wants it, and the error answered.
async fn execute(
    front: &Front,
    req: &WireRequest<'_>,
    request_id: &str,
) -> (WireResponse, Option<String>, Option<ErrorCode>) {
    // The service is chosen before the body is decoded.
    let decoded = match wire::Api::detect(req) {
        wire::Api::Sqs => wire::sqs::decode(req, request_id),
        wire::Api::Sns => {
            return (
                super::sns::execute(front, req, request_id).await,
                None,
                None,
            );
        }
    };
    let mut d = match decoded {
        Err(rejected) => return (rejected, None, None),
        Ok(d) => d,
    };
    let engine = &front.engine;
    if let Some(reason) = engine.storage_failure() {
        // Memory may hold changes the disk refused; nothing is served until the store has
        // recovered and memory has been rebuilt from the file.
        let err = SqsError::new(
            ErrorCode::ServiceUnavailable,
            format!("Storage is failing ({reason}); localsqs serves again once it recovers."),
        );
        let queue = d.command.queue_name().map(str::to_owned);
        let code = Some(err.code);
        return (
            wire::encode(d.protocol, d.action, &Err(err), request_id),
            queue,
            code,
        );
    }
    if front.options.compat == Compat::LocalStack
        && let Some(region) = &d.region
    {
        // LocalStack's queue URLs name the region the client signed for.
        d.base_url = localstack_base(region, port_of(&req.base_url));
    }
    let hooks = &front.hooks;
    let called = hooks.iter().any(|h| h.wants_calls());
    // The queue's name is wanted for the debug log line and by hooks; without either, a
    // request does not pay for copying it.
    let queue = (called || tracing::enabled!(tracing::Level::DEBUG))
        .then(|| d.command.queue_name().map(str::to_owned))
        .flatten();
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
    let result = match before.answer {
        Some(answer) => answer,
        None => {
            let ctx = RequestContext {
                scope: engine.scope_for(d.access_key.as_deref(), d.region.as_deref()),
                base_url: d.base_url,
                trace_header: d.trace_header,
            };
            let mut result = engine.execute(&ctx, d.command).await;
            if let Some(after) = before.after {
                after(&mut result);
            }
            result
        }
    };
    let code = result.as_ref().err().map(|e| e.code);
    (
        wire::encode(d.protocol, d.action, &result, request_id),
        queue,
        code,
    )
}

fn body_error(e: &(dyn std::error::Error + Send + Sync + 'static), limit: usize) -> SqsError {
    if e.downcast_ref::<http_body_util::LengthLimitError>()
        .is_some()
    {
        // [E] AWS's front door answers oversized bodies before SQS sees them.
        SqsError::new(
            ErrorCode::RequestEntityTooLarge,
            format!("Request body is larger than the {limit} bytes this server accepts."),
        )
    } else {
        SqsError::new(
            ErrorCode::SerializationException,
            "Could not read the request body.",
        )
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
