//! Command layer: the protocol-neutral request and result types, and the one action table.
//!
//! Imports neither `wire` nor `engine`. Each variant of [`Command`] holds a struct named exactly
//! like the AWS action; each variant of [`Reply`] holds the matching `<Action>Result`. The table
//! itself is in `action.rs`.

pub mod action;
pub mod attributes;
pub mod batch;
pub mod checksum;
pub mod hooks;
pub mod message;
pub mod queue;
pub mod redrive;
pub mod sns;
pub mod types;
pub mod validate;

pub use action::{Action, Command, Reply};
pub use batch::*;
pub use message::*;
pub use queue::*;
pub use redrive::*;
pub use types::*;
