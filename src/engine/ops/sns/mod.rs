//! Engine layer, ops, SNS: the SNS actions, as `impl Engine` blocks: the match over
//! `SnsCommand` (`execute.rs`), topics, their attributes, tags and permissions (`topic.rs`),
//! subscriptions (`subscription.rs`), Publish and PublishBatch (`publish.rs`) and the fan-out
//! of one message into its subscriptions' queues (`fanout.rs`), in the same engine change and
//! the same commit as the publish; what `/metrics` and the console read (`inspect.rs`).

pub(crate) mod execute;
pub(crate) mod fanout;
pub(crate) mod inspect;
pub(crate) mod publish;
pub(crate) mod subscription;
pub(crate) mod topic;
