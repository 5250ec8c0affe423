//! W11: durable mode (`--data-dir`): SendMessage at 64 connections against the in-memory W1 of
//! the same repeat; once: the pipeline, the batch pipeline, and fsyncs per message counted with
//! `strace -c`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Workload, w01_send};
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Metrics, Mode, Progress, Tgt};
use crate::harness::{Bench, Servers, T_SELF};
use crate::http::Proto;
use crate::procfs::{Kind, Server};

pub const WORKLOAD: Workload = Workload {
    id: "W11",
    name: "durable SendMessage, JSON, 64 connections",
    measures: "msgs/s and durable / in-memory W1 of the same repeat; once: the pipeline and \
               the batch pipeline, and fsyncs per message",
    runs: "on a second localsqs with --data-dir, closed loop for 5 s or 200k messages per \
           repeat; fsyncs with strace -c -f --seccomp-bpf over 3 s of SendMessage",
};

/// Durable SendMessage.
pub const VARIANT: &str = "durable SendMessage json c64";
/// Durable pipeline.
pub const VARIANT_PIPELINE: &str = "durable send→receive→delete json c64";
/// Durable batch pipeline.
pub const VARIANT_BATCH: &str = "durable batch 10 send→receive→delete json c64";
/// fsyncs per message.
pub const VARIANT_FSYNCS: &str = "fsyncs under strace -c, SendMessage c64";
/// Target name of the ratio durable / in-memory W1 (msgs/s, same repeat).
pub const R_MEMORY: &str = "durable/memory";

/// The data directory of the durable server.
pub fn data_dir(b: &Bench) -> PathBuf {
    b.scratch.join("w11-data")
}

/// Starts the durable server the repeats share, when W11 runs.
pub async fn start(b: &mut Bench) -> Result<Option<Server>, String> {
    if !b.want(WORKLOAD.id) || !b.owns_servers() {
        return Ok(None);
    }
    let dir = data_dir(b);
    b.spawn_localsqs("localsqs-durable", Some(&dir))
        .await
        .map(Some)
}

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let w = WORKLOAD.id;
    let Some(d) = s.durable.as_mut() else {
        return;
    };
    if !b.want(w) {
        return;
    }
    let mut cfg = b.cfg(Proto::Json, Mode::SendOnly);
    cfg.track = false;
    cfg.max_msgs = b.p.w1_cap;
    let m = b.cell(w, VARIANT, Tgt::of(d), cfg, r).await;
    let w1 = w01_send::variant(Proto::Json, b.p.conns);
    let w1_m = b.book.metrics(w01_send::W1.id, &w1, T_SELF, r);
    b.ratio((w, VARIANT, r), m.as_ref(), w1_m.as_ref(), R_MEMORY);
    b.check_alive(d, w);
}

pub async fn once(b: &mut Bench, s: &mut Servers) {
    let w = WORKLOAD.id;
    let Some(d) = s.durable.as_mut() else {
        return;
    };
    if !b.want(w) {
        return;
    }
    let dt = Tgt::of(d);
    let cfg = b.cfg(Proto::Json, Mode::Pipeline);
    b.cell(w, VARIANT_PIPELINE, dt, cfg, 0).await;
    let mut cfg = b.cfg(Proto::Json, Mode::Pipeline);
    cfg.batch = 10;
    b.cell(w, VARIANT_BATCH, dt, cfg, 0).await;
    if !b.fatal {
        fsyncs(b, dt).await;
    }
    b.check_alive(d, w);
}

/// fsyncs per message of the durable server during a 3 s SendMessage run (strace -c).
async fn fsyncs(b: &mut Bench, t: Tgt) {
    let what = "W11 fsync count";
    let mut cfg = b.cfg(Proto::Json, Mode::SendOnly);
    cfg.track = false;
    cfg.warmup = Duration::ZERO;
    cfg.duration = Duration::from_secs(if b.args.quick { 2 } else { 5 });
    let progress = Arc::new(Progress::default());
    let pr = Arc::clone(&progress);
    let base = b.base;
    let load = tokio::spawn(async move { driver::run(t, cfg, None, pr, base).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let a0 = progress.acked.load(Ordering::Relaxed);
    let secs = if b.args.quick { 1 } else { 3 };
    let fs = tokio::task::spawn_blocking(move || count_fsyncs(t.pid, secs))
        .await
        .ok()
        .flatten();
    let a1 = progress.acked.load(Ordering::Relaxed);
    match load.await {
        Ok(Ok(o)) => b.file(what, Kind::Localsqs, o.problems),
        Ok(Err(e)) => b.file(what, Kind::Localsqs, vec![e]),
        Err(e) => b.file(what, Kind::Localsqs, vec![e.to_string()]),
    }
    match fs {
        Some(n) if a1 > a0 => {
            let msgs = (a1 - a0) as f64;
            let mut m = Metrics::new();
            m.insert("fsyncs".into(), n as f64);
            m.insert("msgs_while_traced".into(), msgs);
            m.insert("fsyncs_per_msg".into(), n as f64 / msgs);
            m.insert("msgs_per_fsync".into(), msgs / (n.max(1)) as f64);
            b.book.add(WORKLOAD.id, VARIANT_FSYNCS, T_SELF, 0, m);
        }
        _ => b
            .notes
            .push("W11: fsync count unavailable (strace missing or refused)".into()),
    }
}

pub fn checks(_: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = "W11 durable SendMessage, 64 connections";
    vec![
        Check::new(
            label,
            "msgs/s",
            cell(w, VARIANT, T_SELF, "msgs_per_s"),
            Unit::Rate,
        )
        .at_least(15_000.0),
        Check::new(
            label,
            "durable / in-memory",
            cell(w, VARIANT, R_MEMORY, "ratio"),
            Unit::Ratio,
        )
        .at_least(0.7),
    ]
}

/// Counts fsync + fdatasync calls of `pid` over `secs` with `strace -c` (None if strace is
/// missing or refuses).
fn count_fsyncs(pid: u32, secs: u32) -> Option<u64> {
    let out = Command::new("timeout")
        .args([
            "-s",
            "INT",
            &secs.to_string(),
            "strace",
            "-f",
            "-c",
            "--seccomp-bpf",
            "-e",
            "trace=fsync,fdatasync",
            "-p",
            &pid.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let mut total = None;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let Some(name) = f.last()
            && (*name == "fsync" || *name == "fdatasync")
            && f.len() >= 5
            && let Ok(calls) = f[3].parse::<u64>()
        {
            *total.get_or_insert(0) += calls;
        }
    }
    if total.is_none() && text.contains("total") {
        return Some(0);
    }
    total
}
