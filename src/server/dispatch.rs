//! Server layer: one request's journey. HTTP → [`WireRequest`]; then either an admin route
//! ([`super::admin`]) or the SQS API: `wire::decode` → `Engine::execute` → `wire::encode`;
//! then [`WireResponse`] → HTTP, with the request id and metrics.

use std::net::SocketAddr;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    ACCEPT, ACCESS_CONTROL_REQUEST_HEADERS, AUTHORIZATION, AsHeaderName, CONTENT_TYPE, HOST,
    HeaderMap, HeaderName, HeaderValue, ORIGIN,
};
use hyper::{Request, Response, StatusCode};

use super::origin::{self, Verdict};
use super::{Compat, Shared, admin, sigv4};
use crate::command::{Action, Command, ReceiveMessageResult, Reply, RequestContext};
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
    shared: &Shared,
    req: Request<Incoming>,
    local: Option<SocketAddr>,
) -> Response<Full<Bytes>> {
    let started = std::time::Instant::now();
    let request_id = shared.engine.new_uuid();
    // The head stays here while the body is read, so headers are borrowed, not copied.
    let (head, body) = req.into_parts();
    let h = &head.headers;
    let target = header(h, X_AMZ_TARGET);
    let protocol = Protocol::detect(target, header(h, CONTENT_TYPE));
    let host_header = header(h, HOST);
    let verdict = shared.options.cors_origins.judge(
        header(h, ORIGIN),
        header(h, SEC_FETCH_SITE),
        host_header,
    );
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
    let base_url = base_url(shared, host_header, local);
    let path = head.uri.path();
    let route = admin::route(head.method.as_str(), path, target.is_some());
    let accept_json = header(h, ACCEPT).is_some_and(|a| a.contains("application/json"));
    let protocol = protocol.negotiate(accept_json);
    let collect = Limited::new(body, shared.options.max_request_bytes).collect();
    let body = match tokio::time::timeout(shared.options.limits.body_timeout, collect).await {
        Ok(Ok(b)) => b.to_bytes(),
        Ok(Err(e)) => {
            let err = body_error(&*e, shared.options.max_request_bytes);
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
    if let (Some(creds), None) = (&shared.options.sigv4, route) {
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
    let (mut resp, queue) = match route {
        Some(route) => (
            admin::handle(route, shared, &wreq, accept_json, &request_id).await,
            None,
        ),
        None => execute(shared, &wreq, &request_id).await,
    };
    resp.headers.extend(cors);
    if let Some(action) = resp.action {
        shared
            .metrics
            .observe(action, started.elapsed().as_secs_f64());
    }
    tracing::debug!(
        action = %resp.action.map_or("-", Action::name),
        queue = %queue.as_deref().unwrap_or("-"),
        request_id = %request_id,
        method = %wreq.method,
        path = %wreq.path,
        status = resp.status,
        elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "request"
    );
    respond(resp, &request_id)
}

/// The SQS API: decode, execute, encode, with any injected faults. Also returns the name of
/// the queue addressed, for the log.
async fn execute(
    shared: &Shared,
    req: &WireRequest<'_>,
    request_id: &str,
) -> (WireResponse, Option<String>) {
    let mut d = match wire::decode(req, request_id) {
        Err(rejected) => return (rejected, None),
        Ok(d) => d,
    };
    if let Some(reason) = shared.engine.storage_failure() {
        // Memory may hold changes the disk refused; nothing is served until the store has
        // recovered and memory has been rebuilt from the file.
        let err = SqsError::new(
            ErrorCode::ServiceUnavailable,
            format!("Storage is failing ({reason}); localsqs serves again once it recovers."),
        );
        let queue = d.command.queue_name().map(str::to_owned);
        return (
            wire::encode(d.protocol, d.action, &Err(err), request_id),
            queue,
        );
    }
    if shared.options.compat == Compat::LocalStack
        && let Some(region) = &d.region
    {
        // LocalStack's queue URLs name the region the client signed for.
        d.base_url = localstack_base(region, port_of(&req.base_url));
    }
    let faults = &shared.faults;
    // The queue's name is wanted for the debug log line and by fault rules; without either,
    // a request does not pay for copying it.
    let queue = (faults.any() || tracing::enabled!(tracing::Level::DEBUG))
        .then(|| d.command.queue_name().map(str::to_owned))
        .flatten();
    let before = faults.before(d.action, &d.command);
    if let Some(latency) = before.latency {
        tokio::time::sleep(latency).await;
    }
    let result = if let Some(err) = before.error {
        Err(err)
    } else if before.empty_receive {
        Ok(Reply::ReceiveMessage(ReceiveMessageResult::default()))
    } else {
        let max = match &d.command {
            Command::ReceiveMessage(r) => {
                usize::try_from(r.max_number_of_messages.unwrap_or(1)).unwrap_or(1)
            }
            _ => 0,
        };
        let deleted: Vec<String> = match &d.command {
            _ if !faults.any() => Vec::new(),
            Command::DeleteMessage(c) => vec![c.receipt_handle.clone()],
            Command::DeleteMessageBatch(c) => {
                c.entries.iter().map(|e| e.receipt_handle.clone()).collect()
            }
            _ => Vec::new(),
        };
        let scope = shared
            .engine
            .scope_for(d.access_key.as_deref(), d.region.as_deref());
        let ctx = RequestContext {
            base_url: d.base_url,
            trace_header: d.trace_header,
            scope,
        };
        let mut result = shared.engine.execute(&ctx, d.command).await;
        if let (Ok(Reply::ReceiveMessage(r)), Some(q)) = (&mut result, &queue) {
            faults.after_receive(q, max, &mut r.messages);
        }
        for h in &deleted {
            faults.deleted(h);
        }
        result
    };
    (
        wire::encode(d.protocol, d.action, &result, request_id),
        queue,
    )
}

/// The scheme and authority queue URLs are built on: the request's host, or with `--compat
/// localstack` LocalStack's `sqs.<region>.localhost.localstack.cloud` on the same port.
fn base_url(shared: &Shared, host_header: Option<&str>, local: Option<SocketAddr>) -> String {
    // Built in one buffer: `format!` and intermediate strings cost a visible share of a
    // SendMessage in profiles.
    const SCHEME: &str = "http://";
    let mut url = String::with_capacity(48);
    url.push_str(SCHEME);
    match &shared.options.queue_host {
        Some(h) => url.push_str(h),
        None => push_queue_authority(&mut url, host_header, local),
    }
    match shared.options.compat {
        Compat::None => url,
        Compat::LocalStack => {
            localstack_base(&shared.options.region, port_of(&url[SCHEME.len()..]))
        }
    }
}

fn localstack_base(region: &str, port: &str) -> String {
    format!("http://sqs.{region}.localhost.localstack.cloud:{port}")
}

/// The port of a `host:port` or `scheme://host:port` (LocalStack's 4566 when none is given).
fn port_of(authority: &str) -> &str {
    authority
        .rsplit_once(':')
        .map_or("4566", |(_, p)| p)
        .trim_end_matches('/')
}

/// [`push_queue_authority`] into a new string.
#[cfg(test)]
fn queue_authority(header: Option<&str>, local: Option<SocketAddr>) -> String {
    let mut out = String::new();
    push_queue_authority(&mut out, header, local);
    out
}

/// The `host:port` that queue URLs carry: the request's `Host` header when it is a plain
/// authority, with the listening port added when it names none (the Ruby v1 SDK sends
/// `Host: 127.0.0.1` to port 9324, and clients that follow queue URLs would then go to port
/// 80); the listening address when the header is missing or is not an authority at all
/// (`a/b?x#y` would break every queue URL built from it).
fn push_queue_authority(out: &mut String, header: Option<&str>, local: Option<SocketAddr>) {
    use std::fmt::Write as _;
    let Some(h) = header.filter(|h| is_authority(h)) else {
        match local {
            Some(a) => {
                let _ = write!(out, "{a}");
            }
            None => out.push_str("localhost"),
        }
        return;
    };
    let has_port = match h.rfind(']') {
        Some(end) => h[end..].contains(':'),
        None => h.contains(':'),
    };
    out.push_str(h);
    if let Some(a) = local
        && !has_port
    {
        let _ = write!(out, ":{}", a.port());
    }
}

/// A host name or IP literal with an optional port: no path, query, fragment or user info.
fn is_authority(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 255
        && h.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']')
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_urls_get_a_port_and_never_a_broken_host() {
        let local = Some(SocketAddr::from(([127, 0, 0, 1], 9324)));
        assert_eq!(
            queue_authority(Some("localhost:4566"), local),
            "localhost:4566"
        );
        assert_eq!(queue_authority(Some("127.0.0.1"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(Some("[::1]"), local), "[::1]:9324");
        assert_eq!(queue_authority(Some("[::1]:80"), local), "[::1]:80");
        assert_eq!(queue_authority(Some("a/b?x#y"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(Some("user@host"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(None, local), "127.0.0.1:9324");
    }
}
