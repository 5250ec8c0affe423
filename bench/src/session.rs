//! One benchmark session from start to report: builds localsqs, stamps the environment, starts
//! the shared servers, runs the workloads in their order (`workloads`), stops every server it
//! started, and writes the Markdown and JSON reports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::charts;
use crate::check::Verdict;
use crate::cli::{Args, Params};
use crate::driver::{self, Tgt};
use crate::harness::{Bench, Servers};
use crate::http::Proto;
use crate::procfs::{self, Kind, Server};
use crate::report::{self, Book};
use crate::stamp::{self, Env};
use crate::workloads::{self, moto, sweep_report, w11_durable};

/// Runs the session; `Ok(true)` when no correctness violation (or crash) was found.
pub async fn bench(args: Args) -> Result<bool, String> {
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = args
        .server_bin
        .clone()
        .unwrap_or_else(|| target_dir.join("release").join("localsqs"));
    if args.server_bin.is_none() && !args.no_build && args.endpoint.is_none() {
        build_server(&root)?;
    }
    if args.endpoint.is_none() && !bin.is_file() {
        return Err(format!(
            "{} not found: run `cargo build --release` or pass --server-bin",
            bin.display()
        ));
    }
    let scratch = args
        .scratch
        .clone()
        .unwrap_or_else(|| target_dir.join("localsqs-bench"));
    let logs = scratch.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let p = Params::new(&args);
    let mut env = Env::collect(&root, &bin);
    env.mode = if args.quick {
        "quick".into()
    } else {
        "full".into()
    };
    env.repeats = p.repeat;
    env.duration_s = p.duration.as_secs_f64();
    env.data_dir_fs = procfs::fs_type(&scratch);
    env.load1_before = procfs::load1();
    let (tot0, steal0) = procfs::cpu_totals();
    env.fsync_per_s = stamp::fsync_calibration(&scratch, p.fsync_cal).unwrap_or(f64::NAN);
    let moto_bin = if args.no_moto {
        None
    } else {
        args.moto.clone().or_else(|| find_on_path("moto_server"))
    };
    env.moto = match &moto_bin {
        Some(m) => format!("moto_server at {}", m.display()),
        None => "moto_server not found (moto comparison skipped)".into(),
    };
    eprintln!(
        "localsqs-bench ({}): server {}, scratch {}, {} repeat(s) × {:.1} s",
        env.mode,
        bin.display(),
        scratch.display(),
        p.repeat,
        p.duration.as_secs_f64()
    );
    let mut b = Bench {
        args,
        p,
        root,
        scratch,
        logs,
        bin,
        base: Instant::now(),
        book: Book::default(),
        problems: Vec::new(),
        notes: Vec::new(),
        fatal: false,
        moto_bin,
    };
    if env.data_dir_fs == "tmpfs" {
        b.notes
            .push("the scratch directory is on tmpfs: durable figures are not meaningful".into());
    }

    workloads::first(&mut b).await;
    let mut s = start_servers(&mut b).await?;
    for r in 0..b.p.repeat {
        if b.fatal {
            break;
        }
        eprintln!(
            "[{:6.1}s] repeat {}/{}",
            b.base.elapsed().as_secs_f64(),
            r + 1,
            b.p.repeat
        );
        workloads::round(&mut b, &mut s, r).await;
    }
    eprintln!("[{:6.1}s] single runs", b.base.elapsed().as_secs_f64());
    workloads::once(&mut b, &mut s).await;
    workloads::last(&mut b).await;
    eprintln!("[{:6.1}s] stopping servers", b.base.elapsed().as_secs_f64());
    stop_servers(&mut b, s);

    eprintln!("[{:6.1}s] report", b.base.elapsed().as_secs_f64());
    env.load1_after = procfs::load1();
    let (tot1, steal1) = procfs::cpu_totals();
    env.steal_pct = if tot1 > tot0 {
        (steal1 - steal0) as f64 * 100.0 / (tot1 - tot0) as f64
    } else {
        0.0
    };
    env.wall_s = started.elapsed().as_secs_f64();
    if env.load1_before > 1.5 {
        b.notes.push(format!(
            "load1 was {:.2} at the start (> 1.5): wall-clock figures are noisy (docs/benchmarks.md)",
            env.load1_before
        ));
    }
    if env.steal_pct > 5.0 {
        b.notes.push(format!(
            "CPU steal was {:.1}% (> 5%): noisy run",
            env.steal_pct
        ));
    }
    write_reports(&b, &env)?;
    Ok(b.problems.is_empty())
}

/// localsqs in memory (or the `--endpoint` stand-in), the calibration server, moto, the
/// durable localsqs and LocalStack, as the selected workloads and flags need them.
async fn start_servers(b: &mut Bench) -> Result<Servers, String> {
    let own = match &b.args.endpoint {
        Some(url) => {
            let addr = parse_endpoint(url)?;
            // A stand-in record for an external process: never signalled.
            Server::external(Tgt {
                kind: Kind::Localsqs,
                addr,
                pid: b.args.endpoint_pid.unwrap_or(0),
            })
        }
        None => b.spawn_localsqs("localsqs-memory", None).await?,
    };
    let cal = if workloads::needs_calibration(b) {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let s = Server::spawn(
            Kind::Calibration,
            &exe,
            &["--serve-calibration".to_owned()],
            b.log("calibration"),
        )?;
        driver::wait_ready(&s, Proto::Json, Duration::from_secs(10)).await?;
        Some(s)
    } else {
        None
    };
    let moto = moto::start(b).await;
    let durable = w11_durable::start(b).await?;
    let localstack = match b.args.localstack.clone() {
        Some(url) => localstack(b, &url).await,
        None => None,
    };
    Ok(Servers {
        own,
        cal,
        moto,
        durable,
        localstack,
    })
}

/// The LocalStack at `url`, once it answers ListQueues; a failure is a note, not an error.
async fn localstack(b: &mut Bench, url: &str) -> Option<Server> {
    let addr = match parse_endpoint(url) {
        Ok(a) => a,
        Err(e) => {
            b.notes.push(format!("LocalStack skipped: {e}"));
            return None;
        }
    };
    let s = Server::external(Tgt {
        kind: Kind::LocalStack,
        addr,
        pid: 0,
    });
    match driver::wait_ready(&s, Proto::Json, Duration::from_secs(10)).await {
        Ok(_) => {
            b.notes.push(format!(
                "LocalStack at {url}: runs use 8 connections and are capped at {} messages and {} s, like moto's; its CPU and RSS are not measured",
                b.p.moto_n,
                b.p.moto_cap.as_secs()
            ));
            Some(s)
        }
        Err(e) => {
            b.notes.push(format!("LocalStack skipped: {e}"));
            None
        }
    }
}

/// Stops everything this session started; a localsqs that crashed or ignores SIGTERM is a
/// violation.
fn stop_servers(b: &mut Bench, mut s: Servers) {
    if b.owns_servers() {
        b.check_alive(&mut s.own, "end of run");
        if !s.own.terminate(Duration::from_secs(30)) {
            b.problems
                .push("localsqs (memory) did not exit within 30 s of SIGTERM".into());
        }
    }
    if let Some(d) = s.durable.as_mut() {
        b.check_alive(d, "end of run");
        if !d.terminate(Duration::from_secs(30)) {
            b.problems
                .push("localsqs (durable) did not exit within 30 s of SIGTERM".into());
        }
        let _ = std::fs::remove_dir_all(w11_durable::data_dir(b));
    }
    if let Some(c) = s.cal.as_mut() {
        c.kill9();
    }
    if let Some(m) = s.moto.as_mut() {
        m.terminate(Duration::from_secs(5));
    }
}

/// Prints the report and writes `bench/results/{latest,quick}.{json,md}` (or `--out`).
fn write_reports(b: &Bench, env: &Env) -> Result<(), String> {
    let checks: Vec<Verdict> = workloads::checks(&b.p)
        .iter()
        .map(|c| c.judge(&b.book, &b.problems))
        .collect();
    let sweeps = sweep_report::series(&b.book);
    let sweep_md = sweep_report::markdown(&sweeps);
    let md = report::markdown(env, &checks, &b.book, &b.problems, &b.notes, true) + &sweep_md;
    println!(
        "{}{sweep_md}",
        report::markdown(env, &checks, &b.book, &b.problems, &b.notes, false)
    );
    let out = b.args.out.clone().unwrap_or_else(|| {
        b.root.join("bench").join("results").join(if b.args.quick {
            "quick.json"
        } else {
            "latest.json"
        })
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let json = serde_json::json!({
        "env": env,
        "checks": checks,
        "sweeps": sweeps,
        "summary": b.book.summary(),
        "samples": b.book.samples,
        "problems": b.problems,
        "notes": b.notes,
    });
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::write(out.with_extension("md"), &md);
    for chart in charts::write_all(&b.book, &b.p, &sweeps, &out) {
        eprintln!("localsqs-bench: wrote {}", chart.display());
    }
    eprintln!(
        "localsqs-bench: wrote {} and {} in {:.0} s; {} correctness violation(s)",
        out.display(),
        out.with_extension("md").display(),
        env.wall_s,
        b.problems.len()
    );
    Ok(())
}

fn build_server(root: &Path) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("localsqs-bench: cargo build --release -p localsqs --bin localsqs");
    let st = Command::new(cargo)
        .args(["build", "--release", "-p", "localsqs", "--bin", "localsqs"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cargo build --release failed: {st}"))
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

fn parse_endpoint(url: &str) -> Result<std::net::SocketAddr, String> {
    let hostport = url
        .strip_prefix("http://")
        .unwrap_or(url)
        .trim_end_matches('/');
    let hostport = hostport.replace("localhost", "127.0.0.1");
    let addr: std::net::SocketAddr = hostport
        .parse()
        .map_err(|_| format!("--endpoint {url}: expected http://127.0.0.1:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--endpoint {url}: only loopback endpoints are allowed"
        ));
    }
    Ok(addr)
}
