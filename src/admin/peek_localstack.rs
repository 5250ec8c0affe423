//! Admin layer: LocalStack's developer endpoint, `/_aws/sqs/messages`, as LocalStack answers it
//! (`--compat localstack`, README "From LocalStack"; docs/protocol.md §1.5).
//!
//! Besides the GET with a `QueueUrl` parameter (or the path form) that the plain peek takes, it
//! takes what an SDK sends when this path is its endpoint URL: a ReceiveMessage in either
//! protocol, answered with every message of the queue (MaxNumberOfMessages ignored, nothing
//! received); any other action is refused with `InvalidRequest`. Its answers are LocalStack's:
//! `IsVisible` (with `ShowInvisible`) and `IsDelayed` (with `ShowDelayed`) attributes,
//! `ApproximateFirstReceiveTimestamp` `0` for a message never received, a FIFO group with a
//! message in flight left out whole unless `ShowInvisible`, a queue URL that is not one
//! answered 404 `InvalidAddress`, no queue URL at all `NonExistentQueue`, and with `Accept:
//! application/json` the XML document read by xmltodict (one message is an object) and errors
//! as `{"ErrorResponse": {"Error": …}}`.

use super::routes::{PEEK_NEXT_HEADER, PEEK_PATH};
use super::state::{Admin, Req};
use crate::command::{Action, Command, Message, ReceiveMessageResult, Reply, Scope};
use crate::engine::{PeekFilter, PeekState};
use crate::error::{ErrorCode, SqsError, SqsResult};
use crate::wire::{self, Protocol, WireRequest, WireResponse};

/// Most messages one answer lists; more come page by page (`MaxResults`, `NextToken`).
const PAGE: usize = 1000;

/// LocalStack's text for a queue URL it cannot read [E: LocalStack `developer_api.py`; the
/// address is fixed, whatever the URL].
const INVALID_ADDRESS: &str =
    "The address https://queue.amazonaws.com/ is not valid for this endpoint.";

/// LocalStack's text for an action other than ReceiveMessage [E: LocalStack's tests].
const ONLY_RECEIVE: &str = "This endpoint only accepts ReceiveMessage calls";

/// `/_aws/sqs/messages[/<region>/<account>/<queue>]`, by any method, as LocalStack answers it.
pub fn peek(admin: &Admin, r: &Req<'_>) -> WireResponse {
    let req = r.wire;
    let mut resp = match list(admin, req, r.request_id) {
        Ok((result, next)) => {
            let mut resp = render(req.protocol, &Ok(result), r.request_id);
            if let Some(next) = next {
                resp.headers.push((PEEK_NEXT_HEADER, next.to_string()));
            }
            resp
        }
        Err(Stop::Error(e)) => render(req.protocol, &Err(e), r.request_id),
        Err(Stop::Rejected(resp)) => resp,
    };
    // A peek is not an SQS request: keep it out of the per-action latency metrics.
    resp.action = None;
    resp
}

/// The answer in the request's protocol: JSON 1.0 to a JSON SDK call, else Query: XML, or
/// with `Accept: application/json` the XML as xmltodict reads it.
fn render(protocol: Protocol, result: &SqsResult<Reply>, request_id: &str) -> WireResponse {
    match protocol {
        Protocol::QueryJson => wire::encode_xmltodict(Action::ReceiveMessage, result, request_id),
        p => wire::encode(p, Action::ReceiveMessage, result, request_id),
    }
}

/// Why a listing stops.
enum Stop {
    /// An error to render in the request's protocol.
    Error(SqsError),
    /// An SDK call that does not decode, answered as the SQS API answers it.
    Rejected(WireResponse),
}

impl From<SqsError> for Stop {
    fn from(e: SqsError) -> Self {
        Stop::Error(e)
    }
}

/// Where the request says the queue is: a queue URL to read, or the path form's parts.
enum Named {
    Url(String),
    Path(Scope, String),
}

fn list(
    admin: &Admin,
    req: &WireRequest<'_>,
    request_id: &str,
) -> Result<(Reply, Option<u64>), Stop> {
    // ShowInvisible and friends come from the URL query and a form body (never a JSON body).
    let body: &[u8] = if req.target.is_some() { b"" } else { req.body };
    let fields = wire::form_fields(req.query, body)?;
    let flag = |name: &str| {
        fields
            .get(name)
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    };
    let engine = &admin.engine;
    let mut scope = Scope::clone(&engine.default_scope());
    let named = if req.target.is_some() || fields.contains_key("Action") {
        // An SDK's call: only a ReceiveMessage is taken, and only its QueueUrl matters.
        let probe = WireRequest {
            protocol: req.protocol,
            method: req.method,
            path: "/",
            query: req.query,
            target: req.target,
            trace_header: req.trace_header,
            authorization: req.authorization,
            base_url: req.base_url.clone(),
            body: req.body,
        };
        let decoded = wire::decode(&probe, request_id).map_err(Stop::Rejected)?;
        if let Some(region) = decoded.region {
            scope.region = region;
        }
        match decoded.command {
            Command::ReceiveMessage(c) => Named::Url(c.queue_url),
            _ => return Err(SqsError::new(ErrorCode::InvalidRequest, ONLY_RECEIVE).into()),
        }
    } else {
        let segs: Vec<&str> = req
            .path
            .strip_prefix(PEEK_PATH)
            .unwrap_or_default()
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        match (segs.as_slice(), fields.get("QueueUrl")) {
            ([region, account, name], _) => {
                (*region).clone_into(&mut scope.region);
                Named::Path(scope.clone(), format!("/{account}/{name}"))
            }
            (_, Some(url)) => Named::Url(url.clone()),
            (_, None) => Named::Url(String::new()),
        }
    };
    let url = match named {
        Named::Path(s, url) => {
            scope = s;
            url
        }
        Named::Url(url) if url.is_empty() => return Err(SqsError::queue_does_not_exist().into()),
        Named::Url(url) => {
            let (account, region, name) = localstack_parts(&url)
                .ok_or_else(|| SqsError::new(ErrorCode::InvalidAddress, INVALID_ADDRESS))?;
            if let Some(region) = region {
                region.clone_into(&mut scope.region);
            }
            format!("/{account}/{name}")
        }
    };
    let max = match fields.get("MaxResults").map(|m| m.parse::<usize>()) {
        None => PAGE,
        Some(Ok(m)) if (1..=PAGE).contains(&m) => m,
        Some(_) => {
            return Err(SqsError::invalid_param(
                fields.get("MaxResults").map_or("", String::as_str),
                "MaxResults",
                "MaxResults must be an integer between 1 and 1000.",
            )
            .into());
        }
    };
    let from = match fields.get("NextToken").map(|t| t.parse::<u64>()) {
        None => 0,
        Some(Ok(t)) => t,
        Some(Err(_)) => {
            let token = fields.get("NextToken").map_or("", String::as_str);
            return Err(SqsError::invalid_param(token, "NextToken", "Invalid token.").into());
        }
    };
    let filter = PeekFilter {
        show_invisible: flag("ShowInvisible"),
        show_delayed: flag("ShowDelayed"),
        hide_blocked_groups: true,
    };
    let (entries, next) = engine.peek_entries(&scope, &url, filter, from, max)?;
    let messages = entries
        .into_iter()
        .map(|(m, state)| decorate(m, state, filter))
        .collect();
    Ok((
        Reply::ReceiveMessage(ReceiveMessageResult { messages }),
        next,
    ))
}

/// LocalStack's reading of a queue URL: a path of `<account>/<name>` or
/// `queue/<region>/<account>/<name>`, the region also from a `sqs.<region>.…`,
/// `<region>.queue.…` or `queue.…` (us-east-1) host; anything else is no queue URL.
fn localstack_parts(url: &str) -> Option<(&str, Option<&str>, &str)> {
    let url = url.trim_end_matches('/');
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.split(['?', '#']).next().unwrap_or("");
    let segs: Vec<&str> = path.split('/').collect();
    let host = host.split(':').next().unwrap_or("");
    let labels: Vec<&str> = host.split('.').collect();
    match segs.as_slice() {
        ["queue", region, account, name] => Some((account, Some(region), name)),
        [_, _, _, _] => None,
        [account, name] => {
            let region = if host.starts_with("sqs.") {
                labels.get(1).copied()
            } else if host.contains(".queue.") {
                // `.queue.` must follow the region directly.
                if labels.get(1) != Some(&"queue") {
                    return None;
                }
                Some(labels[0])
            } else if host.starts_with("queue") {
                Some("us-east-1")
            } else {
                None
            };
            Some((account, region, name))
        }
        _ => None,
    }
}

/// LocalStack's attributes on a listed message: `ApproximateFirstReceiveTimestamp` always
/// (`0` before the first receive), `IsVisible` with ShowInvisible (a delayed message counts as
/// visible there), `IsDelayed` with ShowDelayed.
fn decorate(mut m: Message, state: PeekState, filter: PeekFilter) -> Message {
    const FIRST: &str = "ApproximateFirstReceiveTimestamp";
    if !m.attributes.iter().any(|(k, _)| k == FIRST) {
        let at = m
            .attributes
            .iter()
            .position(|(k, _)| k == "ApproximateReceiveCount")
            .map_or(m.attributes.len(), |i| i + 1);
        m.attributes.insert(at, (FIRST.to_owned(), "0".to_owned()));
    }
    let yes_no = |b: bool| if b { "true" } else { "false" }.to_owned();
    if filter.show_invisible {
        let visible = state != PeekState::InFlight;
        m.attributes.push(("IsVisible".to_owned(), yes_no(visible)));
    }
    if filter.show_delayed {
        let delayed = state == PeekState::Delayed;
        m.attributes.push(("IsDelayed".to_owned(), yes_no(delayed)));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_urls_as_localstack_reads_them() {
        let a = "000000000000";
        assert_eq!(
            localstack_parts("http://sqs.eu-west-1.localhost.localstack.cloud:4566/000000000000/q"),
            Some((a, Some("eu-west-1"), "q"))
        );
        assert_eq!(
            localstack_parts(
                "http://eu-west-2.queue.localhost.localstack.cloud:4566/000000000000/q"
            ),
            Some((a, Some("eu-west-2"), "q"))
        );
        assert_eq!(
            localstack_parts("http://queue.localhost.localstack.cloud:4566/000000000000/q/"),
            Some((a, Some("us-east-1"), "q"))
        );
        assert_eq!(
            localstack_parts("http://localhost:4566/queue/ap-south-1/000000000000/q"),
            Some((a, Some("ap-south-1"), "q"))
        );
        assert_eq!(
            localstack_parts("http://localhost:4566/000000000000/q"),
            Some((a, None, "q"))
        );
        for bad in [
            "http://localhost:4566/nonsense",
            "q",
            "http://localhost:4566/a/b/c",
            "http://localhost:4566/x/r/a/q",
            "http://localhost:4566",
        ] {
            assert_eq!(localstack_parts(bad), None, "{bad}");
        }
    }
}
