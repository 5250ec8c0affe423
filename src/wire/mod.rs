//! Wire layer: protocol detection, request decoding and response encoding for AWS Query and
//! AWS JSON 1.0 (docs/protocol.md §1–§5).
//!
//! Pure: [`decode`] turns a plain [`WireRequest`] into a [`Decoded`] command (or the error
//! response to send), and [`encode`] turns a command's result into a [`WireResponse`]. It knows
//! nothing of hyper and never runs the engine; `server` does decode → execute → encode.
//! Imports `command` and `error` only.
//!
//! Service-neutral pieces, each taking a [`Service`] descriptor where services differ: the
//! request and response (`request.rs`), the services and their detection (`service.rs`), the
//! Query form (`form.rs`) and parameter readers (`params.rs`, `json_tree.rs`), the `Out`
//! writer trait (`out.rs`) and its writers (`xml.rs`, `json.rs`, `query_json.rs`). Amazon SQS's
//! own tables, decoders, encoders and error envelope are in `sqs/`; its entry points are
//! re-exported here, as the front door calls them.

mod form;
mod json;
#[doc(hidden)]
pub mod json_tree;
mod out;
mod params;
mod query_json;
mod request;
mod service;
pub mod sns;
pub(crate) mod sqs;
mod xml;

pub use request::{
    JSON_CONTENT_TYPE, Protocol, QUERY_JSON_CONTENT_TYPE, WireRequest, WireResponse,
    XML_CONTENT_TYPE,
};
pub use service::{Api, SNS, SQS, Service};
pub use sqs::{
    Decoded, HINT_HEADER, decode, encode, encode_xml_names, encode_xmltodict, error_response,
    form_fields,
};
