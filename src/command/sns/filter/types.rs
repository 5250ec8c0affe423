//! Command layer, SNS: the compiled form of a filter policy: literals, matchers, patterns.

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
    pub(super) pattern: Pattern,
    pub(super) body_scope: bool,
}
