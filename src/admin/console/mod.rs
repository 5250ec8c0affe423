//! Admin layer: the web console: its embedded page and assets (`assets.rs`), the list of queues
//! (`queues.rs`), the view of one queue's messages (`messages.rs`, each message rendered by
//! `render.rs`), the search of a queue (`search.rs`), deletes and moves of selected messages
//! (`bulk.rs`) and the SNS topics (`topics.rs`): the JSON endpoints it reads beside the SQS API.
//! Every console answer carries the headers of `common.rs`.

pub mod assets;
pub mod bulk;
pub mod common;
pub mod messages;
pub mod queues;
pub mod render;
pub mod search;
#[cfg(test)]
pub(crate) mod test_support;
pub mod topics;
