//! W7: 1 MiB messages through the pipeline on a fresh server, so that its peak RSS (VmHWM)
//! is this workload's: memory must grow with concurrency × size, not with volume.

use std::time::Duration;

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{Cfg, Mode, Tgt};
use crate::harness::{Bench, T_SELF};
use crate::http::Proto;
use crate::procfs::{self, Kind};

pub const WORKLOAD: Workload = Workload {
    id: "W7",
    name: "1 MiB messages, send → receive → delete, JSON, 8 connections",
    measures: "MB/s; VmHWM at the end against VmHWM once 25% of the volume had passed \
               (growth with volume vs with concurrency)",
    runs: "a fresh localsqs per repeat, MaximumMessageSize=1048576, closed loop for 10 s or \
           2 GiB",
};

/// Body size.
const SIZE: usize = 1 << 20;

/// The variant name of W7 at `conns` connections.
pub fn variant(conns: usize) -> String {
    format!("1 MiB send→receive→delete json c{conns}")
}

/// One repeat, on a server of its own (skipped with `--endpoint`).
pub async fn round(b: &mut Bench, r: usize) {
    let w = WORKLOAD.id;
    if !b.want(w) || !b.owns_servers() || b.fatal {
        return;
    }
    let mut s = match b.spawn_localsqs(&format!("w7-{r}"), None).await {
        Ok(s) => s,
        Err(e) => {
            b.file(w, Kind::Localsqs, vec![e]);
            return;
        }
    };
    let idle = procfs::rss_mib(s.pid);
    let mut cfg = Cfg::new(Proto::Json, b.p.w7_conns, Mode::Pipeline);
    cfg.warmup = b.p.warmup;
    cfg.duration = b.p.w7_duration;
    cfg.max_msgs = b.p.w7_msgs;
    cfg.body_len = SIZE;
    cfg.attrs = vec![("MaximumMessageSize", SIZE.to_string())];
    cfg.timeout = Duration::from_secs(60);
    let v = variant(b.p.w7_conns);
    if let Some(mut m) = b.cell(w, &v, Tgt::of(&s), cfg, r).await {
        let mib = 1048576.0;
        let hwm = m.get("hwm_mib").copied().unwrap_or(f64::NAN);
        let at25 = m.get("hwm_at_25pct_mib").copied().unwrap_or(f64::NAN);
        let c_x_size = b.p.w7_conns as f64 * SIZE as f64 / mib;
        m.insert("idle_rss_mib".into(), idle);
        m.insert("hwm_growth_after_25pct_mib".into(), hwm - at25);
        m.insert("c_x_size_mib".into(), c_x_size);
        m.insert(
            "peak_over_idle_per_c_x_size".into(),
            (hwm - idle) / c_x_size,
        );
        m.insert(
            "volume_mib".into(),
            m.get("msgs_total").copied().unwrap_or(0.0) * SIZE as f64 / mib,
        );
        if let Some(last) = b.book.samples.last_mut() {
            last.metrics = m;
        }
    }
    b.check_alive(&mut s, w);
    s.terminate(Duration::from_secs(30));
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let v = variant(p.w7_conns);
    let label = "W7 1 MiB messages";
    vec![
        Check::new(label, "MB/s", cell(w, &v, T_SELF, "mb_per_s"), Unit::MBps).at_least(400.0),
        Check::new(
            label,
            "peak RSS (VmHWM)",
            cell(w, &v, T_SELF, "hwm_mib"),
            Unit::MiB,
        ),
        Check::new(
            label,
            "VmHWM growth over the last 75% of the volume",
            cell(w, &v, T_SELF, "hwm_growth_after_25pct_mib"),
            Unit::MiB,
        )
        .at_most(p.w7_conns as f64 * SIZE as f64 / 1048576.0)
        .bound_named("c × size")
        .aside("bounded by concurrency, not volume"),
    ]
}
