//! Command layer, SNS: Amazon SNS's protocol-neutral side: its action table (`action.rs`), its
//! request and result types (`types.rs`), its error table (`error.rs`), the checks that need no
//! state (`validate.rs`), topic and subscription attributes (`attributes.rs`), filter policies
//! (`filter/`) and what subscribers receive (`envelope.rs`). Imports neither `wire` nor `engine`.

pub mod action;
pub mod attributes;
pub mod envelope;
pub mod error;
pub mod filter;
pub mod types;
pub mod validate;

pub use action::{SnsAction, SnsCommand, SnsReply};
pub use error::{SnsError, SnsErrorCode, SnsResult};
pub use types::*;
