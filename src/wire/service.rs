//! Wire layer: the AWS services this endpoint answers for, and how a request is told to be
//! one of them before it is decoded.
//!
//! The service-neutral pieces (the Query form and parameter readers, the XML writer and its
//! envelopes, the Query-JSON rendering) take a [`Service`] descriptor for what differs between
//! services that speak AWS Query. Each service then has its own module beside `sqs/` with its
//! action and name tables, its decoders and encoders, and its error envelope; the front door
//! asks [`Api::detect`] which one a request is for and calls that module.

use super::request::{Credential, WireRequest};

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

/// The APIs served on this endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Amazon SQS: AWS Query and AWS JSON 1.0 (`wire::sqs`).
    Sqs,
}

impl Api {
    /// Every API, in the order [`Api::detect`] tries them.
    pub const ALL: &'static [Api] = &[Api::Sqs];

    /// The API's service descriptor.
    #[must_use]
    pub fn service(self) -> &'static Service {
        match self {
            Api::Sqs => &SQS,
        }
    }

    /// The API a request is for, chosen from its headers before its body is decoded: the one
    /// whose name its SigV4 credential scope gives, else SQS. A request signed for a service
    /// this endpoint does not serve is SQS's, as it always was (the signature check decides
    /// whether it is accepted). A second service that shares the Query protocol is also told by
    /// its own actions or `Version` when unsigned (issue 28); that check belongs here too.
    #[must_use]
    pub fn detect(req: &WireRequest<'_>) -> Api {
        let signed_for = Credential::of(req.authorization, None).and_then(|c| c.service);
        Api::ALL
            .iter()
            .copied()
            .find(|api| signed_for == Some(api.service().name))
            .unwrap_or(Api::Sqs)
    }
}

#[cfg(test)]
mod tests {
    use crate::wire::request::{Protocol, WireRequest};
    use crate::wire::service::*;

    #[test]
    fn every_request_is_sqs_while_sqs_is_the_only_api() {
        fn req(authorization: Option<&str>) -> WireRequest<'_> {
            WireRequest {
                protocol: Protocol::Query,
                method: "POST",
                path: "/",
                query: None,
                target: None,
                trace_header: None,
                authorization,
                base_url: String::new(),
                body: b"Action=ListQueues",
            }
        }
        assert_eq!(Api::detect(&req(None)), Api::Sqs);
        for scope in ["sqs", "sns", ""] {
            let auth = format!(
                "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/{scope}/aws4_request, \
                 SignedHeaders=host, Signature=abc"
            );
            assert_eq!(Api::detect(&req(Some(&auth))), Api::Sqs, "{scope}");
        }
        for api in Api::ALL {
            assert!(!api.service().xmlns.is_empty());
        }
        assert_eq!(Api::Sqs.service(), &SQS);
    }
}
