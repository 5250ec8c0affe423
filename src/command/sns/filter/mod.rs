//! Command layer, SNS: subscription filter policies (docs/sns.md §8): a policy compiled and
//! checked once (`compile.rs`, with AWS's limits and error texts) and matched against each
//! message's attributes or JSON body (`eval.rs`).
//!
//! Push delivery's Lambda filters (`tools/push/filter.rs`) share the operators' names but not
//! SNS's rules: a message without attributes never matches an attribute policy, `Number`
//! attributes compare as numbers, `String.Array` values match element-wise, `cidr` exists here
//! only, and the texts of invalid policies are SNS's. So SNS keeps its own matcher.

mod compile;
mod eval;
mod types;

pub use compile::PolicyError;
pub use types::FilterPolicy;
