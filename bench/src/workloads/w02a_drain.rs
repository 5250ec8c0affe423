//! W2a: draining a preloaded backlog with ReceiveMessage(Max=1) + DeleteMessage at 64
//! connections; every preloaded message must come back exactly once.

use std::sync::Arc;
use std::time::Duration;

use super::Workload;
use crate::driver::{self, Cfg, Mode, Progress};
use crate::harness::{Bench, Servers};
use crate::http::Proto;
use crate::procfs::Kind;

pub const WORKLOAD: Workload = Workload {
    id: "W2a",
    name: "drain a preloaded backlog, Receive(Max=1) + Delete, 64 connections",
    measures: "drained msgs/s, p99; no message lost, duplicated or unknown",
    runs: "once: 100k messages preloaded with SendMessageBatch(10) at 8 connections, then \
           drained until the queue answers empty",
};

/// The variant name of W2a.
pub const VARIANT: &str = "drain backlog, Receive(1)+Delete json c64";

pub async fn once(b: &mut Bench, s: &mut Servers) {
    let w = WORKLOAD.id;
    if !b.want(w) || b.fatal {
        return;
    }
    b.step(&format!("{w} {VARIANT} ({} messages)", b.p.w2a_backlog));
    let me = s.me();
    let load = Cfg::preload(Proto::Json, 8, b.p.w2a_backlog, Duration::from_secs(60));
    let (conns, base) = (b.p.conns, b.base);
    let res = async {
        let l = driver::run(me, load, None, Arc::new(Progress::default()), base).await?;
        let mut d = Cfg::new(Proto::Json, conns, Mode::Drain);
        d.warmup = Duration::ZERO;
        d.duration = Duration::from_secs(60);
        d.drain_after = false;
        let o = driver::run(
            me,
            d,
            Some(l.url.clone()),
            Arc::new(Progress::default()),
            base,
        )
        .await?;
        let mut probs = l.problems;
        probs.extend(o.problems);
        probs.extend(driver::verify(&l.sent, &o.received, true));
        Ok::<_, String>((o.metrics, probs))
    }
    .await;
    b.record((w, VARIANT, Kind::Localsqs, 0), w, res);
    b.check_alive(&mut s.own, w);
}
