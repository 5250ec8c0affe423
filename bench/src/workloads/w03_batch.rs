//! W3: batches of 10: SendMessageBatch → ReceiveMessage(Max=10) → DeleteMessageBatch at 64
//! connections (against moto too), and SendMessageBatch alone.

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::Mode;
use crate::harness::{Bench, R_MOTO, Servers, T_SELF};
use crate::http::Proto;

pub const WORKLOAD: Workload = Workload {
    id: "W3",
    name: "batch of 10, JSON, 64 connections",
    measures: "end-to-end msgs/s of the batch pipeline and msgs/s of SendMessageBatch alone; \
               localsqs / moto",
    runs: "closed loop for 5 s: the batch pipeline (drained and verified afterwards), then \
           SendMessageBatch alone (capped at 500k messages)",
};

/// The batch pipeline.
pub const VARIANT: &str = "batch 10 send→receive→delete json c64";
/// SendMessageBatch alone.
pub const VARIANT_SEND: &str = "SendMessageBatch(10) only json c64";

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let (me, refs) = (s.me(), s.refs());
    let w = WORKLOAD.id;
    if b.want(w) {
        let mut cfg = b.cfg(Proto::Json, Mode::Pipeline);
        cfg.batch = 10;
        let self_m = b.cell(w, VARIANT, me, cfg.clone(), r).await;
        b.versus_refs((w, VARIANT, r), refs, cfg, self_m.as_ref())
            .await;
        let mut cfg = b.cfg(Proto::Json, Mode::SendOnly);
        cfg.batch = 10;
        cfg.track = false;
        cfg.max_msgs = b.p.w3_send_cap;
        b.cell(w, VARIANT_SEND, me, cfg, r).await;
    }
    b.check_alive(&mut s.own, w);
}

pub fn checks(_: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = "W3 batch of 10 (json, c64)";
    vec![
        Check::new(
            label,
            "end-to-end msgs/s",
            cell(w, VARIANT, T_SELF, "msgs_per_s"),
            Unit::Rate,
        )
        .at_least(50_000.0),
        Check::new(
            label,
            "SendMessageBatch alone msgs/s",
            cell(w, VARIANT_SEND, T_SELF, "msgs_per_s"),
            Unit::Rate,
        )
        .at_least(100_000.0),
    ]
}

/// The moto row of the targets table (listed with the other moto rows).
pub fn moto_check(_: &Params) -> Check {
    Check::new(
        "Against moto: W3",
        "localsqs / moto msgs/s",
        cell(WORKLOAD.id, VARIANT, R_MOTO, "ratio"),
        Unit::Ratio,
    )
    .at_least(200.0)
}
