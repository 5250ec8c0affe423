//! Wire layer: protocol detection, request decoding and response encoding for AWS Query and
//! AWS JSON 1.0 (docs/protocol.md §1–§5).
//!
//! Pure: [`decode`] turns a plain [`WireRequest`] into a [`Decoded`] command (or the error
//! response to send), and [`encode`] turns a command's result into a [`WireResponse`]. It knows
//! nothing of hyper and never runs the engine; `server` does decode → execute → encode.
//! Imports `command` and `error` only.

pub mod decode;
pub mod encode;
pub mod form;
pub mod json;
pub mod json_tree;
pub mod params;
pub mod query_json;
pub mod xml;

pub use form::form_fields;

use crate::command::validate::INVALID_CHARACTERS;
use crate::command::{Action, Command, Reply};
use crate::error::{ErrorCode, SqsError, SqsResult};
use form::Form;
use params::{JsonParams, QueryParams};

/// Content type of Query responses.
pub const XML_CONTENT_TYPE: &str = "text/xml";
/// Content type of JSON 1.0 requests and responses.
pub const JSON_CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The parts of an HTTP request the wire layer reads, borrowed from the HTTP request (copying
/// them was four allocations per request).
#[derive(Debug, Clone)]
pub struct WireRequest<'a> {
    /// Which protocol the request speaks, detected once from its headers ([`Protocol::detect`]).
    pub protocol: Protocol,
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// Request path, without the query string.
    pub path: &'a str,
    /// Raw query string, if any.
    pub query: Option<&'a str>,
    /// The `X-Amz-Target` header.
    pub target: Option<&'a str>,
    /// The `X-Amzn-Trace-Id` header.
    pub trace_header: Option<&'a str>,
    /// The `Authorization` header (SigV4: its credential scope names the access key and region).
    pub authorization: Option<&'a str>,
    /// Scheme and authority for queue URLs, e.g. `http://localhost:9324`.
    pub base_url: String,
    /// The body.
    pub body: &'a [u8],
}

/// What to send back.
#[derive(Debug, Clone)]
pub struct WireResponse {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Extra headers (`x-amzn-query-error`).
    pub headers: Vec<(&'static str, String)>,
    /// Body bytes.
    pub body: String,
    /// The SQS action answered, when the request named a known one (for metrics and logs).
    pub action: Option<Action>,
}

impl WireResponse {
    /// A response with no extra headers and no action.
    #[must_use]
    pub fn new(status: u16, content_type: &'static str, body: String) -> Self {
        Self {
            status,
            content_type,
            headers: Vec::new(),
            body,
            action: None,
        }
    }

    /// A plain `application/json` response (admin endpoints).
    #[must_use]
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::new(status, "application/json", body.to_string())
    }

    fn with_action(mut self, action: Option<Action>) -> Self {
        self.action = action;
        self
    }
}

/// Which protocol a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Form-encoded request, XML response.
    Query,
    /// `X-Amz-Target` request, JSON response.
    Json,
    /// A Query request whose client accepts JSON: AWS answers with the Query response
    /// rendered as JSON (§3.1).
    QueryJson,
}

impl Protocol {
    /// Detects the protocol from the headers alone (§1.1): JSON when `X-Amz-Target` or the
    /// JSON 1.0 content type is present, Query otherwise.
    #[must_use]
    pub fn detect(target: Option<&str>, content_type: Option<&str>) -> Protocol {
        if target.is_some() || content_type.is_some_and(|c| c.starts_with(JSON_CONTENT_TYPE)) {
            Protocol::Json
        } else {
            Protocol::Query
        }
    }

    /// The protocol to answer in, given whether the client's `Accept` header asks for JSON.
    #[must_use]
    pub fn negotiate(self, accept_json: bool) -> Protocol {
        match self {
            Protocol::Query if accept_json => Protocol::QueryJson,
            other => other,
        }
    }
}

/// Content type of Query responses rendered as JSON.
pub const QUERY_JSON_CONTENT_TYPE: &str = "application/json";

/// A request decoded into a command, with everything needed to run and answer it: the caller
/// chooses the account and region to run it in from `access_key` and `region` and builds the
/// `RequestContext` from these request facts.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The protocol to answer in.
    pub protocol: Protocol,
    /// The action named by the request.
    pub action: Action,
    /// Scheme and authority for queue URLs, e.g. `http://localhost:9324`.
    pub base_url: String,
    /// The `X-Amzn-Trace-Id` header.
    pub trace_header: Option<String>,
    /// The access key id the request was signed with (SigV4 credential), if it was signed.
    pub access_key: Option<String>,
    /// The region of the request's SigV4 credential scope, if it was signed.
    pub region: Option<String>,
    /// The command to execute.
    pub command: Command,
}

/// Renders an error in the given protocol (§5.1, §5.2). The message is the one the error table
/// fixes for this code and protocol, if any, else the error's own.
#[must_use]
pub fn error_response(protocol: Protocol, err: &SqsError, request_id: &str) -> WireResponse {
    let spec = err.code.spec();
    match protocol {
        Protocol::Query => WireResponse::new(
            spec.status,
            XML_CONTENT_TYPE,
            xml::error_body(
                spec.fault.as_str(),
                spec.legacy_code,
                err.text(true),
                request_id,
            ),
        ),
        Protocol::QueryJson => WireResponse::new(
            spec.status,
            QUERY_JSON_CONTENT_TYPE,
            query_json::error_body(
                spec.fault.as_str(),
                spec.legacy_code,
                err.text(true),
                request_id,
            ),
        ),
        Protocol::Json => {
            let mut resp = WireResponse::new(
                spec.status,
                JSON_CONTENT_TYPE,
                json::error_body(spec.json_type, err.text(false)),
            );
            resp.headers.push((
                "x-amzn-query-error",
                format!("{};{}", spec.legacy_code, spec.fault.as_str()),
            ));
            resp
        }
    }
}

/// Decodes an SQS API request: its action, request facts and command, or the response that
/// rejects it (unknown action, malformed body, invalid parameters).
pub fn decode(req: &WireRequest<'_>, request_id: &str) -> Result<Decoded, WireResponse> {
    match req.protocol {
        Protocol::Json => decode_json(req, request_id),
        Protocol::Query | Protocol::QueryJson => decode_query(req, request_id),
    }
}

/// Encodes the result of running `action` in `protocol`.
#[must_use]
pub fn encode(
    protocol: Protocol,
    action: Action,
    result: &SqsResult<Reply>,
    request_id: &str,
) -> WireResponse {
    let resp = match (protocol, result) {
        (_, Err(e)) => error_response(protocol, e, request_id),
        (Protocol::Json, Ok(reply)) => {
            let mut out = json::JsonOut::default();
            encode::encode_reply(reply, &mut out);
            WireResponse::new(200, JSON_CONTENT_TYPE, out.finish())
        }
        (Protocol::QueryJson, Ok(reply)) => {
            let mut out = query_json::QueryJsonOut::new(query_json::Dialect::Aws);
            encode::encode_reply(reply, &mut out);
            WireResponse::new(
                200,
                QUERY_JSON_CONTENT_TYPE,
                query_json::envelope(
                    action.name(),
                    encode::has_result(action).then_some(out.obj),
                    request_id,
                ),
            )
        }
        (Protocol::Query, Ok(reply)) => {
            let mut doc = xml::Response::new(action.name(), encode::has_result(action));
            encode::encode_reply(reply, doc.out());
            WireResponse::new(200, XML_CONTENT_TYPE, doc.finish(request_id))
        }
    };
    resp.with_action(Some(action))
}

/// A reply rendered as its Query XML document turned into JSON, element names kept: the shape
/// of LocalStack's developer endpoints with `Accept: application/json`.
#[must_use]
pub fn encode_xml_names(action: Action, reply: &Reply, request_id: &str) -> WireResponse {
    let mut out = query_json::QueryJsonOut::new(query_json::Dialect::XmlNames);
    encode::encode_reply(reply, &mut out);
    WireResponse::new(
        200,
        QUERY_JSON_CONTENT_TYPE,
        query_json::envelope(action.name(), Some(out.obj), request_id),
    )
}

/// The SigV4 credential of a request, `<access key>/<date>/<region>/<service>/aws4_request`:
/// from the `Authorization` header, else from a presigned request's `X-Amz-Credential`.
fn credential(req: &WireRequest<'_>, presigned: Option<&str>) -> Option<(String, String)> {
    let from_header = req.authorization.and_then(|a| {
        let rest = a.strip_prefix("AWS4-HMAC-SHA256")?;
        let cred = rest
            .split(',')
            .find_map(|p| p.trim().strip_prefix("Credential="))?;
        Some(cred.trim())
    });
    let cred = from_header.or(presigned)?;
    let mut parts = cred.split('/');
    let key = parts.next().filter(|k| !k.is_empty())?;
    let region = parts.nth(1).filter(|r| !r.is_empty())?;
    Some((key.to_owned(), region.to_owned()))
}

/// `command`, decoded from `req`, with the request facts it runs with.
fn decoded(
    req: &WireRequest<'_>,
    presigned: Option<&str>,
    action: Action,
    command: Command,
) -> Decoded {
    let (access_key, region) = credential(req, presigned).unzip();
    Decoded {
        protocol: req.protocol,
        action,
        base_url: req.base_url.clone(),
        trace_header: req.trace_header.map(str::to_owned),
        access_key,
        region,
        command,
    }
}

fn decode_json(req: &WireRequest<'_>, request_id: &str) -> Result<Decoded, WireResponse> {
    let action = req
        .target
        .and_then(|t| t.strip_prefix("AmazonSQS."))
        .and_then(Action::from_name);
    let reject = |e: SqsError| error_response(Protocol::Json, &e, request_id).with_action(action);
    let action = action.ok_or_else(|| reject(unknown_operation()))?;
    let body = if req.body.iter().all(u8::is_ascii_whitespace) {
        json_tree::Jv::Obj(Vec::new())
    } else {
        json_tree::Jv::parse(req.body).map_err(|_| {
            // A lone surrogate escape is a content problem, not a syntax one (§6.3).
            reject(if json::has_lone_surrogate(req.body) {
                SqsError::new(ErrorCode::InvalidMessageContents, INVALID_CHARACTERS)
            } else {
                not_a_structure()
            })
        })?
    };
    let obj = body.as_object().ok_or_else(|| reject(not_a_structure()))?;
    let command = decode::decode(action, &JsonParams::new(obj)).map_err(reject)?;
    Ok(decoded(req, None, action, command))
}

/// [E] The text for a JSON body that is not an object.
fn not_a_structure() -> SqsError {
    SqsError::new(
        ErrorCode::SerializationException,
        "Start of structure or map found where not expected.",
    )
}

fn unknown_operation() -> SqsError {
    SqsError::new(ErrorCode::UnknownOperation, "")
}

/// Whether the path names a queue (`/<account>/<name>`).
fn is_queue_path(path: &str) -> bool {
    path.split('/').filter(|s| !s.is_empty()).count() >= 2
}

fn decode_query(req: &WireRequest<'_>, request_id: &str) -> Result<Decoded, WireResponse> {
    let protocol = req.protocol;
    let mut fields =
        Form::parse(req.query, req.body).map_err(|e| error_response(protocol, &e, request_id))?;
    let Some(action_name) = fields.remove("Action") else {
        // No action at all: AWS answers 404 with a bare XML element (§1.4).
        return Err(WireResponse::new(
            404,
            XML_CONTENT_TYPE,
            "<UnknownOperationException/>".into(),
        ));
    };
    let named = Action::from_name(&action_name);
    let reject = |e: SqsError| error_response(protocol, &e, request_id).with_action(named);
    let action = named
        .filter(|a| {
            !(is_queue_path(req.path) && matches!(a, Action::CreateQueue | Action::ListQueues))
        })
        .ok_or_else(|| {
            reject(SqsError::new(
                ErrorCode::InvalidAction,
                format!("The action {action_name} is not valid for this endpoint."),
            ))
        })?;
    if is_queue_path(req.path) {
        // Java v1 and JS v2 send the queue URL as the path (§2.1, G-22).
        fields.insert_absent("QueueUrl", req.path);
    }
    let command =
        decode::decode(action, &QueryParams::new(&fields, action.name())).map_err(reject)?;
    Ok(decoded(
        req,
        fields.get("X-Amz-Credential"),
        action,
        command,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_scope_names_the_access_key_and_region() {
        let mut req = WireRequest {
            protocol: Protocol::Json,
            method: "POST",
            path: "/",
            query: None,
            target: None,
            trace_header: None,
            authorization: Some(
                "AWS4-HMAC-SHA256 Credential=123456789012/20261201/eu-west-1/sqs/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature=abc",
            ),
            base_url: String::new(),
            body: &[],
        };
        let list = || Command::ListQueues(crate::command::ListQueues::default());
        let d = decoded(&req, None, Action::ListQueues, list());
        assert_eq!(d.access_key.as_deref(), Some("123456789012"));
        assert_eq!(d.region.as_deref(), Some("eu-west-1"));
        req.authorization = None;
        let presigned = Some("AKID/20261201/ap-south-1/sqs/aws4_request");
        let d = decoded(&req, presigned, Action::ListQueues, list());
        assert_eq!(d.access_key.as_deref(), Some("AKID"));
        assert_eq!(d.region.as_deref(), Some("ap-south-1"));
        assert_eq!(decoded(&req, None, Action::ListQueues, list()).region, None);
    }
}
