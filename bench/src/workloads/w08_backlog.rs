//! W8: a 1M × 200 B backlog loaded through SendMessageBatch into a durable server; clean and
//! `kill -9` restarts timed to the first ReceiveMessage that returns a message; a drain that must
//! give back every acknowledged message exactly once (the shared run is `backlog`); and the same
//! load in memory, whose RSS must stay within the bodies plus 150 B per message.

use std::sync::Arc;
use std::time::Duration;

use super::{Workload, backlog};
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Cfg, Metrics, Progress, Tgt};
use crate::harness::{Bench, T_SELF};
use crate::http::Proto;
use crate::procfs::Kind;

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
    let bl = backlog::Backlog {
        bin: &b.bin,
        name: "w8",
        dir: b.scratch.join("w8-data"),
        logs: b.logs.clone(),
        n: b.p.w8_n,
        restarts: b.p.w8_restarts,
        drain: true,
        quick: b.args.quick,
    };
    let res = backlog::durable(&bl, b.base).await;
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
    let mut cfg = Cfg::preload(Proto::Json, 16, b.p.w8_n, Duration::from_secs(120));
    cfg.track = false;
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

/// Body bytes of every message of the backlog.
const BODY: u64 = 200;
/// What the in-memory store may spend per message beyond its body (issue #16).
const OVERHEAD_PER_MSG: u64 = 150;

/// `n` as a label: `10M`, `200k`, `2500`.
pub fn count_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// The RSS bound of the in-memory backlog: n × (body + 150 B), in MiB to one decimal.
pub fn memory_bound_mib(n: u64) -> f64 {
    let mib = (n * (BODY + OVERHEAD_PER_MSG)) as f64 / 1048576.0;
    (mib * 10.0).round() / 10.0
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let n = count_label(p.w8_n);
    let label = format!("W8 {n} × 200 B backlog (durable)");
    let row =
        |metric, key, unit| Check::new(label.clone(), metric, cell(w, VARIANT, T_SELF, key), unit);
    vec![
        row("peak RSS during load", "load_hwm_mib", Unit::MiB).below(150.0),
        row("peak RSS after restart and drain", "hwm_mib", Unit::MiB).below(150.0),
        row("bytes/message on disk", "disk_bytes_per_msg", Unit::Bytes).at_most(400.0),
        row(
            "first receive after clean restart",
            "restart_clean_first_receive_ms",
            Unit::Ms,
        )
        .below(1000.0),
        row(
            "first receive after kill -9",
            "restart_kill9_first_receive_ms",
            Unit::Ms,
        )
        .below(1000.0),
        Check::new(
            format!("W8 {n} × 200 B backlog (in memory)"),
            "RSS with the backlog loaded",
            cell(w, VARIANT_MEMORY, T_SELF, "rss_mib"),
            Unit::MiB,
        )
        .at_most(memory_bound_mib(p.w8_n))
        .bound_named("n × (200 + 150) B")
        .aside("the bodies plus 150 B per message"),
    ]
}
