//! Tools layer: fault injection. Rules added through `/_localsqs/faults`, the config file or
//! the embedding API make chosen requests fail with an AWS error, wait, hand a received message
//! out twice, take messages in random order, or answer a short poll empty, as production SQS
//! sometimes does.
//!
//! `rule.rs` holds the rules as users write them, `active.rs` the rules in force and their
//! decisions, `hook.rs` how the front door asks them (a [`crate::command::hooks::Hook`]).
//! Adding a fault kind: docs/adding-an-action.md, "Adding a fault kind".

mod active;
mod hook;
mod rule;

pub use active::{Faults, MAX_RULES};
pub use rule::{FaultRule, InjectedError, Latency};
