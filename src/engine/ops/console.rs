//! Engine layer, ops: what the web console does to a queue's messages beyond the SQS API and
//! the peek: deletes and moves of many messages by id (`console/bulk.rs`).

pub(crate) mod bulk;
