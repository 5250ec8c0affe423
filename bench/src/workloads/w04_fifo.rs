//! W4: FIFO queues with many message groups, the pipeline at 64 connections, per-group order
//! verified by the bench as messages arrive; compared with W2 of the same repeat.

use super::{Workload, w02_pipeline};
use crate::check::{Check, Goal, Unit, cell};
use crate::cli::Params;
use crate::driver::{Fifo, Mode};
use crate::harness::{Bench, Servers, T_SELF};
use crate::http::Proto;

pub const WORKLOAD: Workload = Workload {
    id: "W4",
    name: "FIFO, 10k message groups, send → receive → delete, JSON, 64 connections",
    measures: "msgs/s, W4 / W2 of the same repeat, per-group order (sequence numbers in the \
               bodies); once each: 100 groups and content-based deduplication",
    runs: "each group has one producer connection; closed loop for 5 s, then drained and \
           verified",
};

/// Target name of the ratio W4 / W2 (msgs/s, same repeat).
pub const R_W2: &str = "W4/W2";

/// The variant name of W4 with `groups` groups (and content-based deduplication).
pub fn variant(groups: u32, content: bool) -> String {
    format!(
        "FIFO {groups} groups{} send→receive→delete json c64",
        if content { ", content dedup" } else { "" }
    )
}

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let w = WORKLOAD.id;
    if b.want(w) {
        let mut cfg = b.cfg(Proto::Json, Mode::Pipeline);
        cfg.fifo = Some(Fifo {
            groups: b.p.w4_groups,
            content_dedup: false,
        });
        let v = variant(b.p.w4_groups, false);
        let m = b.cell(w, &v, s.me(), cfg, r).await;
        let w2 = w02_pipeline::variant(Proto::Json, b.p.conns);
        let w2_m = b.book.metrics(w02_pipeline::WORKLOAD.id, &w2, T_SELF, r);
        b.ratio((w, &v, r), m.as_ref(), w2_m.as_ref(), R_W2);
    }
    b.check_alive(&mut s.own, w);
}

/// The informational variants (full mode only): 100 groups, and content-based deduplication.
pub async fn once(b: &mut Bench, s: &mut Servers) {
    let w = WORKLOAD.id;
    if !b.want(w) || b.args.quick {
        return;
    }
    for (groups, content) in [(100, false), (b.p.w4_groups, true)] {
        let mut cfg = b.cfg(Proto::Json, Mode::Pipeline);
        cfg.fifo = Some(Fifo {
            groups,
            content_dedup: content,
        });
        b.cell(w, &variant(groups, content), s.me(), cfg, 0).await;
    }
    b.check_alive(&mut s.own, w);
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let v = variant(p.w4_groups, false);
    let label = "W4 FIFO, 10k groups (json, c64)";
    vec![
        Check::new(
            label,
            "msgs/s",
            cell(w, &v, T_SELF, "msgs_per_s"),
            Unit::Rate,
        ),
        Check::new(label, "W4 / W2", cell(w, &v, R_W2, "ratio"), Unit::Ratio).at_least(0.5),
        Check::new(
            label,
            "per-group order verified by the bench",
            cell(w, &v, T_SELF, "msgs_total"),
            Unit::Rate,
        )
        .goal(Goal::Verified {
            claim: "in order",
            clean: "in order, none lost or duplicated",
        }),
    ]
}
