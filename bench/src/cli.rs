//! The command line (`Args`) and the counts and durations each mode (full or `--quick`) gives
//! the workloads (`Params`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

/// Benchmark harness for localsqs (docs/benchmarks.md).
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// CI mode: small counts, fails only on crashes and correctness violations.
    #[arg(long)]
    pub quick: bool,
    /// Repeats of the key workloads (default 3, quick 1).
    #[arg(long)]
    pub repeat: Option<usize>,
    /// Measured seconds per closed-loop run, after a warm-up (default 5, quick 1).
    #[arg(long)]
    pub duration: Option<f64>,
    /// The localsqs binary (default: build and use <workspace>/target/release/localsqs).
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
    /// Do not run `cargo build --release --bin localsqs` first.
    #[arg(long)]
    pub no_build: bool,
    /// Drive an already running localsqs at this loopback URL instead of starting one
    /// (workloads that restart the server are then skipped).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// PID of the --endpoint server, for CPU and RSS figures.
    #[arg(long)]
    pub endpoint_pid: Option<u32>,
    /// moto_server executable (default: `moto_server` on PATH).
    #[arg(long)]
    pub moto: Option<PathBuf>,
    /// A running LocalStack to compare W1, W2 and W3 against, e.g. http://localhost:4566
    /// (loopback only; driven like moto: 8 connections, capped counts).
    #[arg(long)]
    pub localstack: Option<String>,
    /// Skip the moto comparison.
    #[arg(long)]
    pub no_moto: bool,
    /// Only these workloads (comma-separated: W1,W1c1,W2,W2a,W3,W4,W5,W7,W8,W9,W11,W12,W13,W15,startup,moto,sweep-conns,sweep-backlog,sweep-queues,sweep-size; `sweep` selects every sweep).
    #[arg(long, value_delimiter = ',', long_help = crate::workloads::only_long_help())]
    pub only: Vec<String>,
    /// Run W1 and W2 in one protocol only: json or query (default both).
    #[arg(long, value_parser = ["json", "query"])]
    pub protocol: Option<String>,
    /// Messages loaded in W8 (default 1,000,000; quick 20,000).
    #[arg(long)]
    pub w8_messages: Option<u64>,
    /// Messages loaded in W9 (default 10,000,000; quick 5,000).
    #[arg(long)]
    pub w9_messages: Option<u64>,
    /// Also run the sweeps (connections, backlog, queue count, message size); `--only sweep` or
    /// `--only sweep-conns,…` runs only them.
    #[arg(long)]
    pub sweep: bool,
    /// Largest backlog of the backlog sweep (points 1k, 10k, 100k, 1M, 10M up to it; default
    /// 1,000,000; quick 1,000).
    #[arg(long)]
    pub sweep_backlog_max: Option<u64>,
    /// JSON output (default bench/results/latest.json, quick: bench/results/quick.json).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Scratch directory for data directories and logs (default <target>/localsqs-bench).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
    /// Only redraw the charts from the samples of this results JSON (written next to it), e.g.
    /// bench/results/latest.json; runs nothing.
    #[arg(long)]
    pub charts_from: Option<PathBuf>,
    #[arg(long, hide = true)]
    pub serve_calibration: bool,
    #[arg(long, hide = true, default_value_t = 0)]
    pub port: u16,
}

/// Counts and durations of one mode.
#[derive(Debug, Clone)]
pub struct Params {
    pub warmup: Duration,
    pub duration: Duration,
    pub repeat: usize,
    pub conns: usize,
    pub w1_cap: u64,
    pub w3_send_cap: u64,
    pub w2a_backlog: u64,
    pub w4_groups: u32,
    pub w5_samples: usize,
    pub w5_parked: usize,
    pub w5_idle: Duration,
    pub w7_conns: usize,
    pub w7_msgs: u64,
    pub w7_duration: Duration,
    pub w8_n: u64,
    pub w8_restarts: usize,
    pub w9_n: u64,
    pub w12_n: u64,
    pub sweep_backlog_max: u64,
    /// Measured window of each sweep point (after the warm-up).
    pub sweep_duration: Duration,
    pub w13_n: u64,
    /// Length of each W13 window (before, during the purge, during the delete).
    pub w13_settle: Duration,
    pub startup_reps: usize,
    pub moto_n: u64,
    pub moto_cap: Duration,
    pub fsync_cal: Duration,
}

impl Params {
    pub fn new(a: &Args) -> Params {
        let quick = a.quick;
        let secs = a.duration.unwrap_or(if quick { 1.0 } else { 5.0 });
        Params {
            warmup: Duration::from_millis(if quick { 250 } else { 1000 }),
            duration: Duration::from_secs_f64(secs.clamp(0.2, 60.0)),
            repeat: a.repeat.unwrap_or(if quick { 1 } else { 3 }).clamp(1, 20),
            conns: 64,
            w1_cap: if quick { 50_000 } else { 200_000 },
            w3_send_cap: if quick { 150_000 } else { 500_000 },
            w2a_backlog: if quick { 5_000 } else { 100_000 },
            w4_groups: 10_000,
            w5_samples: if quick { 40 } else { 200 },
            w5_parked: if quick { 200 } else { 1000 },
            w5_idle: Duration::from_secs(if quick { 2 } else { 10 }),
            w7_conns: if quick { 4 } else { 8 },
            w7_msgs: if quick { 40 } else { 2048 },
            w7_duration: Duration::from_secs(if quick { 5 } else { 10 }),
            w8_n: a
                .w8_messages
                .unwrap_or(if quick { 20_000 } else { 1_000_000 })
                .clamp(100, 10_000_000),
            w8_restarts: if quick { 1 } else { 3 },
            w9_n: a
                .w9_messages
                .unwrap_or(if quick { 5_000 } else { 10_000_000 })
                .clamp(100, 100_000_000),
            sweep_backlog_max: a
                .sweep_backlog_max
                .unwrap_or(if quick { 1_000 } else { 1_000_000 }),
            sweep_duration: if quick {
                Duration::from_millis(300)
            } else {
                Duration::from_secs_f64(secs.clamp(0.2, 60.0))
            },
            w12_n: if quick { 2_000 } else { 100_000 },
            w13_n: if quick { 2_000 } else { 200_000 },
            w13_settle: Duration::from_millis(if quick { 300 } else { 1000 }),
            startup_reps: if quick { 1 } else { 5 },
            moto_n: if quick { 50 } else { 1000 },
            moto_cap: Duration::from_secs(if quick { 10 } else { 30 }),
            fsync_cal: Duration::from_millis(if quick { 500 } else { 2000 }),
        }
    }

    /// The parameters of a full run with default flags.
    #[cfg(test)]
    pub fn full() -> Params {
        Params::new(&Args::parse_from(["localsqs-bench"]))
    }

    /// The parameters of `--quick` with default flags.
    #[cfg(test)]
    pub fn quick() -> Params {
        Params::new(&Args::parse_from(["localsqs-bench", "--quick"]))
    }
}
