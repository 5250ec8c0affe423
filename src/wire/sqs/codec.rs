//! Wire layer, SQS: the SQS API's entry points. [`decode`] turns a plain [`WireRequest`] into a
//! [`Decoded`] command (or the error response to send), [`encode`] turns a command's result into
//! a [`WireResponse`], and [`error_response`] renders an [`SqsError`] in SQS's envelopes
//! (docs/protocol.md §1–§5).
//!
//! The protocol pieces these use are service-neutral (`form`, `params`, `json_tree`, `json`,
//! `xml`, `query_json`); what is SQS's is here and beside it: the action table (`command`), the
//! Query name table (`names.rs`), the decoders (`decode.rs`) and encoders (`encode.rs`), the
//! JSON target prefix, and the [`SQS`] descriptor the envelopes are written with.

use std::collections::BTreeMap;

use super::decode::decode as decode_command;
use super::encode::encode_reply;
use super::names::flat_name;
use crate::command::validate::INVALID_CHARACTERS;
use crate::command::{Action, Command, Reply};
use crate::error::{ErrorCode, SqsError, SqsResult};
use crate::wire::form::{Form, NotUtf8};
use crate::wire::json;
use crate::wire::json_tree;
use crate::wire::params::{JsonParams, QueryParams};
use crate::wire::query_json;
use crate::wire::request::{
    Credential, JSON_CONTENT_TYPE, Protocol, QUERY_JSON_CONTENT_TYPE, WireRequest, WireResponse,
    XML_CONTENT_TYPE,
};
use crate::wire::service::SQS;
use crate::wire::xml;

/// The `X-Amz-Target` prefix of SQS's JSON 1.0 requests (`AmazonSQS.SendMessage`, §1.1).
const JSON_TARGET_PREFIX: &str = "AmazonSQS.";

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
/// fixes for this code and protocol, if any (followed by localsqs's own explanation, when the
/// error carries one), else the error's own.
#[must_use]
pub fn error_response(protocol: Protocol, err: &SqsError, request_id: &str) -> WireResponse {
    let mut resp = error_envelope(protocol, err, request_id);
    if let Some(hint) = err.hint() {
        // localsqs's explanation of a miss travels beside AWS's exact message.
        resp.headers.push((HINT_HEADER, hint.to_owned()));
    }
    resp
}

/// The response header that carries localsqs's explanation of an error (a queue of that name
/// in another region or account), beside AWS's exact message.
pub const HINT_HEADER: &str = "x-localsqs-hint";

fn error_envelope(protocol: Protocol, err: &SqsError, request_id: &str) -> WireResponse {
    let spec = err.code.spec();
    let mut resp = match protocol {
        Protocol::Query => WireResponse::new(
            spec.status,
            XML_CONTENT_TYPE,
            xml::error_body(
                &SQS,
                spec.fault.as_str(),
                spec.legacy_code,
                &err.text(true),
                request_id,
            ),
        ),
        Protocol::QueryJson => WireResponse::new(
            spec.status,
            QUERY_JSON_CONTENT_TYPE,
            query_json::error_body(
                spec.fault.as_str(),
                spec.legacy_code,
                &err.text(true),
                request_id,
            ),
        ),
        Protocol::Json => {
            let mut resp = WireResponse::new(
                spec.status,
                JSON_CONTENT_TYPE,
                json::error_body(spec.json_type, &err.text(false)),
            );
            resp.headers.push((
                "x-amzn-query-error",
                format!("{};{}", spec.legacy_code, spec.fault.as_str()),
            ));
            resp
        }
    };
    resp.error = Some(err.code);
    resp
}

/// Decodes an SQS API request: its action, context and command, or the response that rejects
/// it (unknown action, malformed body, invalid parameters).
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
            encode_reply(reply, &mut out);
            WireResponse::new(200, JSON_CONTENT_TYPE, out.finish())
        }
        (Protocol::QueryJson, Ok(reply)) => {
            let mut out = query_json::QueryJsonOut::new(query_json::Dialect::Aws);
            encode_reply(reply, &mut out);
            WireResponse::new(
                200,
                QUERY_JSON_CONTENT_TYPE,
                query_json::envelope(
                    action.name(),
                    action.has_result().then_some(out.obj),
                    request_id,
                ),
            )
        }
        (Protocol::Query, Ok(reply)) => {
            let mut doc = xml::Response::new(&SQS, action.name(), action.has_result());
            encode_reply(reply, doc.out());
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
    encode_reply(reply, &mut out);
    WireResponse::new(
        200,
        QUERY_JSON_CONTENT_TYPE,
        query_json::envelope(action.name(), Some(out.obj), request_id),
    )
}

/// LocalStack's JSON answer to a Query request that accepts JSON on its developer endpoint
/// (`--compat localstack`): the XML document read by xmltodict (single elements are objects,
/// an empty result is `null`), and its errors as `{"ErrorResponse": {"Error": …}}`.
#[must_use]
pub fn encode_xmltodict(
    action: Action,
    result: &SqsResult<Reply>,
    request_id: &str,
) -> WireResponse {
    match result {
        Ok(reply) => {
            let mut out = query_json::QueryJsonOut::new(query_json::Dialect::XmlNames);
            encode_reply(reply, &mut out);
            let body = serde_json::json!({
                format!("{}Response", action.name()): {
                    format!("{}Result", action.name()): query_json::xmltodict(serde_json::Value::Object(out.obj)),
                    "ResponseMetadata": { "RequestId": request_id },
                }
            });
            WireResponse::new(200, QUERY_JSON_CONTENT_TYPE, body.to_string())
        }
        Err(err) => {
            let spec = err.code.spec();
            WireResponse::new(
                spec.status,
                QUERY_JSON_CONTENT_TYPE,
                query_json::xmltodict_error_body(
                    spec.fault.as_str(),
                    spec.legacy_code,
                    &err.text(true),
                    request_id,
                ),
            )
        }
    }
}

/// The access key and region of the request's SigV4 credential ([`Credential::of`]).
fn credential(req: &WireRequest<'_>, presigned: Option<&str>) -> Option<(String, String)> {
    Credential::of(req.authorization, presigned)
        .map(|c| (c.access_key.to_owned(), c.region.to_owned()))
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
        .and_then(|t| t.strip_prefix(JSON_TARGET_PREFIX))
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
    let command = decode_command(action, &JsonParams::new(obj)).map_err(reject)?;
    Ok(decoded(req, None, action, command))
}

/// SQS's error for a Query form whose bytes are not UTF-8. [E] AWS's text for undecodable
/// bytes is not recorded; the body-character error is the closest documented one (§6.3).
fn not_utf8(_: NotUtf8) -> SqsError {
    SqsError::new(ErrorCode::InvalidMessageContents, INVALID_CHARACTERS)
}

/// Parses and merges the URL query string and a form body into an owned map (`Form::parse`),
/// with SQS's error for bytes that are not UTF-8.
pub fn form_fields(query: Option<&str>, body: &[u8]) -> SqsResult<BTreeMap<String, String>> {
    Form::parse(query, body)
        .map(Form::into_map)
        .map_err(not_utf8)
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
    let mut fields = Form::parse(req.query, req.body)
        .map_err(|e| error_response(protocol, &not_utf8(e), request_id))?;
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
    let params = QueryParams::new(&fields, action.name(), flat_name);
    let command = decode_command(action, &params).map_err(reject)?;
    Ok(decoded(
        req,
        fields.get("X-Amz-Credential"),
        action,
        command,
    ))
}

#[cfg(test)]
mod tests {
    use crate::wire::sqs::codec::*;

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

    #[test]
    fn a_form_that_is_not_utf8_is_invalid_message_contents() {
        let err = form_fields(None, b"Action=SendMessage&MessageBody=%FF%FE").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessageContents);
        let f = form_fields(Some("a=1"), b"b=2").expect("decodes");
        assert_eq!(f.len(), 2);
    }
}
