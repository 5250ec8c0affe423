//! Wire layer: the developer endpoints next to the SQS API: a LocalStack-compatible message
//! peek (`/_aws/sqs/messages`), a health check and a state reset.

use std::collections::BTreeMap;

use serde_json::json;

use super::{
    JSON_CONTENT_TYPE, Protocol, WireRequest, WireResponse, XML_CONTENT_TYPE, encode,
    error_response, json, xml,
};
use crate::command::{Action, ReceiveMessageResult, Reply};
use crate::engine::Engine;
use crate::error::SqsError;

/// Path of the LocalStack-compatible peek endpoint.
pub const PEEK_PATH: &str = "/_aws/sqs/messages";
/// Path of the health endpoint.
pub const HEALTH_PATH: &str = "/health";
/// Path of the reset endpoint.
pub const RESET_PATH: &str = "/_localsqs/reset";

fn flag(fields: &BTreeMap<String, String>, name: &str) -> bool {
    fields
        .get(name)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// `GET /_aws/sqs/messages?QueueUrl=…&ShowInvisible=true&ShowDelayed=true`, or the path form
/// `/_aws/sqs/messages/<region>/<account>/<queue>`. Answers a ReceiveMessage-shaped body, XML
/// by default and JSON when the client accepts `application/json`. Visibility and receive
/// counts are untouched.
pub fn peek(
    engine: &Engine,
    req: &WireRequest,
    accept_json: bool,
    request_id: &str,
) -> WireResponse {
    let protocol = if accept_json {
        Protocol::Json
    } else {
        Protocol::Query
    };
    let fields = super::query_fields(req);
    let from_path = req
        .path
        .strip_prefix(PEEK_PATH)
        .and_then(|rest| rest.rsplit('/').next())
        .filter(|name| !name.is_empty())
        .map(str::to_owned);
    let Some(url) = fields.get("QueueUrl").cloned().or(from_path) else {
        return error_response(protocol, &SqsError::missing("QueueUrl"), request_id);
    };
    match engine.peek(
        &url,
        flag(&fields, "ShowInvisible"),
        flag(&fields, "ShowDelayed"),
    ) {
        Err(e) => error_response(protocol, &e, request_id),
        Ok(messages) => {
            let reply = Reply::ReceiveMessage(ReceiveMessageResult { messages });
            if accept_json {
                let mut out = json::JsonOut::default();
                encode::encode_reply(&reply, &mut out);
                WireResponse {
                    status: 200,
                    content_type: JSON_CONTENT_TYPE,
                    headers: Vec::new(),
                    action: None,
                    body: serde_json::Value::Object(out.obj).to_string(),
                }
            } else {
                let mut out = xml::XmlOut::default();
                encode::encode_reply(&reply, &mut out);
                WireResponse {
                    status: 200,
                    content_type: XML_CONTENT_TYPE,
                    headers: Vec::new(),
                    action: None,
                    body: xml::envelope(Action::ReceiveMessage.name(), Some(&out.buf), request_id),
                }
            }
        }
    }
}

/// `GET /health`: liveness and readiness. The engine answering at all means both.
#[must_use]
pub fn health(engine: &Engine) -> WireResponse {
    let queues = engine.queue_counts().len();
    WireResponse {
        status: 200,
        content_type: "application/json",
        headers: Vec::new(),
        action: None,
        body: json!({
            "status": "ok",
            "live": true,
            "ready": true,
            "mode": if engine.durable() { "durable" } else { "memory" },
            "queues": queues,
        })
        .to_string(),
    }
}

/// `POST /_localsqs/reset`: drops every queue and message.
pub async fn reset(engine: &Engine, request_id: &str) -> WireResponse {
    match engine.reset().await {
        Ok(()) => WireResponse {
            status: 200,
            content_type: "application/json",
            headers: Vec::new(),
            action: None,
            body: json!({ "reset": true }).to_string(),
        },
        Err(e) => error_response(Protocol::Json, &e, request_id),
    }
}
