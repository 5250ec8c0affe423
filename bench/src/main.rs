//! `localsqs-bench`: the benchmark harness of issues #8 and #16 (docs/benchmarks.md); this file is its
//! entry point.
//!
//! Starts localsqs (`target/release/localsqs`), a bare hyper calibration server (this binary
//! with `--serve-calibration`) and, when installed, `moto_server`, all on loopback; drives them
//! with a tokio + hyper 1 closed-loop load generator in both SQS protocols; reads server CPU and
//! RSS from /proc; prints a Markdown table and writes JSON.
//!
//! `--quick` is the CI mode: small counts, under two minutes, and a non-zero exit only on a
//! crash or a correctness violation, never on a timing.
//!
//! Layout: `cli` (flags and counts), `session` (one run from build to report), `workloads` (one
//! module per workload, each with its rows of the targets table), `check` (those rows),
//! `harness` (what workloads run against), `driver` (the closed-loop load generator), `sqs`
//! (requests and responses), `http` (connections and the calibration server), `procfs`
//! (processes and /proc), `report` (samples and Markdown), `charts` (SVG charts), `stamp` (the environment stamp).

mod charts;
mod check;
mod cli;
mod driver;
mod harness;
mod http;
mod procfs;
mod report;
mod session;
mod sqs;
mod stamp;
mod workloads;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    if args.serve_calibration {
        return match http::serve_calibration(args.port) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("calibration server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(json) = &args.charts_from {
        return match charts::redraw(json, &cli::Params::new(&args)) {
            Ok(files) => {
                for f in files {
                    eprintln!("localsqs-bench: wrote {}", f.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("localsqs-bench: --charts-from: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("localsqs-bench: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(session::bench(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("localsqs-bench: FAILED (correctness violations or a crash; see above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("localsqs-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}
