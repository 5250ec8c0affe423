//! Tools layer, SNS: what SNS does outside the engine: signing envelopes with the server's
//! key (`signing.rs`), the config file's `[[topic]]` tables (`setup.rs`) and the worker
//! that delivers to http and lambda subscriptions (`deliver.rs`).

pub mod deliver;
pub mod setup;
pub mod signing;
