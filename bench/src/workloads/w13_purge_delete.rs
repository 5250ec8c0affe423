//! W13: PurgeQueue and DeleteQueue of a 200k-message durable queue while other clients send to
//! another queue (issue #16): the other clients' SendMessage p99 during each, against the p99
//! before them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Workload, sender, w08_backlog};
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Cfg, Metrics, Progress, Tgt};
use crate::harness::{Bench, T_SELF};
use crate::http::Proto;
use crate::procfs::Kind;
use crate::sqs;

pub const WORKLOAD: Workload = Workload {
    id: "W13",
    name: "PurgeQueue and DeleteQueue of a 200k-message durable queue under load",
    measures: "p99 of other clients' SendMessage to another queue before, during PurgeQueue \
               and during DeleteQueue (each window: from the call until the next step, at \
               least 1 s); how long each call took",
    runs: "once, on a durable server of its own: two queues loaded with 200k messages each \
           (quick 2,000) through SendMessageBatch; 16 connections send to a third queue while \
           the first is purged and the second deleted; the purged queue must be empty, the \
           deleted one gone, and every acknowledged send to the third queue there",
};

/// The one variant.
pub const VARIANT: &str = "purge and delete of a durable backlog, SendMessage c16 elsewhere";

/// Connections of the other clients.
const CONNS: usize = 16;

pub async fn once(b: &mut Bench) {
    let w = WORKLOAD.id;
    if !b.want(w) || !b.owns_servers() || b.fatal {
        return;
    }
    b.step(&format!("{w} {VARIANT} ({} messages)", b.p.w13_n));
    let dir = b.scratch.join("w13-data");
    let mut s = match b.spawn_localsqs("w13", Some(&dir)).await {
        Ok(s) => s,
        Err(e) => {
            b.file(w, Kind::Localsqs, vec![e]);
            return;
        }
    };
    let res = measure(Tgt::of(&s), b.p.w13_n, b.p.w13_settle, b.base).await;
    b.record((w, VARIANT, Kind::Localsqs, 0), w, res);
    b.check_alive(&mut s, w);
    s.terminate(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Loads a queue with `n` messages through SendMessageBatch; returns its URL.
async fn load(t: Tgt, n: u64, base: Instant) -> Result<String, String> {
    let mut cfg = Cfg::preload(Proto::Json, 16, n, Duration::from_secs(300));
    cfg.track = false;
    let o = driver::run(t, cfg, None, Arc::new(Progress::default()), base).await?;
    match o.problems.first() {
        Some(p) => Err(format!("loading {n} messages: {p}")),
        None => Ok(o.url),
    }
}

/// Times one request that names only a queue (PurgeQueue, DeleteQueue), in ms.
async fn timed(t: Tgt, req: &crate::http::Req) -> Result<f64, String> {
    let t0 = Instant::now();
    driver::one(t.addr, Proto::Json, req).await?;
    Ok(t0.elapsed().as_secs_f64() * 1000.0)
}

async fn measure(
    t: Tgt,
    n: u64,
    settle: Duration,
    base: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let p = Proto::Json;
    let purged = load(t, n, base).await?;
    let deleted = load(t, n, base).await?;
    let other = driver::create_queue(
        t,
        p,
        &driver::queue_name("w13-other", false),
        &[("VisibilityTimeout", driver::VISIBILITY_S.to_string())],
    )
    .await?;
    let l = sender::Load {
        proto: p,
        conns: CONNS,
        body_len: 200,
        urls: Arc::new(vec![other.clone()]),
    };
    let run = sender::start(t, &l, settle * 4 + Duration::from_secs(120)).await?;
    // Warm-up, then the baseline window.
    tokio::time::sleep(settle / 4).await;
    let base_from = run.now();
    tokio::time::sleep(settle).await;
    let purge_from = run.now();
    let purge_ms = timed(t, &sqs::purge_queue(p, &purged)).await;
    tokio::time::sleep(settle).await;
    let delete_from = run.now();
    let delete_ms = timed(t, &sqs::delete_queue(p, &deleted)).await;
    tokio::time::sleep(settle).await;
    let end = run.now();
    let log = run.stop().await;
    let mut m = Metrics::new();
    m.insert("purge_ms".into(), purge_ms?);
    m.insert("delete_ms".into(), delete_ms?);
    m.insert("backlog".into(), n as f64);
    m.extend(log.window(base_from, purge_from, "before_"));
    m.extend(log.window(purge_from, delete_from, "purge_"));
    m.extend(log.window(delete_from, end, "delete_"));
    let mut problems = log.problems.clone();
    problems.extend(verify(t, &purged, &deleted, &other, log.total()).await?);
    Ok((m, problems))
}

/// The purged queue is empty, the deleted one gone, the other holds every acknowledged send.
async fn verify(
    t: Tgt,
    purged: &str,
    deleted: &str,
    other: &str,
    acked: u64,
) -> Result<Vec<String>, String> {
    let p = Proto::Json;
    let mut problems = Vec::new();
    // SQS allows a purge up to 60 s; wait up to 60 s for the queue to read empty.
    let end = Instant::now() + Duration::from_secs(60);
    let mut left = driver::queue_depth(t, p, purged).await?;
    while left != 0 && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = driver::queue_depth(t, p, purged).await?;
    }
    if left != 0 {
        problems.push(format!("{left} messages left 60 s after PurgeQueue"));
    }
    if driver::queue_depth(t, p, deleted).await.is_ok() {
        problems.push("the deleted queue still answers GetQueueAttributes".into());
    }
    let depth = driver::queue_depth(t, p, other).await?;
    if depth != acked {
        problems.push(format!(
            "{acked} sends to the other queue acknowledged but it holds {depth}"
        ));
    }
    Ok(problems)
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = format!(
        "W13 purge/delete of a {} durable queue, c16 sending elsewhere",
        w08_backlog::count_label(p.w13_n)
    );
    let row = |metric, key| {
        Check::new(
            label.clone(),
            metric,
            cell(w, VARIANT, T_SELF, key),
            Unit::Ms,
        )
    };
    vec![
        row("other clients' p99 before", "before_p99_ms"),
        row("other clients' p99 during PurgeQueue", "purge_p99_ms").below(10.0),
        row("other clients' p99 during DeleteQueue", "delete_p99_ms").below(10.0),
        row("PurgeQueue call", "purge_ms"),
        row("DeleteQueue call", "delete_ms"),
    ]
}
