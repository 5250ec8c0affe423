//! Admin layer: the web console: its embedded page and assets (`assets.rs`), the list of queues
//! (`queues.rs`) the view of one queue's messages (`messages.rs`) and the SNS topics (`topics.rs`), the JSON endpoints it
//! reads beside the SQS API. Every console answer carries the headers of `common.rs`.

pub mod assets;
pub mod common;
pub mod messages;
pub mod queues;
#[cfg(test)]
pub(crate) mod test_support;
pub mod topics;
