//! Wire layer: protocol detection, request decoding and response encoding for AWS Query and
//! AWS JSON 1.0 (§1–§5 of sqs-protocol.md).
//!
//! Takes a plain [`WireRequest`] and returns a plain [`WireResponse`]; knows nothing of hyper.
//! Imports `command`, `engine` (only to run the decoded command) and `error`.

pub mod decode;
pub mod dev;
pub mod encode;
pub mod json;
pub mod params;
pub mod xml;

use std::collections::BTreeMap;

use crate::command::validate::INVALID_CHARACTERS;
use crate::command::{Action, Command, RequestContext};
use crate::engine::Engine;
use crate::error::{
    ErrorCode, NON_EXISTENT_QUEUE_JSON, NON_EXISTENT_QUEUE_QUERY, SqsError, SqsResult,
};
use params::{JsonParams, QueryParams};

/// Content type of Query responses.
pub const XML_CONTENT_TYPE: &str = "text/xml";
/// Content type of JSON 1.0 requests and responses.
pub const JSON_CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The parts of an HTTP request the wire layer reads.
#[derive(Debug, Clone, Default)]
pub struct WireRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// Request path, without the query string.
    pub path: String,
    /// Raw query string, if any.
    pub query: Option<String>,
    /// The `X-Amz-Target` header.
    pub target: Option<String>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The `X-Amzn-Trace-Id` header.
    pub trace_header: Option<String>,
    /// Scheme and authority for queue URLs, e.g. `http://localhost:9324`.
    pub base_url: String,
    /// Whether the `Accept` header asks for JSON (developer endpoints only).
    pub accept_json: bool,
    /// The body.
    pub body: Vec<u8>,
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
    /// The SQS action answered, when the request named a known one (for metrics).
    pub action: Option<Action>,
}

/// Which protocol a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Form-encoded request, XML response.
    Query,
    /// `X-Amz-Target` request, JSON response.
    Json,
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
}

/// Renders an error in the given protocol (§5.1, §5.2).
#[must_use]
pub fn error_response(protocol: Protocol, err: &SqsError, request_id: &str) -> WireResponse {
    let spec = err.code.spec();
    match protocol {
        Protocol::Query => {
            let message = if err.code == ErrorCode::QueueDoesNotExist
                && err.message == NON_EXISTENT_QUEUE_JSON
            {
                NON_EXISTENT_QUEUE_QUERY
            } else {
                &err.message
            };
            WireResponse {
                status: spec.status,
                content_type: XML_CONTENT_TYPE,
                headers: Vec::new(),
                action: None,
                body: xml::error_body(spec.fault.as_str(), spec.legacy_code, message, request_id),
            }
        }
        Protocol::Json => WireResponse {
            status: spec.status,
            content_type: JSON_CONTENT_TYPE,
            headers: vec![(
                "x-amzn-query-error",
                format!("{};{}", spec.legacy_code, spec.fault.as_str()),
            )],
            action: None,
            body: json::error_body(spec.json_type, &err.message),
        },
    }
}

/// Handles one request end to end: the developer endpoints, then the SQS API.
pub async fn handle(engine: &Engine, req: WireRequest, request_id: &str) -> WireResponse {
    if req.target.is_none() {
        if req.path == dev::HEALTH_PATH && req.method == "GET" {
            return dev::health(engine);
        }
        if req.path == dev::RESET_PATH && req.method == "POST" {
            return dev::reset(engine, request_id).await;
        }
        if req.path.starts_with(dev::PEEK_PATH) && req.method == "GET" {
            return dev::peek(engine, &req, req.accept_json, request_id);
        }
    }
    let protocol = Protocol::detect(req.target.as_deref(), req.content_type.as_deref());
    match protocol {
        Protocol::Json => handle_json(engine, req, request_id).await,
        Protocol::Query => handle_query(engine, req, request_id).await,
    }
}

fn context(req: &WireRequest) -> RequestContext {
    RequestContext {
        base_url: req.base_url.clone(),
        trace_header: req.trace_header.clone(),
    }
}

async fn handle_json(engine: &Engine, req: WireRequest, request_id: &str) -> WireResponse {
    let action = req
        .target
        .as_deref()
        .and_then(|t| t.strip_prefix("AmazonSQS."))
        .and_then(Action::from_name);
    let mut resp = handle_json_inner(engine, req, action, request_id).await;
    resp.action = action;
    resp
}

async fn handle_json_inner(
    engine: &Engine,
    req: WireRequest,
    action: Option<Action>,
    request_id: &str,
) -> WireResponse {
    let result = async {
        let action = action.ok_or_else(unknown_operation)?;
        let body = if req.body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_slice(&req.body).map_err(|e| {
                // A lone surrogate in the body is a content problem, not a syntax one (§6.3).
                if e.to_string().contains("surrogate") {
                    SqsError::new(ErrorCode::InvalidMessageContents, INVALID_CHARACTERS)
                } else {
                    not_a_structure()
                }
            })?
        };
        let obj = body.as_object().ok_or_else(not_a_structure)?;
        let cmd = decode::decode(action, &JsonParams::new(obj))?;
        let reply = engine.execute(&context(&req), cmd).await?;
        let mut out = json::JsonOut::default();
        encode::encode_reply(&reply, &mut out);
        Ok::<_, SqsError>(serde_json::Value::Object(out.obj).to_string())
    }
    .await;
    match result {
        Ok(body) => WireResponse {
            status: 200,
            content_type: JSON_CONTENT_TYPE,
            headers: Vec::new(),
            action: None,
            body,
        },
        Err(e) => error_response(Protocol::Json, &e, request_id),
    }
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

/// Parses and merges the URL query string and a form body; the body wins (§2.1).
fn query_fields(req: &WireRequest) -> BTreeMap<String, String> {
    let mut fields: BTreeMap<String, String> = req
        .query
        .as_deref()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    if !req.body.is_empty() {
        fields.extend(form_urlencoded::parse(&req.body).into_owned());
    }
    fields
}

/// Whether the path names a queue (`/<account>/<name>`).
fn is_queue_path(path: &str) -> bool {
    path.split('/').filter(|s| !s.is_empty()).count() >= 2
}

async fn handle_query(engine: &Engine, req: WireRequest, request_id: &str) -> WireResponse {
    let mut fields = query_fields(&req);
    let Some(action_name) = fields.remove("Action") else {
        // No action at all: AWS answers 404 with a bare XML element (§1.4).
        return WireResponse {
            status: 404,
            content_type: XML_CONTENT_TYPE,
            headers: Vec::new(),
            action: None,
            body: "<UnknownOperationException/>".into(),
        };
    };
    let result: SqsResult<(Action, String)> = async {
        let action = Action::from_name(&action_name)
            .filter(|a| {
                !(is_queue_path(&req.path) && matches!(a, Action::CreateQueue | Action::ListQueues))
            })
            .ok_or_else(|| {
                SqsError::new(
                    ErrorCode::InvalidAction,
                    format!("The action {action_name} is not valid for this endpoint."),
                )
            })?;
        if !fields.contains_key("QueueUrl") && is_queue_path(&req.path) {
            // Java v1 and JS v2 send the queue URL as the path (§2.1, G-22).
            fields.insert("QueueUrl".into(), req.path.clone());
        }
        let cmd: Command = decode::decode(action, &QueryParams::new(fields, action.name()))?;
        let reply = engine.execute(&context(&req), cmd).await?;
        let mut out = xml::XmlOut::default();
        encode::encode_reply(&reply, &mut out);
        Ok((action, out.buf))
    }
    .await;
    let named = Action::from_name(&action_name);
    let mut resp = match result {
        Ok((action, buf)) => WireResponse {
            status: 200,
            content_type: XML_CONTENT_TYPE,
            headers: Vec::new(),
            action: None,
            body: xml::envelope(
                action.name(),
                encode::has_result(action).then_some(buf.as_str()),
                request_id,
            ),
        },
        Err(e) => error_response(Protocol::Query, &e, request_id),
    };
    resp.action = named;
    resp
}
