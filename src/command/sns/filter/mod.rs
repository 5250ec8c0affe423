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

pub use compile::PolicyError;

/// A literal in a policy or a value in a message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    /// A string.
    Str(String),
    /// A number.
    Num(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// One matcher of a key's list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Matcher {
    /// Equal to this literal.
    Exact(Lit),
    /// A string starting with this.
    Prefix(String),
    /// A string ending with this.
    Suffix(String),
    /// A string equal to this, ignoring case.
    IgnoreCase(String),
    /// Anything but these literals.
    AnythingBut(Vec<Lit>),
    /// A string not starting with this.
    AnythingButPrefix(String),
    /// A number within every (operator, bound).
    Numeric(Vec<(NumOp, f64)>),
    /// The key present (`true`) or absent (`false`).
    Exists(bool),
    /// An IP address inside this network: the address and the mask's bit count.
    Cidr(std::net::IpAddr, u8),
}

/// A numeric comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumOp {
    /// `=`
    Eq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// What a policy key requires.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// Any of these matchers.
    Leaf(Vec<Matcher>),
    /// A nested object (body scope).
    Nested(Pattern),
}

/// Every key must match, and each `$or` group must have a matching alternative.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Pattern {
    /// Keys and what they require.
    pub fields: Vec<(String, Field)>,
    /// `$or` groups.
    pub ors: Vec<Vec<Pattern>>,
}

/// A compiled filter policy with its scope.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    pattern: Pattern,
    body_scope: bool,
}
