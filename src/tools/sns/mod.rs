//! Tools layer, SNS: what SNS does outside the engine: signing envelopes with the server's
//! key (`signing.rs`).

pub mod signing;
