//! HTTP layer: what a request must pass before its body is read. A browser request must name
//! a host the server knows and come from an allowed origin (`hosts.rs`, `origin.rs`); with
//! `--auth sigv4` an SQS request must carry a signature whose key, date, scope and signed
//! headers check out (`sigv4.rs`; the signature itself is checked once the body is in); with
//! `--auth sigv4` or `--admin-token`, an admin request must carry the admin token
//! (`Authorization: Bearer …`) or a valid signature, except the health checks (and `/metrics`
//! with `--metrics-open`). So an unauthenticated client never makes the server buffer a body.

use std::net::SocketAddr;
use std::time::SystemTime;

use hyper::HeaderMap;
use hyper::header::{ACCESS_CONTROL_REQUEST_HEADERS, AUTHORIZATION, HOST, ORIGIN};
use serde_json::json;

use super::origin::{self, BrowserHeaders, Verdict};
use super::sigv4::{self, Checked, Head};
use crate::admin::routes::{Access, Route};
use crate::error::{ErrorCode, SqsError};
use crate::http::front::Front;
use crate::wire::{self, Protocol, WireResponse};

/// A request that passed the gate.
pub(crate) struct Passed {
    /// CORS headers to add to the answer.
    pub cors: Vec<(&'static str, String)>,
    /// The signature, to verify over the body once it is read.
    pub signed: Option<Checked>,
    /// Whether the caller proved who it is (or the server requires nothing): admin data may be
    /// shown.
    pub authorized: bool,
}

/// Why a request stops at the gate: the answer to send.
pub(crate) type Stopped = WireResponse;

fn header<'a>(h: &'a HeaderMap, name: &hyper::header::HeaderName) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// The admin token the request presents, if any (`Authorization: Bearer <token>`).
fn bearer(h: &HeaderMap) -> Option<&str> {
    let v = header(h, &AUTHORIZATION)?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Whether the request presents the configured admin token (compared in constant time).
fn has_token(front: &Front, h: &HeaderMap) -> bool {
    let (Some(want), Some(got)) = (front.options.admin_token.as_deref(), bearer(h)) else {
        return false;
    };
    want.len() == got.len()
        && want
            .bytes()
            .zip(got.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Judges a request by its head alone.
pub(crate) fn check(
    front: &Front,
    route: Option<Route>,
    head: &Head<'_>,
    protocol: Protocol,
    local: Option<SocketAddr>,
    request_id: &str,
) -> Result<Passed, Stopped> {
    let h = head.headers;
    let browser = BrowserHeaders {
        origin: header(h, &ORIGIN),
        fetch_site: h.get("sec-fetch-site").and_then(|v| v.to_str().ok()),
        any_fetch: h.keys().any(|k| k.as_str().starts_with("sec-fetch-")),
        host: header(h, &HOST),
    };
    let refuse = |message: String| {
        // [E] Not an AWS behaviour: AWS authenticates instead (docs/security.md).
        let err = SqsError::new(ErrorCode::AccessDenied, message);
        wire::error_response(protocol, &err, request_id)
    };
    let options = &front.options;
    let cors = match options
        .cors_origins
        .judge(browser, &options.allowed_hosts, local)
    {
        Verdict::Plain => Vec::new(),
        Verdict::Allowed(o) if head.method == "OPTIONS" => {
            let mut resp = WireResponse::new(204, "text/plain", String::new());
            resp.headers =
                origin::preflight_headers(&o, header(h, &ACCESS_CONTROL_REQUEST_HEADERS));
            return Err(resp);
        }
        Verdict::Allowed(o) => origin::cors_headers(&o),
        Verdict::Refused(o) => {
            return Err(refuse(format!(
                "Cross-origin request from {o} refused. Start localsqs with --cors-origin <origin> to allow a browser app."
            )));
        }
        Verdict::UnknownHost(host) => {
            return Err(refuse(format!(
                "Browser request to host {host:?} refused: it is not a name this server knows, as a DNS-rebinding page would send. Start localsqs with --allowed-host <name> to allow it."
            )));
        }
    };
    let signed_check = |creds| {
        sigv4::check(creds, head, SystemTime::now())
            .map_err(|e| wire::error_response(protocol, &e, request_id))
    };
    let (signed, authorized) = match (route, &options.sigv4) {
        // The SQS API: signed when --auth sigv4 is on; the console signs with the admin token.
        (None, None) => (None, true),
        (None, Some(_)) if has_token(front, h) => (None, true),
        // SNS's SubscribeURL and UnsubscribeURL are followed unsigned, as AWS serves them: the
        // token (or, for Unsubscribe, the subscription's AuthenticateOnUnsubscribe) is their
        // check, made by SNS itself.
        (None, Some(_)) if !sigv4::is_signed(h, head.raw_query) && sns_link(head) => (None, true),
        (None, Some(creds)) => (Some(signed_check(creds)?), true),
        (Some(r), creds) => {
            let required = creds.is_some() || options.admin_token.is_some();
            let open = match r.access() {
                Access::Open => true,
                Access::Metrics => options.metrics_open,
                Access::Page | Access::Guarded => false,
            };
            if !required || has_token(front, h) {
                (None, true)
            } else if let (Some(creds), true) = (creds, sigv4::is_signed(h, head.raw_query)) {
                (Some(signed_check(creds)?), true)
            } else if open || r.access() == Access::Page {
                (None, open)
            } else {
                return Err(unauthorized(front));
            }
        }
    };
    Ok(Passed {
        cors,
        signed,
        authorized,
    })
}

/// Whether the request is an unsigned SNS link: a GET of `Action=ConfirmSubscription` (with a
/// `Token`) or `Action=Unsubscribe`, the URLs SNS hands out in its messages.
fn sns_link(head: &Head<'_>) -> bool {
    let Some(q) = head.raw_query.filter(|_| head.method == "GET") else {
        return false;
    };
    let has = |p: &str| {
        q.split('&')
            .any(|kv| kv == p || kv.starts_with(&format!("{p}=")))
    };
    (has("Action=ConfirmSubscription") && has("Token")) || has("Action=Unsubscribe")
}

/// 401 for an admin request without the token or a signature.
fn unauthorized(front: &Front) -> WireResponse {
    let how = match (&front.options.admin_token, &front.options.sigv4) {
        (Some(_), Some(_)) => {
            "the admin token (Authorization: Bearer <token>) or a SigV4 signature from a configured credential"
        }
        (Some(_), None) => "the admin token (Authorization: Bearer <token>)",
        (None, _) => {
            "a SigV4 signature from a configured credential (or start the server with --admin-token and send Authorization: Bearer <token>)"
        }
    };
    let mut resp = WireResponse::json(
        401,
        &json!({ "error": format!("This endpoint needs {how}; see docs/security.md.") }),
    );
    resp.headers
        .push(("www-authenticate", "Bearer realm=\"localsqs\"".to_owned()));
    resp
}
