//! A model-checked engine (docs/testing.md, "model"): random operation sequences run against
//! the real engine (`Engine::execute`, `ManualClock`, `SeededIds`) and against a plain
//! reference model of SQS (`model.rs`), comparing every answer where the model is exact and
//! checking invariants where SQS leaves latitude. The durable variant also closes and reopens
//! the engine on its data directory in the middle of a run.
//!
//! Each property runs a modest number of cases unless `PROPTEST_CASES` says otherwise; a
//! failure prints its minimal operation sequence and is replayed first from
//! `tests/model/main.regressions` on the next run.

mod compare;
mod fifo;
mod model;
mod ops;
mod run;
mod sut;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use ops::{Op, Setup};
use run::Run;

/// `default` cases, or `PROPTEST_CASES`.
fn config(default: u32) -> Config {
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

/// Runs one case on a fresh single-threaded runtime: the operations, then the drain; the
/// engine is closed whatever the outcome.
fn check(setup: &Setup, ops: &[Op], durable: bool, seed: u64) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut run = Run::start(setup, durable, seed).await;
        let mut result = Ok(());
        for (i, op) in ops.iter().enumerate() {
            if let Err(e) = run.step(op).await {
                result = Err(format!("step {i} {op:?}: {e}"));
                break;
            }
        }
        if result.is_ok() {
            result = run.drain().await.map_err(|e| format!("drain: {e}"));
        }
        run.sut.finish().await;
        result
    })
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn the_engine_behaves_like_the_model(
        setup in ops::setup(),
        ops in proptest::collection::vec(ops::op(false), 1..80),
        seed in any::<u64>(),
    ) {
        let outcome = check(&setup, &ops, false, seed);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn the_durable_engine_behaves_like_the_model_across_restarts(
        setup in ops::setup(),
        ops in proptest::collection::vec(ops::op(true), 1..50),
        seed in any::<u64>(),
    ) {
        let outcome = check(&setup, &ops, true, seed);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

/// A fair queue (docs/protocol.md §6.17), which random runs seldom reach: 40 messages of group
/// g0, then 10 of g1 and 2 without a group; three receives hold 30 of g0's in flight, so g0 is
/// noisy and the next receives serve g1 and the ungrouped messages first, as the model says.
#[test]
fn a_flooding_tenant_is_served_after_the_others() {
    use ops::{Entry, QueueSetup, Step};
    let q = |name: &'static str, fifo: bool, source: bool| QueueSetup {
        name,
        fifo,
        visibility_s: 30,
        delay_s: 0,
        retention_s: 345_600,
        content_based: false,
        max_receives: source.then_some(3),
    };
    let setup = Setup {
        queues: [
            q("std", false, true),
            q("std-dlq", false, false),
            q("fifo.fifo", true, true),
            q("fifo-dlq.fifo", true, false),
        ],
    };
    let batch = |group: Option<u8>, n: usize| {
        Op::SendBatch(
            0,
            (0..n)
                .map(|i| Entry {
                    delay: None,
                    group,
                    dedup: None,
                    body: u8::try_from(i % 5).expect("small"),
                })
                .collect(),
        )
    };
    let mut ops: Vec<Op> = (0..4).map(|_| batch(Some(0), 10)).collect();
    ops.extend([batch(Some(1), 10), batch(None, 2)]);
    ops.extend((0..3).map(|_| Op::Receive(0, 10, Some(60))));
    ops.extend([Op::Receive(0, 10, Some(60)), Op::Inspect]);
    ops.extend([Op::Receive(0, 5, Some(60)), Op::Inspect]);
    ops.push(Op::Advance(Step::Secs(61)));
    ops.extend([Op::Receive(0, 10, Some(60)), Op::Inspect]);
    check(&setup, &ops, false, 7).expect("engine and model agree");
    check(&setup, &ops, true, 7).expect("and across a durable engine");
}
