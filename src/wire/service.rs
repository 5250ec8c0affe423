//! Wire layer: the AWS services this endpoint answers for, and how a request is told to be
//! one of them before it is decoded.
//!
//! The service-neutral pieces (the Query form and parameter readers, the XML writer and its
//! envelopes, the Query-JSON rendering) take a [`Service`] descriptor for what differs between
//! services that speak AWS Query. Each service then has its own module beside `sqs/` with its
//! action and name tables, its decoders and encoders, and its error envelope; the front door
//! asks [`Api::detect`] which one a request is for and calls that module.

use super::request::{Credential, Protocol, WireRequest};
use crate::command::Action;
use crate::command::sns::SnsAction;
use crate::command::sns::action::UNSERVED;

/// What the service-neutral writers and readers need to know about one AWS Query service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// The service's name in a SigV4 credential scope (`sqs`).
    pub name: &'static str,
    /// The API version its Query clients send as `Version` (`2012-11-05`).
    pub version: &'static str,
    /// The namespace on the root element of every XML answer, success or error.
    pub xmlns: &'static str,
    /// Whether its XML error envelope writes an empty `<Detail/>` after `<Message>` (SQS does,
    /// §5.1; SNS's recorded errors have none).
    pub error_detail: bool,
}

/// Amazon SQS (docs/protocol.md §1, §3.1, §5.1).
pub const SQS: Service = Service {
    name: "sqs",
    version: "2012-11-05",
    xmlns: "http://queue.amazonaws.com/doc/2012-11-05/",
    error_detail: true,
};

/// Amazon SNS (docs/sns.md §1): Query only, its own namespace, no `<Detail/>` in errors.
pub const SNS: Service = Service {
    name: "sns",
    version: "2010-03-31",
    xmlns: "http://sns.amazonaws.com/doc/2010-03-31/",
    error_detail: false,
};

/// The APIs served on this endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Amazon SQS: AWS Query and AWS JSON 1.0 (`wire::sqs`).
    Sqs,
    /// Amazon SNS: AWS Query (`wire::sns`).
    Sns,
}

impl Api {
    /// Every API, in the order [`Api::detect`] tries them.
    pub const ALL: &'static [Api] = &[Api::Sqs, Api::Sns];

    /// The API's service descriptor.
    #[must_use]
    pub fn service(self) -> &'static Service {
        match self {
            Api::Sqs => &SQS,
            Api::Sns => &SNS,
        }
    }

    /// The API a request is for, chosen before its body is decoded: the one whose name its
    /// SigV4 credential scope gives; else, for an unsigned Query request, SNS when its `Version`
    /// is SNS's (`2010-03-31`) or its `Action` is SNS's alone (docs/sns.md §1.1: the two share
    /// `AddPermission` and `RemovePermission`); else SQS. A request signed for a service this
    /// endpoint does not serve is SQS's, as it always was (the signature check decides whether
    /// it is accepted).
    #[must_use]
    pub fn detect(req: &WireRequest<'_>) -> Api {
        if let Some(service) = Credential::of(req.authorization, None).and_then(|c| c.service) {
            return if service == SNS.name {
                Api::Sns
            } else {
                Api::Sqs
            };
        }
        if req.protocol == Protocol::Json {
            return Api::Sqs;
        }
        let body = std::str::from_utf8(req.body).unwrap_or_default();
        let field =
            |name: &str| form_value(req.query, name).or_else(|| form_value(Some(body), name));
        if field("Version") == Some(SNS.version) {
            return Api::Sns;
        }
        let Some(action) = field("Action") else {
            return Api::Sqs;
        };
        let sns = SnsAction::from_name(action).is_some() || UNSERVED.contains(&action);
        if sns && Action::from_name(action).is_none() {
            Api::Sns
        } else {
            Api::Sqs
        }
    }
}

/// The raw value of form field `name` in `form` (`a=1&b=2`), if present. Action names and
/// versions need no percent-decoding.
fn form_value<'a>(form: Option<&'a str>, name: &str) -> Option<&'a str> {
    form?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use crate::wire::request::{Protocol, WireRequest};
    use crate::wire::service::*;

    fn req<'a>(authorization: Option<&'a str>, body: &'a [u8]) -> WireRequest<'a> {
        WireRequest {
            protocol: Protocol::Query,
            method: "POST",
            path: "/",
            query: None,
            target: None,
            trace_header: None,
            authorization,
            base_url: String::new(),
            body,
        }
    }

    #[test]
    fn the_scope_or_an_sns_only_action_picks_sns() {
        assert_eq!(Api::detect(&req(None, b"Action=ListQueues")), Api::Sqs);
        for (scope, api) in [
            ("sqs", Api::Sqs),
            ("sns", Api::Sns),
            // A scope without a service is read as unsigned: the action decides.
            ("", Api::Sns),
            ("s3", Api::Sqs),
        ] {
            let auth = format!(
                "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/{scope}/aws4_request, \
                 SignedHeaders=host, Signature=abc"
            );
            assert_eq!(
                Api::detect(&req(Some(&auth), b"Action=Publish")),
                api,
                "{scope}"
            );
        }
        assert_eq!(
            Api::detect(&req(None, b"Action=Publish&Message=x")),
            Api::Sns
        );
        assert_eq!(
            Api::detect(&req(None, b"Action=GetSMSAttributes")),
            Api::Sns
        );
        assert_eq!(
            Api::detect(&req(None, b"Action=AddPermission&Version=2012-11-05")),
            Api::Sqs
        );
        assert_eq!(
            Api::detect(&req(None, b"Action=AddPermission&Version=2010-03-31")),
            Api::Sns
        );
        let mut get = req(None, b"");
        get.query = Some("Action=ConfirmSubscription&TopicArn=arn&Token=t");
        assert_eq!(Api::detect(&get), Api::Sns);
        let mut json = req(None, b"Action=Publish");
        json.protocol = Protocol::Json;
        assert_eq!(Api::detect(&json), Api::Sqs);
        assert_eq!(Api::Sqs.service(), &SQS);
        assert_eq!(Api::Sns.service(), &SNS);
    }
}
