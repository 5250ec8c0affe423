//! W9: a 10M × 200 B durable backlog (issue #16): the W8 run (`backlog`) at ten times the size,
//! one restart of each kind, and no drain unless the backlog is small enough to verify in
//! reasonable time (≤ 1M messages, as in `--quick` or with `--w9-messages`).

use super::{Workload, backlog, w08_backlog};
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::harness::{Bench, T_SELF};
use crate::procfs::Kind;

pub const WORKLOAD: Workload = Workload {
    id: "W9",
    name: "10M × 200 B backlog, durable",
    measures: "data-dir bytes per message, peak RSS (VmHWM) during load and after restart, \
               exec → first ReceiveMessage returning a message after a clean and a kill -9 \
               restart, load rate",
    runs: "once, after W8, on a server of its own: load with SendMessageBatch at 16 \
           connections (--w9-messages, default 10M; quick 5,000), one clean and one kill -9 \
           restart; drained and verified only up to 1M messages",
};

/// The durable 10M backlog.
pub const VARIANT: &str = "200 B backlog, durable, big";

/// Backlogs up to this size are drained and verified after the restarts.
const DRAIN_UP_TO: u64 = 1_000_000;

pub async fn run(b: &mut Bench) {
    let w = WORKLOAD.id;
    if b.fatal {
        return;
    }
    b.step(&format!("{w} {VARIANT} ({} messages)", b.p.w9_n));
    let bl = backlog::Backlog {
        bin: &b.bin,
        name: "w9",
        dir: b.scratch.join("w9-data"),
        logs: b.logs.clone(),
        n: b.p.w9_n,
        restarts: 1,
        drain: b.p.w9_n <= DRAIN_UP_TO,
        quick: b.args.quick,
    };
    let res = backlog::durable(&bl, b.base).await;
    b.record((w, VARIANT, Kind::Localsqs, 0), w, res);
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = format!(
        "W9 {} × 200 B backlog (durable)",
        w08_backlog::count_label(p.w9_n)
    );
    let row =
        |metric, key, unit| Check::new(label.clone(), metric, cell(w, VARIANT, T_SELF, key), unit);
    vec![
        row("load msgs/s", "load_msgs_per_s", Unit::Rate),
        row("bytes/message on disk", "disk_bytes_per_msg", Unit::Bytes).at_most(300.0),
        row("peak RSS during load", "load_hwm_mib", Unit::MiB)
            .below(1024.0)
            .aside("1 GiB"),
        row("peak RSS after restart", "hwm_mib", Unit::MiB)
            .below(1024.0)
            .aside("1 GiB"),
        row(
            "first receive after clean restart",
            "restart_clean_first_receive_ms",
            Unit::Ms,
        )
        .below(5000.0),
        row(
            "first receive after kill -9",
            "restart_kill9_first_receive_ms",
            Unit::Ms,
        )
        .below(5000.0),
    ]
}
