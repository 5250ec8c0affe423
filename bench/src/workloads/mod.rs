//! The workloads of docs/benchmarks.md, one module each, and the order a session runs them in:
//! startup first, then every repeat of the key workloads (interleaved: calibration, localsqs,
//! moto), then the single runs, then W8 and W9. Each module describes itself with a [`Workload`] and
//! lists its rows of the targets table.

pub mod backlog;
pub mod moto;
pub mod sender;
pub mod startup;
pub mod sweep;
pub mod sweep_report;
pub mod w01_send;
pub mod w02_pipeline;
pub mod w02a_drain;
pub mod w03_batch;
pub mod w04_fifo;
pub mod w05_long_poll;
pub mod w07_large_messages;
pub mod w08_backlog;
pub mod w09_big_backlog;
pub mod w11_durable;
pub mod w12_blocked_fifo;
pub mod w13_purge_delete;
pub mod w15_sns;

use crate::check::Check;
use crate::cli::Params;
use crate::harness::{Bench, Servers};

/// What a workload is: its `--only` id and what docs/benchmarks.md says about it.
#[derive(Debug)]
pub struct Workload {
    /// The `--only` id; also the workload column of its samples (W1c1 records under W1).
    pub id: &'static str,
    pub name: &'static str,
    /// What it measures.
    pub measures: &'static str,
    /// How it runs.
    pub runs: &'static str,
}

/// Every workload `--only` accepts, in the order of the help text.
pub const ALL: [&Workload; 20] = [
    &w01_send::W1,
    &w01_send::W1C1,
    &w02_pipeline::WORKLOAD,
    &w02a_drain::WORKLOAD,
    &w03_batch::WORKLOAD,
    &w04_fifo::WORKLOAD,
    &w05_long_poll::WORKLOAD,
    &w07_large_messages::WORKLOAD,
    &w08_backlog::WORKLOAD,
    &w09_big_backlog::WORKLOAD,
    &w11_durable::WORKLOAD,
    &w12_blocked_fifo::WORKLOAD,
    &w13_purge_delete::WORKLOAD,
    &w15_sns::WORKLOAD,
    &startup::WORKLOAD,
    &moto::WORKLOAD,
    &sweep::CONNS,
    &sweep::BACKLOG,
    &sweep::QUEUES,
    &sweep::SIZE,
];

/// The long help of `--only`: every workload, what it measures and how it runs.
pub fn only_long_help() -> String {
    let ids: Vec<&str> = ALL.iter().map(|w| w.id).collect();
    let mut s = format!(
        "Only these workloads (comma-separated: {}).\n",
        ids.join(",")
    );
    for w in ALL {
        s.push_str(&format!(
            "\n{}: {}.\n  Measures: {}.\n  Runs: {}.\n",
            w.id, w.name, w.measures, w.runs
        ));
    }
    s
}

/// Whether the calibration server is needed (W1, W1c1 and W5 compare against it).
pub fn needs_calibration(b: &Bench) -> bool {
    b.want(w01_send::W1.id) || b.want(w01_send::W1C1.id) || b.want(w05_long_poll::WORKLOAD.id)
}

/// Before the shared servers start.
pub async fn first(b: &mut Bench) {
    if b.owns_servers() && b.want(startup::WORKLOAD.id) {
        eprintln!("startup");
        startup::run(b).await;
    }
}

/// One repeat of the key workloads.
pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    w01_send::round(b, s, r).await;
    w02_pipeline::round(b, s, r).await;
    w03_batch::round(b, s, r).await;
    w04_fifo::round(b, s, r).await;
    w05_long_poll::round(b, s, r).await;
    w07_large_messages::round(b, r).await;
    w11_durable::round(b, s, r).await;
    w12_blocked_fifo::round(b, s, r).await;
}

/// The workloads and variants that run once, after the repeats.
pub async fn once(b: &mut Bench, s: &mut Servers) {
    w02a_drain::once(b, s).await;
    w04_fifo::once(b, s).await;
    w11_durable::once(b, s).await;
    w05_long_poll::once(b, s).await;
    w13_purge_delete::once(b).await;
    w15_sns::once(b, s).await;
    sweep::run(b, s).await;
}

/// Last, on servers of its own.
pub async fn last(b: &mut Bench) {
    if b.want(w08_backlog::WORKLOAD.id) && b.owns_servers() {
        w08_backlog::run(b).await;
    }
    if b.want(w09_big_backlog::WORKLOAD.id) && b.owns_servers() {
        w09_big_backlog::run(b).await;
    }
}

/// The targets table, in report order.
pub fn checks(p: &Params) -> Vec<Check> {
    [
        w01_send::checks(p),
        w02_pipeline::checks(p),
        w03_batch::checks(p),
        w04_fifo::checks(p),
        w05_long_poll::checks(p),
        w07_large_messages::checks(p),
        w08_backlog::checks(p),
        w09_big_backlog::checks(p),
        w11_durable::checks(p),
        w12_blocked_fifo::checks(p),
        w13_purge_delete::checks(p),
        w15_sns::checks(p),
        startup::checks(p),
        moto::checks(p),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;
    use crate::cli::Args;

    #[test]
    fn only_help_lists_every_workload() {
        let cmd = Args::command();
        let only = cmd
            .get_arguments()
            .find(|a| a.get_id() == "only")
            .and_then(|a| a.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let ids: Vec<&str> = ALL.iter().map(|w| w.id).collect();
        assert!(only.contains(&ids.join(",")), "{only} vs {ids:?}");
        for w in ALL {
            assert!(!w.name.is_empty() && !w.measures.is_empty() && !w.runs.is_empty());
        }
    }

    /// The targets table of a full run, with the round-two targets of issue #16
    /// (workload | metric | goal sentence).
    const FULL_TABLE: &str = "\
W1 SendMessage, 64 connections (json) | localsqs msgs/s | (context)
W1 SendMessage, 64 connections (json) | calibration server req/s | (context; loadgen ≥ 30,000)
W1 SendMessage, 64 connections (json) | localsqs / calibration | ≥ 0.80
W1 SendMessage, 64 connections (json) | p99 | < 10 ms
W1 SendMessage, 64 connections (query) | localsqs / calibration | ≥ 0.80
W1 SendMessage, 64 connections (query) | p99 | < 10 ms
W1 SendMessage, 1 connection (json) | p50 round trip, localsqs | (context)
W1 SendMessage, 1 connection (json) | p50 round trip, calibration server | (context)
W2 send→receive→delete (json, c64) | msgs/s | ≥ 30,000
W2 send→receive→delete (query, c64) | msgs/s | ≥ 30,000
W3 batch of 10 (json, c64) | end-to-end msgs/s | ≥ 50,000
W3 batch of 10 (json, c64) | SendMessageBatch alone msgs/s | ≥ 100,000
W4 FIFO, 10k groups (json, c64) | msgs/s | (context)
W4 FIFO, 10k groups (json, c64) | W4 / W2 | ≥ 0.50
W4 FIFO, 10k groups (json, c64) | per-group order verified by the bench | in order
W5 long-poll wake | p50 idle round trip, calibration server | (context: floor)
W5 long-poll wake | p50 idle round trip, localsqs SendMessage | (context)
W5 long-poll wake | p50 | < 0.5 ms
W5 long-poll wake | p99 | < 2 ms
W5 long-poll wake | CPU of the parked polls | < 1% of a core (1000 parked)
W7 1 MiB messages | MB/s | ≥ 400 MB/s
W7 1 MiB messages | peak RSS (VmHWM) | (context)
W7 1 MiB messages | VmHWM growth over the last 75% of the volume | ≤ c × size = 8 MiB (bounded by concurrency, not volume)
W8 1M × 200 B backlog (durable) | peak RSS during load | < 150 MiB
W8 1M × 200 B backlog (durable) | peak RSS after restart and drain | < 150 MiB
W8 1M × 200 B backlog (durable) | bytes/message on disk | ≤ 400 B
W8 1M × 200 B backlog (durable) | first receive after clean restart | < 1,000 ms
W8 1M × 200 B backlog (durable) | first receive after kill -9 | < 1,000 ms
W8 1M × 200 B backlog (in memory) | RSS with the backlog loaded | ≤ n × (200 + 150) B = 333.8 MiB (the bodies plus 150 B per message)
W9 10M × 200 B backlog (durable) | load msgs/s | (context)
W9 10M × 200 B backlog (durable) | bytes/message on disk | ≤ 300 B
W9 10M × 200 B backlog (durable) | peak RSS during load | < 1,024 MiB (1 GiB)
W9 10M × 200 B backlog (durable) | peak RSS after restart | < 1,024 MiB (1 GiB)
W9 10M × 200 B backlog (durable) | first receive after clean restart | < 5,000 ms
W9 10M × 200 B backlog (durable) | first receive after kill -9 | < 5,000 ms
W11 durable SendMessage, 64 connections | msgs/s | ≥ 15,000
W11 durable SendMessage, 64 connections | durable / in-memory | ≥ 0.70
W12 FIFO group of 100k with its head in flight | ReceiveMessage p99 on the blocked queue | < 1 ms
W12 FIFO group of 100k with its head in flight | ReceiveMessage p99 on the blocked queue, pipeline running | (context)
W12 FIFO group of 100k with its head in flight | standard pipeline p99, no blocked queue | (context)
W12 FIFO group of 100k with its head in flight | standard pipeline p99, blocked queue present | (context)
W12 FIFO group of 100k with its head in flight | p99 present ÷ (1.5 × p99 absent + 0.5 ms) | ≤ 1× (other queues unchanged, within noise)
W12 FIFO group of 100k with its head in flight | blocked group, then #1 once the head is deleted | nothing delivered while blocked
W13 purge/delete of a 200k durable queue, c16 sending elsewhere | other clients' p99 before | (context)
W13 purge/delete of a 200k durable queue, c16 sending elsewhere | other clients' p99 during PurgeQueue | < 10 ms
W13 purge/delete of a 200k durable queue, c16 sending elsewhere | other clients' p99 during DeleteQueue | < 10 ms
W13 purge/delete of a 200k durable queue, c16 sending elsewhere | PurgeQueue call | (context)
W13 purge/delete of a 200k durable queue, c16 sending elsewhere | DeleteQueue call | (context)
W15 SNS Publish, 1 raw subscription(s) (memory, c64) | publishes/s | (context)
W15 SNS Publish, 1 raw subscription(s) (memory, c64) | deliveries/s | (context)
W15 SNS Publish, 1 raw subscription(s) (memory, c64) | p99 | (context)
W15 SNS Publish, 1 raw subscription(s) (durable, c64) | deliveries/s | (context)
W15 SNS Publish, 1 raw subscription(s) (durable, c64) | p99 | (context)
W15 SNS Publish, 10 raw subscription(s) (memory, c64) | publishes/s | (context)
W15 SNS Publish, 10 raw subscription(s) (memory, c64) | deliveries/s | (context)
W15 SNS Publish, 10 raw subscription(s) (memory, c64) | p99 | (context)
W15 SNS Publish, 10 raw subscription(s) (durable, c64) | deliveries/s | (context)
W15 SNS Publish, 10 raw subscription(s) (durable, c64) | p99 | (context)
W15 SNS Publish, 100 raw subscription(s) (memory, c64) | publishes/s | (context)
W15 SNS Publish, 100 raw subscription(s) (memory, c64) | deliveries/s | ≥ 200,000
W15 SNS Publish, 100 raw subscription(s) (memory, c64) | p99 | (context)
W15 SNS Publish, 100 raw subscription(s) (durable, c64) | deliveries/s | (context)
W15 SNS Publish, 100 raw subscription(s) (durable, c64) | p99 | (context)
W15 SNS Publish, 1 envelope subscription (signed, memory, c64) | publishes/s | (context)
W15 SNS Publish, 1 envelope subscription (signed, memory, c64) | p99 | (context)
W15 SNS Publish, 1 raw subscription (memory, c64) | publishes/s / W1 SendMessage (query) | ≥ 0.80
Startup (in memory) | exec → first answered request | < 50 ms
Startup (durable, empty dir) | exec → first answered request | < 50 ms
Startup (in memory) | idle RSS | < 15 MiB
Startup (durable, empty dir) | idle RSS | < 15 MiB
Against moto: W1 | localsqs / moto msgs/s | ≥ 200×
Against moto: W2 | localsqs / moto msgs/s | ≥ 200×
Against moto: W3 | localsqs / moto msgs/s | ≥ 200×
Against LocalStack: W1 | localsqs / LocalStack msgs/s | (context)
Against LocalStack: W2 | localsqs / LocalStack msgs/s | (context)
Against LocalStack: W3 | localsqs / LocalStack msgs/s | (context)
";

    fn table(p: &Params) -> String {
        checks(p)
            .iter()
            .map(|c| format!("{} | {} | {}\n", c.workload, c.metric, c.render()))
            .collect()
    }

    #[test]
    fn targets_table_of_a_full_run() {
        assert_eq!(table(&Params::full()), FULL_TABLE);
    }

    #[test]
    fn targets_table_of_a_quick_run() {
        let t = table(&Params::quick());
        let expected = FULL_TABLE
            .replace("(1000 parked)", "(200 parked)")
            .replace("c × size = 8 MiB", "c × size = 4 MiB")
            .replace("W8 1M × 200 B", "W8 20k × 200 B")
            .replace("= 333.8 MiB", "= 6.7 MiB")
            .replace("W9 10M × 200 B", "W9 5k × 200 B")
            .replace("group of 100k", "group of 2k")
            .replace("a 200k durable", "a 2k durable");
        assert_eq!(t, expected);
    }
}
