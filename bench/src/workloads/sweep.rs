//! The sweeps (issue #16): one variable at a time — connections, backlog, queue count, message
//! size — with throughput, p99 and peak RSS at each point, each point on a fresh localsqs so
//! that its RSS is its own. They run with `--sweep` or when named in `--only`
//! (`sweep-conns,…`), and in `--quick` with tiny points, for correctness only. `sweep_report`
//! turns the samples into tables and the data of the charts.

use std::sync::Arc;
use std::time::Duration;

use super::{Workload, sender};
use crate::driver::{self, Cfg, Metrics, Mode, Progress, Tgt};
use crate::harness::{Bench, Servers};
use crate::http::Proto;
use crate::procfs::{self, Kind, Server};

/// A swept variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Conns,
    Backlog,
    Queues,
    Size,
}

pub const CONNS: Workload = Workload {
    id: "sweep-conns",
    name: "sweep of connections: 1, 4, 16, 64, 256",
    measures: "msgs/s, p99 and peak RSS of the send → receive → delete pipeline at each count",
    runs: "with --sweep or --only sweep-conns; a fresh in-memory localsqs per point, JSON, \
           closed loop for --duration, drained and verified (quick: 1 and 16 connections)",
};

pub const BACKLOG: Workload = Workload {
    id: "sweep-backlog",
    name: "sweep of backlog: 1k, 10k, 100k, 1M (up to --sweep-backlog-max)",
    measures: "msgs/s, p99 and peak RSS of the pipeline on a queue holding that backlog",
    runs: "with --sweep or --only sweep-backlog; a fresh in-memory localsqs per point, the \
           backlog loaded with SendMessageBatch, then the pipeline at 16 connections \
           (quick: 1k)",
};

pub const QUEUES: Workload = Workload {
    id: "sweep-queues",
    name: "sweep of queue count: 1, 100, 10k, 100k",
    measures: "msgs/s, p99 and peak RSS of SendMessage spread round-robin over that many \
               queues; CreateQueue rate",
    runs: "with --sweep or --only sweep-queues; a fresh in-memory localsqs per point, queues \
           created over 16 connections, then SendMessage at 16 connections (quick: 1 and 100; \
           up to 100 queues, every queue's depth is checked against its acknowledged sends)",
};

pub const SIZE: Workload = Workload {
    id: "sweep-size",
    name: "sweep of message size: 100 B, 1 KiB, 10 KiB, 100 KiB, 1 MiB",
    measures: "msgs/s, MB/s, p99 and peak RSS of the pipeline at each size",
    runs: "with --sweep or --only sweep-size; a fresh in-memory localsqs per point, \
           MaximumMessageSize=1048576, the pipeline at 16 connections, drained and verified \
           (quick: 100 B and 10 KiB)",
};

/// Connections of every sweep but the connection sweep.
const SWEEP_CONNS: usize = 16;

impl Axis {
    pub const ALL: [Axis; 4] = [Axis::Conns, Axis::Backlog, Axis::Queues, Axis::Size];

    pub fn workload(self) -> &'static Workload {
        match self {
            Axis::Conns => &CONNS,
            Axis::Backlog => &BACKLOG,
            Axis::Queues => &QUEUES,
            Axis::Size => &SIZE,
        }
    }

    /// The swept variable with its unit, as an axis title.
    pub fn x_title(self) -> &'static str {
        match self {
            Axis::Conns => "connections",
            Axis::Backlog => "backlog (messages in the queue)",
            Axis::Queues => "queues",
            Axis::Size => "message size (bytes)",
        }
    }

    /// What each point runs, for chart captions.
    pub fn load(self) -> &'static str {
        match self {
            Axis::Queues => "SendMessage, 16 connections",
            Axis::Conns => "send → receive → delete",
            Axis::Backlog | Axis::Size => "send → receive → delete, 16 connections",
        }
    }

    /// A point's label: `c16`, `100k`, `1 KiB`.
    pub fn label(self, x: u64) -> String {
        match self {
            Axis::Conns => format!("c{x}"),
            Axis::Backlog | Axis::Queues => super::w08_backlog::count_label(x),
            Axis::Size => size_label(x),
        }
    }

    /// The points of a run: full or quick, the backlog capped at `backlog_max`.
    pub fn points(self, quick: bool, backlog_max: u64) -> Vec<u64> {
        let (full, tiny): (&[u64], &[u64]) = match self {
            Axis::Conns => (&[1, 4, 16, 64, 256], &[1, 16]),
            Axis::Backlog => (&[1_000, 10_000, 100_000, 1_000_000, 10_000_000], &[1_000]),
            Axis::Queues => (&[1, 100, 10_000, 100_000], &[1, 100]),
            Axis::Size => (
                &[100, 1 << 10, 10 << 10, 100 << 10, 1 << 20],
                &[100, 10 << 10],
            ),
        };
        let v = if quick { tiny } else { full };
        v.iter()
            .copied()
            .filter(|&x| self != Axis::Backlog || x <= backlog_max)
            .collect()
    }
}

/// Bytes as `100 B`, `10 KiB`, `1 MiB`.
pub fn size_label(x: u64) -> String {
    if x >= 1 << 20 && x.is_multiple_of(1 << 20) {
        format!("{} MiB", x >> 20)
    } else if x >= 1 << 10 && x.is_multiple_of(1 << 10) {
        format!("{} KiB", x >> 10)
    } else {
        format!("{x} B")
    }
}

/// The `--only` id that selects every sweep.
pub const ALL_SWEEPS: &str = "sweep";

/// Whether this run sweeps `a`: `--sweep`, or named in `--only` (or all of them by `sweep`), or
/// `--quick` with no `--only`.
pub fn wanted(b: &Bench, a: Axis) -> bool {
    let id = a.workload().id;
    b.args.sweep
        || b.args
            .only
            .iter()
            .any(|o| o.eq_ignore_ascii_case(id) || o.eq_ignore_ascii_case(ALL_SWEEPS))
        || (b.args.quick && b.args.only.is_empty())
}

/// Runs every wanted sweep.
pub async fn run(b: &mut Bench, s: &mut Servers) {
    for a in Axis::ALL {
        if !wanted(b, a) || b.fatal {
            continue;
        }
        for x in a.points(b.args.quick, b.p.sweep_backlog_max) {
            if b.fatal {
                break;
            }
            let (w, v) = (a.workload().id, a.label(x));
            b.step(&format!("{w} {v}"));
            let mut own = match fresh(b, &format!("{w}-{v}")).await {
                Ok(o) => o,
                Err(e) => {
                    b.file(w, Kind::Localsqs, vec![e]);
                    continue;
                }
            };
            let t = own.as_ref().map_or_else(|| s.me(), Tgt::of);
            let res = point(b, a, x, t).await.map(|(mut m, probs)| {
                m.insert("x".into(), x as f64);
                if let Some(r) = m.get("msgs_per_s").copied() {
                    m.insert("mb_per_s".into(), r * x_bytes(a, x) / 1e6);
                }
                (m, probs)
            });
            b.record((w, &v, Kind::Localsqs, 0), &format!("{w} {v}"), res);
            match own.as_mut() {
                Some(srv) => {
                    b.check_alive(srv, w);
                    srv.terminate(Duration::from_secs(30));
                }
                None => b.check_alive(&mut s.own, w),
            }
        }
    }
}

/// Bytes per message at point `x` (200 B unless the size is swept).
fn x_bytes(a: Axis, x: u64) -> f64 {
    if a == Axis::Size { x as f64 } else { 200.0 }
}

/// A fresh localsqs for one point, or none with `--endpoint` (the shared server is used).
async fn fresh(b: &mut Bench, name: &str) -> Result<Option<Server>, String> {
    if !b.owns_servers() {
        return Ok(None);
    }
    let log: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    b.spawn_localsqs(&log, None).await.map(Some)
}

/// One point: its metrics and the problems found.
async fn point(b: &Bench, a: Axis, x: u64, t: Tgt) -> Result<(Metrics, Vec<String>), String> {
    let mut cfg = Cfg::new(Proto::Json, SWEEP_CONNS, Mode::Pipeline);
    cfg.warmup = b.p.warmup;
    cfg.duration = b.p.sweep_duration;
    let run = |cfg: Cfg, url: Option<String>| {
        driver::run(t, cfg, url, Arc::new(Progress::default()), b.base)
    };
    match a {
        Axis::Conns => {
            cfg.conns = usize::try_from(x).unwrap_or(1);
            run(cfg, None).await.map(|o| (o.metrics, o.problems))
        }
        Axis::Size => {
            cfg.body_len = usize::try_from(x).unwrap_or(200);
            cfg.attrs = vec![("MaximumMessageSize", (1u32 << 20).to_string())];
            cfg.timeout = Duration::from_secs(60);
            run(cfg, None).await.map(|o| (o.metrics, o.problems))
        }
        Axis::Backlog => {
            let mut load = Cfg::preload(Proto::Json, SWEEP_CONNS, x, Duration::from_secs(600));
            load.track = false;
            let l = run(load, None).await?;
            if !l.problems.is_empty() {
                return Ok((l.metrics, l.problems));
            }
            // Preloaded messages carry no tags of this run: no per-message verification.
            cfg.track = false;
            let o = run(cfg, Some(l.url)).await?;
            let mut m = o.metrics;
            if let Some(r) = l.metrics.get("msgs_per_s") {
                m.insert("load_msgs_per_s".into(), *r);
            }
            Ok((m, o.problems))
        }
        Axis::Queues => queues(b, usize::try_from(x).unwrap_or(1), t).await,
    }
}

/// Queues at most this many are each checked for depth = acknowledged sends.
const VERIFY_QUEUES_UP_TO: usize = 100;

/// `n` queues, then SendMessage spread round-robin over them.
async fn queues(b: &Bench, n: usize, t: Tgt) -> Result<(Metrics, Vec<String>), String> {
    let p = Proto::Json;
    let t0 = std::time::Instant::now();
    let urls = sender::create_queues(t, p, "sweep", n, SWEEP_CONNS).await?;
    let create_s = t0.elapsed().as_secs_f64();
    let load = sender::Load {
        proto: p,
        conns: SWEEP_CONNS,
        body_len: 200,
        urls: Arc::new(urls),
    };
    let run = sender::start(t, &load, Duration::from_secs(600)).await?;
    tokio::time::sleep(b.p.warmup + b.p.sweep_duration).await;
    let end = run.now();
    let log = run.stop().await;
    let mut m = log.window(b.p.warmup, end, "");
    m.insert("create_queues_per_s".into(), n as f64 / create_s.max(1e-9));
    m.insert("rss_mib".into(), procfs::rss_mib(t.pid));
    m.insert("hwm_mib".into(), procfs::hwm_mib(t.pid));
    let mut problems = log.problems.clone();
    if n <= VERIFY_QUEUES_UP_TO && problems.is_empty() {
        for (u, acked) in load.urls.iter().zip(&log.acked) {
            let depth = driver::queue_depth(t, p, u).await?;
            if depth != *acked {
                problems.push(format!("{u}: {acked} sends acknowledged, {depth} held"));
            }
        }
    }
    Ok((m, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_labels() {
        assert_eq!(Axis::Conns.points(false, 0), [1, 4, 16, 64, 256]);
        assert_eq!(
            Axis::Backlog.points(false, 1_000_000),
            [1_000, 10_000, 100_000, 1_000_000]
        );
        assert_eq!(Axis::Backlog.points(false, 10_000_000).len(), 5);
        assert_eq!(Axis::Backlog.points(true, 1_000_000), [1_000]);
        assert_eq!(Axis::Size.label(1 << 20), "1 MiB");
        assert_eq!(Axis::Size.label(10 << 10), "10 KiB");
        assert_eq!(Axis::Size.label(100), "100 B");
        assert_eq!(Axis::Queues.label(100_000), "100k");
        assert_eq!(Axis::Conns.label(64), "c64");
    }
}
