//! Fuzzed decoders and encoders (docs/testing.md, "fuzz"): arbitrary bytes, JSON documents and
//! Query forms through `wire::decode` (and, when they decode, through a real engine and
//! `wire::encode`), random replies and errors through `wire::encode`, and random raw requests
//! over TCP to an in-process server. Properties: nothing panics, every rejection is a
//! well-formed AWS error, every answer parses and carries exactly the values it was given.
//!
//! Each property runs [`DEFAULT_CASES`] cases unless `PROPTEST_CASES` says otherwise; a failure
//! prints its minimal input and is replayed first from `tests/fuzz/*.regressions` on the
//! next run.

mod check;
mod decode_bytes;
mod decode_json;
mod decode_query;
mod encode;
mod pipeline;
mod server;
mod sns;
mod strategies;

use proptest::test_runner::{Config, FileFailurePersistence};

/// Cases per property in the default run; `PROPTEST_CASES` overrides it for longer runs.
pub const DEFAULT_CASES: u32 = 128;

/// The proptest configuration of every property here: `default` cases (or `PROPTEST_CASES`),
/// failures persisted next to the source file so that they are replayed first.
pub fn config(default: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    Config {
        cases,
        // Next to the source file: tests/<binary>/<file>.regressions.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..Config::default()
    }
}
