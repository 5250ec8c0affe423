//! Admin layer: the LocalStack-compatible peek, `GET /_aws/sqs/messages`: a queue's messages
//! in a ReceiveMessage-shaped answer, without receiving them. It mimics an SQS API, so its
//! errors are SQS's (in the request's protocol), not the admin endpoints' `{"error"}` shape.
//! With `--compat localstack` it answers as LocalStack does instead (`peek_localstack.rs`).

use super::routes::{PEEK_NEXT_HEADER, PEEK_PATH};
use super::state::{Admin, Answer, Req};
use crate::command::{Action, ReceiveMessageResult, Reply, Scope};
use crate::error::SqsError;
use crate::wire::{self, Protocol, WireRequest, WireResponse};

/// Most messages one peek answers; more come page by page.
const PEEK_PAGE: usize = 1000;

/// `GET /_aws/sqs/messages?QueueUrl=…&ShowInvisible=true&ShowDelayed=true`, or the path form
/// `/_aws/sqs/messages/<region>/<account>/<queue>`. Answers a ReceiveMessage-shaped body, XML
/// by default and JSON when the client accepts `application/json`. Visibility and receive
/// counts are untouched.
pub fn peek(admin: &Admin, r: &Req<'_>) -> Answer {
    if admin.localstack {
        return Ok(super::peek_localstack::peek(admin, r));
    }
    Ok(peek_page(admin, r.wire, r.accept_json, r.request_id))
}

fn peek_page(
    admin: &Admin,
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
    let engine = &admin.engine;
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
