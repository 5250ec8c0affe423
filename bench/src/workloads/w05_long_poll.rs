//! W5: long-poll wake latency (one receiver parked with WaitTimeSeconds=20, one send every
//! 50 ms, open loop), its reference (an idle round trip to localsqs and to the calibration
//! server), and many polls parked on one queue: server CPU while idle, then one message each
//! must wake every poll exactly once.

use std::time::{Duration, Instant};

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Metrics, Tgt, VISIBILITY_S};
use crate::harness::{Bench, Servers, T_CAL, T_SELF};
use crate::http::Proto;
use crate::procfs::{self, Kind};
use crate::sqs::{self, Entry};

pub const WORKLOAD: Workload = Workload {
    id: "W5",
    name: "long-poll wake latency and parked long polls, JSON",
    measures: "send start → receive done p50/p99 of a parked receiver; server CPU while \
               1,000 polls are parked idle; each parked poll woken exactly once",
    runs: "1 receiver parked (WaitTimeSeconds=20), one send every 50 ms (open loop), 200 \
           samples; an idle round trip with the same spacing as the floor; then 1,000 polls \
           parked on one queue, 10 s idle, then 1,000 messages; moto: 40 samples, once",
};

/// The wake latency of one parked receiver.
pub const VARIANT: &str = "wake latency, 1 parked receiver, json";
/// The reference: an idle round trip with the same spacing.
pub const VARIANT_IDLE: &str = "idle round trip, 1 SendMessage per 50 ms, json";
/// Many parked polls.
pub const VARIANT_PARKED: &str = "parked long polls, idle";

/// Spacing of the sends (open loop).
const INTERVAL: Duration = Duration::from_millis(50);

pub async fn round(b: &mut Bench, s: &mut Servers, r: usize) {
    let w = WORKLOAD.id;
    if b.want(w) && !b.fatal {
        let (me, cal) = (s.me(), s.cal_t());
        b.step(&format!("{w} {VARIANT} (repeat {})", r + 1));
        let res = long_poll_latency(me, Proto::Json, b.p.w5_samples, INTERVAL, b.base).await;
        b.record((w, VARIANT, Kind::Localsqs, r), "W5 wake latency", res);
        // The reference: an idle round trip (same spacing) to localsqs and to the calibration
        // server.
        let samples = (b.p.w5_samples / 2).max(10);
        for t in std::iter::once(me).chain(cal) {
            let res = idle_round_trip(t, Proto::Json, samples, INTERVAL).await;
            b.record((w, VARIANT_IDLE, t.kind, r), "W5 idle round trip", res);
        }
        let limit = procfs::open_files_limit();
        let parked =
            b.p.w5_parked
                .min(usize::try_from(limit.saturating_sub(200)).unwrap_or(0));
        if parked < b.p.w5_parked {
            b.notes.push(format!(
                "W5: open-file limit {limit} allows only {parked} parked polls"
            ));
        }
        b.step(&format!("{w} {parked} {VARIANT_PARKED} (repeat {})", r + 1));
        let res = parked_polls(me, Proto::Json, parked, b.p.w5_idle, b.base).await;
        b.record(
            (w, VARIANT_PARKED, Kind::Localsqs, r),
            "W5 parked polls",
            res,
        );
    }
    b.check_alive(&mut s.own, w);
}

/// moto's wake latency, once (when both W5 and moto run).
pub async fn once(b: &mut Bench, s: &mut Servers) {
    let w = WORKLOAD.id;
    let Some(m) = s.moto_t() else {
        return;
    };
    if !b.want(super::moto::WORKLOAD.id) || !b.want(w) {
        return;
    }
    b.step(&format!("{w} {VARIANT} → moto"));
    let samples = if b.args.quick { 10 } else { 40 };
    let res = long_poll_latency(m, Proto::Json, samples, INTERVAL, b.base).await;
    b.record((w, VARIANT, Kind::Moto, 0), w, res);
}

pub fn checks(p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let label = "W5 long-poll wake";
    vec![
        Check::new(
            label,
            "p50 idle round trip, calibration server",
            cell(w, VARIANT_IDLE, T_CAL, "p50_ms"),
            Unit::Ms,
        )
        .aside("floor"),
        Check::new(
            label,
            "p50 idle round trip, localsqs SendMessage",
            cell(w, VARIANT_IDLE, T_SELF, "p50_ms"),
            Unit::Ms,
        ),
        Check::new(label, "p50", cell(w, VARIANT, T_SELF, "p50_ms"), Unit::Ms).below(0.5),
        Check::new(label, "p99", cell(w, VARIANT, T_SELF, "p99_ms"), Unit::Ms).below(2.0),
        Check::new(
            label,
            "CPU of the parked polls",
            cell(w, VARIANT_PARKED, T_SELF, "idle_cpu_pct_core"),
            Unit::PctCore,
        )
        .below(1.0)
        .aside(format!("{} parked", p.w5_parked)),
    ]
}

fn us_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// One receiver parked with WaitTimeSeconds=20; a sender sends one message every
/// `interval` (open loop); latency = send start → receive done.
async fn long_poll_latency(
    t: Tgt,
    p: Proto,
    samples: usize,
    interval: Duration,
    base: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let url = driver::create_queue(
        t,
        p,
        &driver::queue_name("w5", false),
        &[("VisibilityTimeout", VISIBILITY_S.to_string())],
    )
    .await?;
    let mut rx = t.connect(p).await?;
    let mut tx = t.connect(p).await?;
    let deadline = Instant::now()
        + interval * u32::try_from(samples).unwrap_or(1000)
        + Duration::from_secs(30);
    let rurl = url.clone();
    let receiver = tokio::spawn(async move {
        let mut h = driver::hist();
        let mut tags = Vec::new();
        let mut problems = Vec::new();
        while tags.len() < samples && Instant::now() < deadline {
            let r = match rx
                .call(
                    &sqs::receive(p, &rurl, 1, Some(20)),
                    Duration::from_secs(25),
                )
                .await
            {
                Ok(r) => r,
                Err(e) => {
                    problems.push(format!("long poll: {e}"));
                    break;
                }
            };
            let done = us_since(base);
            let msgs = match sqs::parse_receive(p, &r) {
                Ok(m) => m,
                Err(e) => {
                    problems.push(format!("long poll: {e}"));
                    break;
                }
            };
            for m in &msgs {
                if let Some((tag, ts)) = sqs::parse_body(&m.body) {
                    h.saturating_record(done.saturating_sub(ts).max(1));
                    tags.push(tag);
                }
                match rx
                    .call(&sqs::delete(p, &rurl, &m.handle), Duration::from_secs(25))
                    .await
                {
                    Ok(r) if r.status == 200 => {}
                    Ok(r) => problems.push(format!("DeleteMessage: {}", sqs::describe(&r))),
                    Err(e) => problems.push(format!("DeleteMessage: {e}")),
                }
            }
        }
        (h, tags, problems)
    });
    // Let the receiver park before the first send.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t0 = Instant::now();
    let mut problems = Vec::new();
    let mut sent = Vec::new();
    for i in 0..samples {
        tokio::time::sleep_until((t0 + interval * u32::try_from(i).unwrap_or(0)).into()).await;
        let tag = i as u64;
        let b = sqs::body(tag, us_since(base), 200);
        let req = sqs::send(
            p,
            &url,
            &Entry {
                group: None,
                dedup: None,
                body: &b,
            },
        );
        match tx.call(&req, Duration::from_secs(25)).await {
            Ok(r) => match sqs::check_send(p, &r) {
                Ok(()) => sent.push(tag),
                Err(e) => {
                    problems.push(format!("SendMessage: {e}"));
                    break;
                }
            },
            Err(e) => {
                problems.push(format!("SendMessage: {e}"));
                break;
            }
        }
    }
    let (h, tags, rproblems) = receiver
        .await
        .map_err(|e| format!("receiver panicked: {e}"))?;
    problems.extend(rproblems);
    if t.kind == Kind::Localsqs && problems.is_empty() {
        problems.extend(driver::verify(&sent, &tags, true));
    }
    let _ = driver::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    let mut m = Metrics::new();
    driver::add_percentiles(&mut m, "", &h);
    m.insert("samples".into(), h.len() as f64);
    Ok((m, problems))
}

/// The W5 reference: one SendMessage every `interval` on an otherwise idle connection, so that
/// threads and vCPUs are parked between requests as they are before a long-poll wake.
async fn idle_round_trip(
    t: Tgt,
    p: Proto,
    samples: usize,
    interval: Duration,
) -> Result<(Metrics, Vec<String>), String> {
    let url = if t.kind == Kind::Calibration {
        format!("http://{}/000000000000/calibration", t.addr)
    } else {
        driver::create_queue(t, p, &driver::queue_name("w5idle", false), &[]).await?
    };
    let mut c = t.connect(p).await?;
    let b = sqs::body(0, 0, 200);
    let req = sqs::send(
        p,
        &url,
        &Entry {
            group: None,
            dedup: None,
            body: &b,
        },
    );
    let mut h = driver::hist();
    let mut problems = Vec::new();
    let t0 = Instant::now();
    for i in 0..samples {
        tokio::time::sleep_until((t0 + interval * u32::try_from(i).unwrap_or(0)).into()).await;
        let s = Instant::now();
        match c.call(&req, Duration::from_secs(10)).await {
            Ok(r) => {
                if let Err(e) = sqs::check_send(p, &r) {
                    problems.push(format!("SendMessage: {e}"));
                    break;
                }
                let us = u64::try_from(s.elapsed().as_micros()).unwrap_or(u64::MAX);
                h.saturating_record(us.max(1));
            }
            Err(e) => {
                problems.push(format!("SendMessage: {e}"));
                break;
            }
        }
    }
    if t.kind != Kind::Calibration {
        let _ = driver::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    }
    let mut m = Metrics::new();
    driver::add_percentiles(&mut m, "", &h);
    m.insert("samples".into(), h.len() as f64);
    Ok((m, problems))
}

/// `receivers` long polls parked (WaitTimeSeconds=20) on one queue; server CPU over `idle`;
/// then one message each wakes them all, and each must get exactly one.
async fn parked_polls(
    t: Tgt,
    p: Proto,
    receivers: usize,
    idle: Duration,
    base: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let url = driver::create_queue(
        t,
        p,
        &driver::queue_name("w5park", false),
        &[("VisibilityTimeout", VISIBILITY_S.to_string())],
    )
    .await?;
    let rss0 = procfs::rss_mib(t.pid);
    let mut conns = Vec::with_capacity(receivers);
    for _ in 0..receivers {
        conns.push(t.connect(p).await?);
    }
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut c| {
            let url = url.clone();
            tokio::spawn(async move {
                let r = c
                    .call(&sqs::receive(p, &url, 1, Some(20)), Duration::from_secs(25))
                    .await?;
                let done = Instant::now();
                sqs::parse_receive(p, &r).map(|m| (m, done))
            })
        })
        .collect();
    // Let every poll reach the server and park.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let cpu0 = procfs::cpu_seconds(t.pid).unwrap_or(0.0);
    let w0 = Instant::now();
    tokio::time::sleep(idle).await;
    let cpu1 = procfs::cpu_seconds(t.pid).unwrap_or(0.0);
    let idle_s = w0.elapsed().as_secs_f64();
    let rss = procfs::rss_mib(t.pid);
    // Wake them: one message per receiver, in batches of 10.
    let mut sender = t.connect(p).await?;
    let mut problems = Vec::new();
    let mut sent = Vec::new();
    let wake0 = Instant::now();
    let mut tag = 0u64;
    while (tag as usize) < receivers {
        let n = (receivers - tag as usize).min(10);
        let bodies: Vec<String> = (0..n as u64)
            .map(|i| sqs::body(tag + i, us_since(base), 200))
            .collect();
        let entries: Vec<Entry<'_>> = bodies
            .iter()
            .map(|b| Entry {
                group: None,
                dedup: None,
                body: b,
            })
            .collect();
        let r = sender
            .call(&sqs::send_batch(p, &url, &entries), Duration::from_secs(25))
            .await?;
        if let Err(e) = sqs::check_batch(p, &r, n) {
            problems.push(format!("SendMessageBatch: {e}"));
            break;
        }
        sent.extend(tag..tag + n as u64);
        tag += n as u64;
    }
    let mut received = Vec::new();
    let mut last = wake0;
    let mut empty = 0usize;
    for task in tasks {
        match task.await {
            Ok(Ok((msgs, done))) => {
                if msgs.is_empty() {
                    empty += 1;
                }
                last = last.max(done);
                received.extend(
                    msgs.iter()
                        .filter_map(|m| sqs::parse_body(&m.body).map(|x| x.0)),
                );
            }
            Ok(Err(e)) => problems.push(format!("parked ReceiveMessage: {e}")),
            Err(e) => problems.push(format!("parked receiver panicked: {e}")),
        }
    }
    let mut left = 0;
    if t.kind == Kind::Localsqs {
        left = driver::queue_depth(t, p, &url).await.unwrap_or(0);
        if empty > 0 {
            problems.push(format!(
                "{empty} parked receivers answered empty while {left} messages were waiting"
            ));
        }
        let mut r = received.clone();
        r.sort_unstable();
        let before = r.len();
        r.dedup();
        if r.len() != before {
            problems.push(format!(
                "{} duplicate deliveries to parked receivers",
                before - r.len()
            ));
        }
    }
    let _ = driver::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    let mut m = Metrics::new();
    m.insert("parked".into(), receivers as f64);
    m.insert("idle_cpu_pct_core".into(), (cpu1 - cpu0) / idle_s * 100.0);
    m.insert("idle_window_s".into(), idle_s);
    m.insert("rss_parked_mib".into(), rss);
    m.insert("rss_growth_parked_mib".into(), rss - rss0);
    m.insert("wake_all_ms".into(), (last - wake0).as_secs_f64() * 1000.0);
    m.insert("woken_with_message".into(), received.len() as f64);
    m.insert("left_in_queue".into(), left as f64);
    Ok((m, problems))
}
