//! Tools layer, SNS: what SNS does outside the engine: signing envelopes with the server's
//! key (`signing.rs`) and the config file's `[[topic]]` tables (`setup.rs`).

pub mod setup;
pub mod signing;
