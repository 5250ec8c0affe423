//! W12: a FIFO queue with one message group of 100k messages whose head is in flight (issue
//! #16). ReceiveMessage on it must answer nothing, fast (measured alone, and as context while
//! the pipeline below runs); and a standard-queue pipeline on the same server must not notice
//! the blocked queue: its p99 is measured without the queue, then with it present and polled.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Workload;
use crate::check::{Check, Goal, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Fifo, Metrics, Mode, Progress, Tgt};
use crate::harness::{Bench, Servers, T_SELF};
use crate::http::{Conn, Proto};
use crate::procfs::Kind;
use crate::sqs;

pub const WORKLOAD: Workload = Workload {
    id: "W12",
    name: "FIFO group of 100k messages with its head in flight, next to a standard load",
    measures: "ReceiveMessage p99 on the blocked FIFO queue; p99 of a standard-queue \
               send → receive → delete pipeline without the blocked queue and with it present \
               and polled",
    runs: "every repeat on the shared server: the pipeline at 16 connections alone; then a FIFO \
           queue loaded with 100k messages in one group (quick 2,000), its head received and \
           kept in flight; one client polls it every 2 ms, alone, then while the pipeline runs \
           again; the group must stay blocked until its head is deleted, then deliver #1",
};

/// The standard pipeline before the FIFO queue exists.
pub const VARIANT_ALONE: &str = "standard pipeline c16, no blocked FIFO queue";
/// The same pipeline with the blocked FIFO queue present and polled.
pub const VARIANT_WITH: &str = "standard pipeline c16, blocked FIFO queue present";
/// ReceiveMessage on the blocked FIFO queue, with nothing else running.
pub const VARIANT_FIFO: &str = "ReceiveMessage on the blocked FIFO queue";
/// ReceiveMessage on the blocked FIFO queue while the standard pipeline runs.
pub const VARIANT_FIFO_LOADED: &str = "ReceiveMessage on the blocked FIFO queue, under load";
/// Target name of p99 with ÷ (1.5 × p99 without + 0.5 ms).
pub const R_ALLOWED: &str = "with/allowed";

/// Connections of the standard pipeline.
const CONNS: usize = 16;
/// Spacing of the polls of the blocked queue (open loop, so they cost little CPU).
const POLL_EVERY: Duration = Duration::from_millis(2);

/// The p99 the standard load may reach with the blocked queue present (issue #16).
pub fn allowed_p99_ms(without: f64) -> f64 {
    1.5 * without + 0.5
}

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let w = WORKLOAD.id;
    if !b.want(w) || b.fatal {
        return;
    }
    let me = s.me();
    let mut cfg = b.cfg(Proto::Json, Mode::Pipeline);
    cfg.conns = CONNS;
    let without = b.cell(w, VARIANT_ALONE, me, cfg.clone(), r).await;
    b.step(&format!("{w} blocked FIFO queue ({} messages)", b.p.w12_n));
    let blocked = match block(me, b.p.w12_n, b.base).await {
        Ok(q) => q,
        Err(e) => {
            b.file(w, Kind::Localsqs, vec![e]);
            return;
        }
    };
    b.step(&format!("{w} {VARIANT_FIFO} (repeat {})", r + 1));
    let now = Instant::now();
    let alone = poll(
        me,
        &blocked.url,
        now + cfg.warmup,
        now + cfg.warmup + cfg.duration,
    )
    .await;
    b.record((w, VARIANT_FIFO, Kind::Localsqs, r), w, alone);
    b.step(&format!("{w} {VARIANT_WITH} (repeat {})", r + 1));
    let now = Instant::now();
    let (with, polls) = tokio::join!(
        driver::run(me, cfg.clone(), None, Arc::new(Progress::default()), b.base),
        poll(
            me,
            &blocked.url,
            now + cfg.warmup,
            now + cfg.warmup + cfg.duration
        ),
    );
    let with = b.outcome((w, VARIANT_WITH, Kind::Localsqs, r), with);
    let res = match polls {
        Ok((m, mut probs)) => unblock(me, &blocked).await.map(|more| {
            probs.extend(more);
            (m, probs)
        }),
        Err(e) => Err(e),
    };
    b.record((w, VARIANT_FIFO_LOADED, Kind::Localsqs, r), w, res);
    let p99 = |m: &Option<Metrics>| m.as_ref().and_then(|m| m.get("p99_ms").copied());
    if let (Some(a), Some(x)) = (p99(&without), p99(&with)) {
        let mut m = Metrics::new();
        m.insert("ratio".into(), x / allowed_p99_ms(a));
        m.insert("allowed_p99_ms".into(), allowed_p99_ms(a));
        b.book.add(w, VARIANT_WITH, R_ALLOWED, r, m);
    }
    let _ = driver::one(
        me.addr,
        Proto::Json,
        &sqs::delete_queue(Proto::Json, &blocked.url),
    )
    .await;
    b.check_alive(&mut s.own, w);
}

/// The blocked FIFO queue: its URL and the receipt handle of its head.
struct Blocked {
    url: String,
    head: String,
}

/// Creates a FIFO queue, loads `n` messages into one group and receives its head.
async fn block(t: Tgt, n: u64, base: Instant) -> Result<Blocked, String> {
    let mut cfg = driver::Cfg::preload(Proto::Json, 1, n, Duration::from_secs(120));
    cfg.fifo = Some(Fifo {
        groups: 1,
        content_dedup: false,
    });
    let load = driver::run(t, cfg, None, Arc::new(Progress::default()), base).await?;
    if let Some(p) = load.problems.first() {
        return Err(format!("loading the FIFO queue: {p}"));
    }
    let (tag, head) = receive_one(t, &load.url)
        .await?
        .ok_or("the loaded FIFO queue returned no message")?;
    if tag != 0 {
        return Err(format!("FIFO head: received #{tag}, expected #0"));
    }
    Ok(Blocked {
        url: load.url,
        head,
    })
}

/// ReceiveMessage(Max=1) on a fresh connection: the message's sequence number and handle.
async fn receive_one(t: Tgt, url: &str) -> Result<Option<(u64, String)>, String> {
    let r = driver::one(
        t.addr,
        Proto::Json,
        &sqs::receive(Proto::Json, url, 1, None),
    )
    .await?;
    let msgs = sqs::parse_receive(Proto::Json, &r)?;
    Ok(msgs.first().map(|m| {
        let tag = sqs::parse_body(&m.body).map_or(u64::MAX, |(tag, _)| tag);
        (tag & 0xffff_ffff, m.handle.clone())
    }))
}

/// Polls the blocked queue every [`POLL_EVERY`] until `until`, recording latencies from
/// `from` on. A message it returns is a violation (returned with the metrics, so that the
/// targets table shows it) and ends the polling.
async fn poll(
    t: Tgt,
    url: &str,
    from: Instant,
    until: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let p = Proto::Json;
    let mut c = Conn::connect(t.addr, p).await?;
    let req = sqs::receive(p, url, 1, None);
    let mut h = driver::hist();
    let mut problems = Vec::new();
    let mut next = Instant::now();
    while Instant::now() < until {
        tokio::time::sleep_until(next.into()).await;
        next += POLL_EVERY;
        let t0 = Instant::now();
        let r = c.call(&req, Duration::from_secs(10)).await?;
        let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
        if let Some(m) = sqs::parse_receive(p, &r)?.first() {
            problems.push(format!(
                "the FIFO group delivered {:?}… while its head was in flight",
                m.body.chars().take(16).collect::<String>()
            ));
            break;
        }
        if t0 >= from {
            h.saturating_record(us.max(1));
        }
    }
    let mut m = Metrics::new();
    m.insert("polls".into(), h.len() as f64);
    driver::add_percentiles(&mut m, "", &h);
    Ok((m, problems))
}

/// Deletes the head; the group must then deliver #1. Returns the problems found.
async fn unblock(t: Tgt, q: &Blocked) -> Result<Vec<String>, String> {
    driver::one(
        t.addr,
        Proto::Json,
        &sqs::delete(Proto::Json, &q.url, &q.head),
    )
    .await?;
    Ok(match receive_one(t, &q.url).await? {
        Some((1, _)) => Vec::new(),
        Some((k, _)) => vec![format!(
            "after deleting the head, received #{k}, expected #1"
        )],
        None => vec!["after deleting the head, the group delivered nothing".into()],
    })
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = format!(
        "W12 FIFO group of {} with its head in flight",
        super::w08_backlog::count_label(p.w12_n)
    );
    let row = |metric, v, key| Check::new(label.clone(), metric, cell(w, v, T_SELF, key), Unit::Ms);
    vec![
        row(
            "ReceiveMessage p99 on the blocked queue",
            VARIANT_FIFO,
            "p99_ms",
        )
        .below(1.0),
        row(
            "ReceiveMessage p99 on the blocked queue, pipeline running",
            VARIANT_FIFO_LOADED,
            "p99_ms",
        ),
        row(
            "standard pipeline p99, no blocked queue",
            VARIANT_ALONE,
            "p99_ms",
        ),
        row(
            "standard pipeline p99, blocked queue present",
            VARIANT_WITH,
            "p99_ms",
        ),
        Check::new(
            label.clone(),
            "p99 present ÷ (1.5 × p99 absent + 0.5 ms)",
            cell(w, VARIANT_WITH, R_ALLOWED, "ratio"),
            Unit::Ratio,
        )
        .at_most(1.0)
        .aside("other queues unchanged, within noise"),
        row(
            "blocked group, then #1 once the head is deleted",
            VARIANT_FIFO,
            "polls",
        )
        .goal(Goal::Verified {
            claim: "nothing delivered while blocked",
            clean: "blocked, then in order",
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowance_is_one_and_a_half_times_plus_half_a_millisecond() {
        assert!((allowed_p99_ms(2.0) - 3.5).abs() < 1e-9);
        assert!((allowed_p99_ms(0.0) - 0.5).abs() < 1e-9);
    }
}
