//! Wire layer: a request and a response as the wire layer sees them, without hyper types, and
//! the protocol a request speaks (docs/protocol.md §1.1). Service-neutral.

use crate::command::Action;
use crate::error::ErrorCode;

/// Content type of Query responses.
pub const XML_CONTENT_TYPE: &str = "text/xml";
/// Content type of JSON 1.0 requests and responses.
pub const JSON_CONTENT_TYPE: &str = "application/x-amz-json-1.0";
/// Content type of Query responses rendered as JSON.
pub const QUERY_JSON_CONTENT_TYPE: &str = "application/json";

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
    /// The error answered, when the response is an SQS error (for metrics and logs).
    pub error: Option<ErrorCode>,
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
            error: None,
        }
    }

    /// A plain `application/json` response (admin endpoints).
    #[must_use]
    pub fn json(status: u16, body: &serde_json::Value) -> Self {
        Self::new(status, "application/json", body.to_string())
    }

    /// The same response, naming the action it answers.
    #[must_use]
    pub(crate) fn with_action(mut self, action: Option<Action>) -> Self {
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

/// The SigV4 credential a request was signed with, `<access key>/<date>/<region>/<service>/
/// aws4_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Credential<'a> {
    /// The access key id.
    pub access_key: &'a str,
    /// The region of the scope.
    pub region: &'a str,
    /// The service of the scope (`sqs`), when it names one.
    pub service: Option<&'a str>,
}

impl<'a> Credential<'a> {
    /// The credential from the `Authorization` header, else from a presigned request's
    /// `X-Amz-Credential`; `None` without an access key and a region.
    pub(crate) fn of(authorization: Option<&'a str>, presigned: Option<&'a str>) -> Option<Self> {
        let from_header = authorization.and_then(|a| {
            let rest = a.strip_prefix("AWS4-HMAC-SHA256")?;
            let cred = rest
                .split(',')
                .find_map(|p| p.trim().strip_prefix("Credential="))?;
            Some(cred.trim())
        });
        let cred = from_header.or(presigned)?;
        let mut parts = cred.split('/');
        let access_key = parts.next().filter(|k| !k.is_empty())?;
        let region = parts.nth(1).filter(|r| !r.is_empty())?;
        let service = parts.next().filter(|s| !s.is_empty());
        Some(Self {
            access_key,
            region,
            service,
        })
    }
}
