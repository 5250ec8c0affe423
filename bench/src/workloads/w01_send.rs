//! W1: SendMessage throughput at 64 connections in both protocols, against localsqs, the
//! calibration server and moto; W1c1: the same at one connection, the round-trip floor of this
//! machine and harness.

use std::time::Duration;

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::Mode;
use crate::harness::{Bench, R_CAL, R_MOTO, Servers, T_CAL, T_SELF};
use crate::http::Proto;

pub const W1: Workload = Workload {
    id: "W1",
    name: "SendMessage, 200 B, 64 connections, JSON and Query",
    measures: "msgs/s, p99 and server CPU per message; localsqs / calibration server \
               (this machine's HTTP ceiling) and localsqs / moto",
    runs: "closed loop for 5 s or 200k messages per protocol; calibration server, localsqs \
           and moto (JSON, N = 1,000) in the same repeat",
};

pub const W1C1: Workload = Workload {
    id: "W1c1",
    name: "SendMessage, 200 B, 1 connection, JSON",
    measures: "p50 round trip of localsqs and of the calibration server (recorded under W1)",
    runs: "closed loop for at most 2 s on one connection, calibration server then localsqs",
};

/// The variant name of W1 in protocol `p` at `c` connections.
pub fn variant(p: Proto, c: usize) -> String {
    format!("SendMessage {} c{c}", p.name())
}

/// One repeat: W1 in each protocol, then W1c1.
pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let (me, cal, refs) = (s.me(), s.cal_t(), s.refs());
    let w = W1.id;
    if b.want(W1.id) {
        for proto in b.protocols() {
            let v = variant(proto, b.p.conns);
            let mut cfg = b.cfg(proto, Mode::SendOnly);
            cfg.track = false;
            cfg.max_msgs = b.p.w1_cap;
            let cal_m = match cal {
                Some(t) => b.cell(w, &v, t, cfg.clone(), r).await,
                None => None,
            };
            let self_m = b.cell(w, &v, me, cfg.clone(), r).await;
            b.ratio((w, &v, r), self_m.as_ref(), cal_m.as_ref(), R_CAL);
            if proto == Proto::Json {
                b.versus_refs((w, &v, r), refs, cfg, self_m.as_ref()).await;
            }
        }
    }
    if b.want(W1.id) || b.want(W1C1.id) {
        let v = variant(Proto::Json, 1);
        let mut cfg = b.cfg(Proto::Json, Mode::SendOnly);
        cfg.conns = 1;
        cfg.track = false;
        cfg.duration = b.p.duration.min(Duration::from_secs(2));
        cfg.max_msgs = b.p.w1_cap;
        let cal_m = match cal {
            Some(t) => b.cell(w, &v, t, cfg.clone(), r).await,
            None => None,
        };
        let self_m = b.cell(w, &v, me, cfg, r).await;
        b.ratio((w, &v, r), self_m.as_ref(), cal_m.as_ref(), R_CAL);
    }
    b.check_alive(&mut s.own, w);
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = W1.id;
    let (v1, q1, c1) = (
        variant(Proto::Json, p.conns),
        variant(Proto::Query, p.conns),
        variant(Proto::Json, 1),
    );
    let json = "W1 SendMessage, 64 connections (json)";
    let query = "W1 SendMessage, 64 connections (query)";
    let one = "W1 SendMessage, 1 connection (json)";
    vec![
        Check::new(
            json,
            "localsqs msgs/s",
            cell(w, &v1, T_SELF, "msgs_per_s"),
            Unit::Rate,
        ),
        Check::new(
            json,
            "calibration server req/s",
            cell(w, &v1, T_CAL, "msgs_per_s"),
            Unit::Rate,
        )
        .at_least(30_000.0)
        .context_for("loadgen"),
        Check::new(
            json,
            "localsqs / calibration",
            cell(w, &v1, R_CAL, "ratio"),
            Unit::Ratio,
        )
        .at_least(0.8),
        Check::new(json, "p99", cell(w, &v1, T_SELF, "p99_ms"), Unit::Ms).below(10.0),
        Check::new(
            query,
            "localsqs / calibration",
            cell(w, &q1, R_CAL, "ratio"),
            Unit::Ratio,
        )
        .at_least(0.8),
        Check::new(query, "p99", cell(w, &q1, T_SELF, "p99_ms"), Unit::Ms).below(10.0),
        Check::new(
            one,
            "p50 round trip, localsqs",
            cell(w, &c1, T_SELF, "p50_ms"),
            Unit::Ms,
        ),
        Check::new(
            one,
            "p50 round trip, calibration server",
            cell(w, &c1, T_CAL, "p50_ms"),
            Unit::Ms,
        ),
    ]
}

/// The moto row of the targets table (listed with the other moto rows).
pub fn moto_check(p: &Params) -> Check {
    Check::new(
        "Against moto: W1",
        "localsqs / moto msgs/s",
        cell(W1.id, variant(Proto::Json, p.conns), R_MOTO, "ratio"),
        Unit::Ratio,
    )
    .at_least(200.0)
}
