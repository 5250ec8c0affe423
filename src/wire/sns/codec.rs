//! Wire layer, SNS: the SNS API's entry points: [`decode`] turns a [`WireRequest`] into an
//! [`SnsDecoded`] command (or the error response that rejects it), [`encode`] renders a result,
//! and [`error_response`] renders an [`SnsError`] in SNS's envelope (docs/sns.md §1.3, §1.4):
//! `ErrorResponse` in SNS's namespace, `Type`/`Code`/`Message`, `RequestId` beside `Error`.

use super::decode::decode as decode_command;
use super::encode::encode_reply;
use super::names::flat_name;
use crate::command::sns::action::UNSERVED;
use crate::command::sns::{SnsAction, SnsCommand, SnsError, SnsErrorCode, SnsReply, SnsResult};
use crate::wire::form::Form;
use crate::wire::params::QueryParams;
use crate::wire::request::{Credential, WireRequest, WireResponse, XML_CONTENT_TYPE};
use crate::wire::service::SNS;
use crate::wire::xml;

/// A decoded SNS request with the request facts it runs with.
#[derive(Debug, Clone)]
pub struct SnsDecoded {
    /// The action named.
    pub action: SnsAction,
    /// Scheme and authority of this server as the client reached it.
    pub base_url: String,
    /// The `X-Amzn-Trace-Id` header.
    pub trace_header: Option<String>,
    /// The access key id of the SigV4 credential, if signed.
    pub access_key: Option<String>,
    /// The region of the SigV4 credential scope, if signed.
    pub region: Option<String>,
    /// Whether the request was signed (an unsigned SubscribeURL or UnsubscribeURL GET is not).
    pub signed: bool,
    /// The command.
    pub command: SnsCommand,
}

/// Renders an SNS error.
#[must_use]
pub fn error_response(err: &SnsError, request_id: &str) -> WireResponse {
    WireResponse::new(
        err.code.status(),
        XML_CONTENT_TYPE,
        xml::error_body(
            &SNS,
            err.code.fault().as_str(),
            err.code.code(),
            &err.message,
            request_id,
        ),
    )
}

/// Decodes an SNS request (Query: the URL query string and the form body, merged).
pub fn decode(req: &WireRequest<'_>, request_id: &str) -> Result<SnsDecoded, WireResponse> {
    let reject = |e: SnsError| error_response(&e, request_id);
    let mut fields = Form::parse(req.query, req.body).map_err(|_| {
        reject(SnsError::invalid(
            "Invalid parameter: the request is not valid UTF-8",
        ))
    })?;
    let Some(name) = fields.remove("Action") else {
        // [E] unrecorded for SNS.
        return Err(reject(SnsError::new(
            SnsErrorCode::InvalidAction,
            "The request must contain the parameter Action.",
        )));
    };
    let Some(action) = SnsAction::from_name(&name) else {
        return Err(reject(unserved(&name)));
    };
    let params = QueryParams::new(&fields, action.name(), flat_name);
    let command = decode_command(action, &params).map_err(reject)?;
    let cred = Credential::of(req.authorization, fields.get("X-Amz-Credential"));
    Ok(SnsDecoded {
        action,
        base_url: req.base_url.clone(),
        trace_header: req.trace_header.map(str::to_owned),
        access_key: cred.map(|c| c.access_key.to_owned()),
        region: cred.map(|c| c.region.to_owned()),
        signed: cred.is_some(),
        command,
    })
}

/// [E] The error for an action this server does not serve: SQS's Query text for an unknown
/// action, and for SNS's SMS, mobile-push and data-protection actions a sentence naming what
/// is served.
fn unserved(name: &str) -> SnsError {
    if UNSERVED.contains(&name) {
        let served: Vec<&str> = SnsAction::ALL.iter().map(|a| a.name()).collect();
        return SnsError::new(
            SnsErrorCode::InvalidAction,
            format!(
                "The action {name} is not implemented by localsqs: SMS, mobile push and data protection are not emulated. SNS actions served: {}.",
                served.join(", ")
            ),
        );
    }
    SnsError::new(
        SnsErrorCode::InvalidAction,
        format!("The action {name} is not valid for this endpoint."),
    )
}

/// Encodes the result of `action`.
#[must_use]
pub fn encode(action: SnsAction, result: &SnsResult<SnsReply>, request_id: &str) -> WireResponse {
    match result {
        Err(e) => error_response(e, request_id),
        Ok(reply) => {
            let mut doc = xml::Response::new(&SNS, action.name(), action.has_result());
            encode_reply(reply, &mut doc.out().buf);
            WireResponse::new(200, XML_CONTENT_TYPE, doc.finish(request_id))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::sns::CreateTopicResult;
    use crate::wire::request::Protocol;

    fn req(body: &str) -> WireRequest<'_> {
        WireRequest {
            protocol: Protocol::Query,
            method: "POST",
            path: "/",
            query: None,
            target: None,
            trace_header: None,
            authorization: None,
            base_url: "http://h".into(),
            body: body.as_bytes(),
        }
    }

    #[test]
    fn decodes_and_answers_in_sns_envelopes() {
        let d = decode(&req("Action=CreateTopic&Name=t&Version=2010-03-31"), "r").unwrap();
        assert_eq!(d.action, SnsAction::CreateTopic);
        assert!(!d.signed);
        let ok = encode(
            SnsAction::CreateTopic,
            &Ok(SnsReply::CreateTopic(CreateTopicResult {
                topic_arn: "arn:aws:sns:us-east-1:000000000000:t".into(),
            })),
            "r",
        );
        assert!(ok.body.contains(
            "<CreateTopicResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"><CreateTopicResult><TopicArn>"
        ));
        let bad = decode(&req("Action=GetSMSAttributes"), "r").unwrap_err();
        assert_eq!(bad.status, 400);
        assert!(
            bad.body.contains("<Code>InvalidAction</Code>"),
            "{}",
            bad.body
        );
        assert!(!bad.body.contains("<Detail/>"));
        let missing = decode(&req("Action=DeleteTopic"), "r").unwrap_err();
        assert!(
            missing
                .body
                .contains("TopicArn Reason: no value for required parameter")
        );
    }
}
