//! Command layer: value types shared by several actions (message attributes, request context,
//! the account and region a request acts in).
//!
//! Imports neither `wire` nor `engine`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One message attribute value as sent or returned (`MessageAttributeValue` in the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageAttributeValue {
    /// Full DataType, custom suffix included (`Number.java.lang.Long`).
    pub data_type: String,
    /// Set for String and Number types.
    pub string_value: Option<String>,
    /// Set for Binary types: the decoded bytes.
    pub binary_value: Option<Vec<u8>>,
    /// Reserved by AWS; carried so that MD5s match what clients compute.
    pub string_list_values: Vec<String>,
    /// Reserved by AWS; carried so that MD5s match what clients compute.
    pub binary_list_values: Vec<Vec<u8>>,
}

impl MessageAttributeValue {
    /// A `String` attribute.
    #[must_use]
    pub fn string(data_type: &str, value: &str) -> Self {
        Self {
            data_type: data_type.to_owned(),
            string_value: Some(value.to_owned()),
            binary_value: None,
            string_list_values: Vec::new(),
            binary_list_values: Vec::new(),
        }
    }

    /// A `Binary` attribute.
    #[must_use]
    pub fn binary(data_type: &str, value: &[u8]) -> Self {
        Self {
            data_type: data_type.to_owned(),
            string_value: None,
            binary_value: Some(value.to_vec()),
            string_list_values: Vec::new(),
            binary_list_values: Vec::new(),
        }
    }
}

/// Attributes keyed by name; a `BTreeMap` keeps them sorted as the MD5 algorithm needs (§6.4).
pub type MessageAttributes = BTreeMap<String, MessageAttributeValue>;

/// An ordered list of string pairs (queue attributes, tags), kept in request order.
pub type Pairs = Vec<(String, String)>;

/// An account and a region: where a queue lives. Queues are keyed by (account, region, name):
/// `q` in us-east-1 and `q` in eu-west-1 are two queues (docs/protocol.md §1.1, G-24).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope {
    /// 12-digit account id.
    pub account: String,
    /// Region name, e.g. `us-east-1`.
    pub region: String,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.region, self.account)
    }
}

impl Scope {
    /// The ARN of queue `name` in this scope.
    #[must_use]
    pub fn arn(&self, name: &str) -> String {
        format!("arn:aws:sqs:{}:{}:{name}", self.region, self.account)
    }
}

/// Whether `s` looks like an account id: 12 ASCII digits.
#[must_use]
pub fn is_account_id(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}

/// What the engine needs to know about the request besides the command itself: request facts
/// only. There is no default: whoever runs a command says in which scope.
#[derive(Debug, Clone)]
pub struct RequestContext {
    /// Scheme and authority that queue URLs are built on, e.g. `http://localhost:9324`.
    pub base_url: String,
    /// The `X-Amzn-Trace-Id` request header, the fallback source of `AWSTraceHeader` (§6.5).
    pub trace_header: Option<String>,
    /// The account and region the request acts in (a queue URL naming others overrides it).
    /// Shared: most requests act in the configured one.
    pub scope: Arc<Scope>,
}

impl RequestContext {
    /// A context with no trace header: queue URLs on `base_url`, acting in `scope`.
    #[must_use]
    pub fn new(base_url: impl Into<String>, scope: Arc<Scope>) -> Self {
        Self {
            base_url: base_url.into(),
            trace_header: None,
            scope,
        }
    }
}
