//! W8: a 1M × 200 B backlog loaded through SendMessageBatch into a durable server; clean and
//! `kill -9` restarts timed to the first ReceiveMessage that returns a message; a drain that must
//! give back every acknowledged message exactly once; and the same load in memory for RSS.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Cfg, Metrics, Mode, Progress, Tgt};
use crate::harness::{Bench, T_SELF};
use crate::http::{Conn, Proto};
use crate::procfs::{self, Kind, Server};
use crate::sqs;

pub const WORKLOAD: Workload = Workload {
    id: "W8",
    name: "1M × 200 B backlog, durable, with restarts",
    measures: "peak RSS (VmHWM) during load and after restart and drain, data-dir bytes per \
               message, load and drain rates, exec → first ReceiveMessage returning a message \
               after clean and kill -9 restarts; RSS of the same load in memory",
    runs: "once, last, on servers of its own: load with SendMessageBatch at 16 connections, \
           3 clean and 3 kill -9 restarts, drain and verify; then the same load in memory",
};

/// The durable backlog.
pub const VARIANT: &str = "200 B backlog, durable";
/// The same load in memory.
pub const VARIANT_MEMORY: &str = "200 B backlog, in memory";

pub async fn run(b: &mut Bench) {
    let w = WORKLOAD.id;
    if b.fatal {
        return;
    }
    b.step(&format!("{w} {VARIANT} ({} messages)", b.p.w8_n));
    let bl = Backlog {
        bin: &b.bin,
        dir: b.scratch.join("w8-data"),
        logs: b.logs.clone(),
        n: b.p.w8_n,
        restarts: b.p.w8_restarts,
        quick: b.args.quick,
    };
    let res = backlog(&bl, b.base).await;
    b.record((w, VARIANT, Kind::Localsqs, 0), w, res);
    // The same backlog in memory: RSS only.
    if !b.args.quick && !b.fatal {
        b.step(&format!("{w} {VARIANT_MEMORY}"));
        in_memory(b).await;
    }
}

async fn in_memory(b: &mut Bench) {
    let what = "W8 memory";
    let mut s = match b.spawn_localsqs("w8-memory", None).await {
        Ok(s) => s,
        Err(e) => {
            b.file(what, Kind::Localsqs, vec![e]);
            return;
        }
    };
    let mut cfg = Cfg::new(Proto::Json, 16, Mode::SendOnly);
    cfg.batch = 10;
    cfg.warmup = Duration::ZERO;
    cfg.duration = Duration::from_secs(120);
    cfg.max_msgs = b.p.w8_n;
    cfg.track = false;
    cfg.delete_queue = false;
    let res = driver::run(
        Tgt::of(&s),
        cfg,
        None,
        Arc::new(Progress::default()),
        b.base,
    )
    .await
    .map(|o| {
        let mut m = Metrics::new();
        for k in [
            "msgs_total",
            "msgs_per_s",
            "hwm_mib",
            "rss_mib",
            "server_cpu_us_per_msg",
        ] {
            if let Some(v) = o.metrics.get(k) {
                m.insert(k.into(), *v);
            }
        }
        (m, o.problems)
    });
    b.record((WORKLOAD.id, VARIANT_MEMORY, Kind::Localsqs, 0), what, res);
    b.check_alive(&mut s, what);
    s.terminate(Duration::from_secs(30));
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let n = if p.w8_n >= 1_000_000 {
        format!("{}M", p.w8_n / 1_000_000)
    } else {
        p.w8_n.to_string()
    };
    let label = format!("W8 {n} × 200 B backlog (durable)");
    let row =
        |metric, key, unit| Check::new(label.clone(), metric, cell(w, VARIANT, T_SELF, key), unit);
    vec![
        row("peak RSS during load", "load_hwm_mib", Unit::MiB).below(300.0),
        row("peak RSS after restart and drain", "hwm_mib", Unit::MiB).below(300.0),
        row("bytes/message on disk", "disk_bytes_per_msg", Unit::Bytes).at_most(400.0),
        row(
            "first receive after clean restart",
            "restart_clean_first_receive_ms",
            Unit::Ms,
        )
        .below(2000.0),
        row(
            "first receive after kill -9",
            "restart_kill9_first_receive_ms",
            Unit::Ms,
        )
        .below(2000.0),
    ]
}

/// What the durable backlog run needs.
struct Backlog<'a> {
    bin: &'a Path,
    dir: PathBuf,
    logs: PathBuf,
    n: u64,
    restarts: usize,
    quick: bool,
}

/// Loads `n` × 200 B through SendMessageBatch into a durable server, measure RSS and disk,
/// restart cleanly and after kill -9 (time to first receive), then drain and check that every
/// acknowledged message came back exactly once.
async fn backlog(b: &Backlog<'_>, base: Instant) -> Result<(Metrics, Vec<String>), String> {
    let p = Proto::Json;
    let _ = std::fs::remove_dir_all(&b.dir);
    std::fs::create_dir_all(&b.dir).map_err(|e| e.to_string())?;
    let args = vec!["--data-dir".to_owned(), b.dir.display().to_string()];
    let mut launches = 0;
    let spawn = |launches: &mut usize| {
        *launches += 1;
        Server::spawn(
            Kind::Localsqs,
            b.bin,
            &args,
            b.logs.join(format!("w8-{launches}.log")),
        )
    };
    let mut s = spawn(&mut launches)?;
    driver::wait_ready(&s, p, Duration::from_secs(30)).await?;
    let t = Tgt::of(&s);
    let mut m = Metrics::new();
    let mut problems = Vec::new();

    // Load.
    let mut cfg = Cfg::new(p, 16, Mode::SendOnly);
    cfg.batch = 10;
    cfg.warmup = Duration::ZERO;
    cfg.duration = Duration::from_secs(if b.quick { 30 } else { 120 });
    cfg.max_msgs = b.n;
    cfg.drain_after = false;
    cfg.delete_queue = false;
    let load = driver::run(t, cfg, None, Arc::new(Progress::default()), base).await?;
    problems.extend(load.problems.iter().map(|x| format!("load: {x}")));
    let loaded = load.sent.len() as u64;
    let url = load.url.clone();
    m.insert("loaded".into(), loaded as f64);
    if let Some(v) = load.metrics.get("msgs_per_s") {
        m.insert("load_msgs_per_s".into(), *v);
    }
    for k in [
        "hwm_mib",
        "rss_mib",
        "server_write_bytes_per_msg",
        "server_cpu_us_per_msg",
    ] {
        if let Some(v) = load.metrics.get(k) {
            m.insert(format!("load_{k}"), *v);
        }
    }
    let disk = procfs::dir_bytes(&b.dir);
    m.insert("disk_mib".into(), disk as f64 / 1048576.0);
    m.insert(
        "disk_bytes_per_msg".into(),
        disk as f64 / loaded.max(1) as f64,
    );
    if !problems.is_empty() {
        return Ok((m, problems));
    }

    // Restarts.
    let mut received = Vec::new();
    let mut clean_ms = Vec::new();
    let mut kill_ms = Vec::new();
    let mut answer_ms = Vec::new();
    let mut rss_after = 0.0f64;
    for i in 0..b.restarts * 2 {
        let clean = i % 2 == 0;
        if clean {
            let t0 = Instant::now();
            if !s.terminate(Duration::from_secs(60)) {
                problems.push("localsqs did not exit within 60 s of SIGTERM".into());
            }
            m.insert("shutdown_ms".into(), t0.elapsed().as_secs_f64() * 1000.0);
        } else {
            s.kill9();
        }
        s = spawn(&mut launches)?;
        let (answered, first, tag) = first_receive(&s, p, &url, Duration::from_secs(60)).await?;
        if let Some(tag) = tag {
            received.push(tag);
        }
        answer_ms.push(answered.as_secs_f64() * 1000.0);
        if clean {
            clean_ms.push(first.as_secs_f64() * 1000.0);
        } else {
            kill_ms.push(first.as_secs_f64() * 1000.0);
        }
        rss_after = rss_after.max(procfs::rss_mib(s.pid));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    m.insert("restart_clean_first_receive_ms".into(), med(&mut clean_ms));
    m.insert("restart_kill9_first_receive_ms".into(), med(&mut kill_ms));
    m.insert("restart_first_answer_ms".into(), med(&mut answer_ms));
    m.insert("restarts_each".into(), b.restarts as f64);
    m.insert("rss_after_restart_mib".into(), rss_after);
    let t = Tgt::of(&s);

    // Drain.
    let within = Duration::from_secs(if b.quick { 60 } else { 180 });
    let d = driver::drain_queue(t, p, &url, 8, within, base).await?;
    problems.extend(d.problems.iter().map(|x| format!("drain: {x}")));
    if let Some(v) = d.metrics.get("drain_msgs_per_s") {
        m.insert("drain_msgs_per_s".into(), *v);
    }
    received.extend(d.received);
    let left = driver::queue_depth(t, p, &url).await?;
    if left != 0 {
        problems.push(format!("{left} messages left after the drain"));
    }
    problems.extend(driver::verify(&load.sent, &received, left == 0));
    m.insert("hwm_mib".into(), procfs::hwm_mib(s.pid));
    let disk_after = procfs::dir_bytes(&b.dir);
    m.insert("disk_after_drain_mib".into(), disk_after as f64 / 1048576.0);
    if !s.alive() {
        problems.push(format!("localsqs exited during W8:\n{}", s.log_tail()));
    }
    s.terminate(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&b.dir);
    Ok((m, problems))
}

/// Time from spawn to the first ReceiveMessage that returns a message (which is then deleted).
/// Returns (time to first answered request, time to first message, the message's tag).
async fn first_receive(
    s: &Server,
    p: Proto,
    url: &str,
    within: Duration,
) -> Result<(Duration, Duration, Option<u64>), String> {
    let end = Instant::now() + within;
    let req = sqs::receive(p, url, 1, None);
    let mut answered = None;
    let mut last = String::new();
    while Instant::now() < end {
        let mut c = match Conn::connect(s.addr, p).await {
            Ok(c) => c,
            Err(e) => {
                last = e;
                tokio::time::sleep(Duration::from_micros(500)).await;
                continue;
            }
        };
        while Instant::now() < end {
            let r = match c.call(&req, Duration::from_secs(10)).await {
                Ok(r) => r,
                Err(e) => {
                    last = e;
                    break;
                }
            };
            answered.get_or_insert_with(|| s.spawned.elapsed());
            let msgs = sqs::parse_receive(p, &r)?;
            if let Some(m) = msgs.first() {
                let t = s.spawned.elapsed();
                let r = c
                    .call(&sqs::delete(p, url, &m.handle), Duration::from_secs(10))
                    .await?;
                if r.status != 200 {
                    return Err(format!(
                        "DeleteMessage after restart: {}",
                        sqs::describe(&r)
                    ));
                }
                let tag = sqs::parse_body(&m.body).map(|x| x.0);
                return Ok((answered.unwrap_or(t), t, tag));
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
    }
    Err(format!(
        "no message received within {within:?} after restart: {last}"
    ))
}
