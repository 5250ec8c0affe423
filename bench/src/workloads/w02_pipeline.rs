//! W2: the send → receive → delete pipeline at 64 connections in both protocols, every message
//! drained and verified afterwards; against moto too (JSON).

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::Mode;
use crate::harness::{Bench, R_MOTO, Servers, T_SELF};
use crate::http::Proto;

pub const WORKLOAD: Workload = Workload {
    id: "W2",
    name: "send → receive → delete pipeline, 64 connections, JSON and Query",
    measures: "deleted msgs/s, end-to-end age (from a send timestamp in the body), p99; \
               localsqs / moto",
    runs: "each connection loops SendMessage, ReceiveMessage(Max=1), DeleteMessage for 5 s \
           (backlog ≈ c); the queue is then drained and every acknowledged send accounted for",
};

/// The variant name of W2 in protocol `p` at `c` connections.
pub fn variant(p: Proto, c: usize) -> String {
    format!("send→receive→delete {} c{c}", p.name())
}

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let (me, refs) = (s.me(), s.refs());
    let w = WORKLOAD.id;
    if b.want(w) {
        for proto in b.protocols() {
            let v = variant(proto, b.p.conns);
            let cfg = b.cfg(proto, Mode::Pipeline);
            let self_m = b.cell(w, &v, me, cfg.clone(), r).await;
            if proto == Proto::Json {
                b.versus_refs((w, &v, r), refs, cfg, self_m.as_ref()).await;
            }
        }
    }
    b.check_alive(&mut s.own, w);
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    [
        ("W2 send→receive→delete (json, c64)", Proto::Json),
        ("W2 send→receive→delete (query, c64)", Proto::Query),
    ]
    .into_iter()
    .map(|(label, proto)| {
        Check::new(
            label,
            "msgs/s",
            cell(w, variant(proto, p.conns), T_SELF, "msgs_per_s"),
            Unit::Rate,
        )
        .at_least(30_000.0)
    })
    .collect()
}

/// The moto row of the targets table (listed with the other moto rows).
pub fn moto_check(p: &Params) -> Check {
    Check::new(
        "Against moto: W2",
        "localsqs / moto msgs/s",
        cell(WORKLOAD.id, variant(Proto::Json, p.conns), R_MOTO, "ratio"),
        Unit::Ratio,
    )
    .at_least(200.0)
}
