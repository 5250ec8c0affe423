//! One driver run: creates the queue, starts the workers, samples RSS, merges their
//! histograms and counters into metrics, and afterwards drains the queue and checks that every
//! acknowledged message came back exactly once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::worker::{Shared, worker};
use super::{
    Cfg, Metrics, Mode, Outcome, Progress, Tgt, VISIBILITY_S, add_percentiles, create_queue, hist,
    one, queue_depth, queue_name, verify,
};
use crate::http::Proto;
use crate::procfs::{self, Kind};
use crate::sqs::{self, Entry};

/// Runs one workload against `t`. With `url = None` a queue is created (and deleted after).
pub async fn run(
    t: Tgt,
    cfg: Cfg,
    url: Option<String>,
    progress: Arc<Progress>,
    base: Instant,
) -> Result<Outcome, String> {
    let p = cfg.proto;
    let url = match (url, t.kind) {
        (Some(u), _) => u,
        (None, Kind::Calibration) => format!("http://{}/000000000000/calibration", t.addr),
        (None, _) => {
            let mut attrs: Vec<(&'static str, String)> =
                vec![("VisibilityTimeout", VISIBILITY_S.to_string())];
            if let Some(f) = cfg.fifo {
                attrs.push(("FifoQueue", "true".into()));
                if f.content_dedup {
                    attrs.push(("ContentBasedDeduplication", "true".into()));
                }
            }
            attrs.extend(cfg.attrs.iter().cloned());
            create_queue(t, p, &queue_name("q", cfg.fifo.is_some()), &attrs).await?
        }
    };
    let fixed = (!cfg.track && cfg.mode == Mode::SendOnly).then(|| {
        let b = sqs::body(0, 0, cfg.body_len);
        let e = Entry {
            group: None,
            dedup: None,
            body: &b,
        };
        if cfg.batch == 1 {
            sqs::send(p, &url, &e)
        } else {
            let es: Vec<Entry<'_>> = (0..cfg.batch)
                .map(|_| Entry {
                    group: None,
                    dedup: None,
                    body: &b,
                })
                .collect();
            sqs::send_batch(p, &url, &es)
        }
    });
    let mut conns = Vec::with_capacity(cfg.conns);
    for _ in 0..cfg.conns {
        conns.push(t.connect(p).await?);
    }
    let groups = cfg.fifo.map_or(0, |f| f.groups as usize);
    let cpu0 = procfs::cpu_seconds(t.pid).unwrap_or(0.0);
    let threads0 = procfs::thread_cpu(t.pid);
    let self0 = procfs::self_cpu_seconds();
    let wb0 = procfs::write_bytes(t.pid);
    let start = Instant::now();
    let sh = Arc::new(Shared {
        url: url.clone(),
        warm_end: start + cfg.warmup,
        deadline: start + cfg.warmup + cfg.duration,
        cfg: cfg.clone(),
        base,
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        fifo_next: (0..groups).map(|_| AtomicU32::new(0)).collect(),
        fixed,
        problems: Mutex::new(Vec::new()),
        progress,
        empties: AtomicU32::new(0),
    });
    // RSS sampler (every 250 ms): peak VmRSS and (acked, VmHWM) pairs.
    let sampler_stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&sampler_stop);
        let sh = Arc::clone(&sh);
        let pid = t.pid;
        tokio::spawn(async move {
            let mut series = Vec::new();
            let mut guard = 0u32;
            while !stop.load(Ordering::Relaxed) && guard < 100_000 {
                series.push((
                    sh.progress.acked.load(Ordering::Relaxed),
                    procfs::rss_mib(pid),
                    procfs::hwm_mib(pid),
                ));
                tokio::time::sleep(Duration::from_millis(250)).await;
                guard += 1;
            }
            series
        })
    };
    let handles: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(w, c)| tokio::spawn(worker(w, c, Arc::clone(&sh))))
        .collect();
    let mut outs = Vec::with_capacity(handles.len());
    for h in handles {
        match h.await {
            Ok(o) => outs.push(o),
            Err(e) => sh.problem(format!("worker panicked: {e}")),
        }
    }
    let end = Instant::now();
    sampler_stop.store(true, Ordering::Relaxed);
    let mut series = sampler.await.unwrap_or_default();
    series.push((
        sh.progress.acked.load(Ordering::Relaxed),
        procfs::rss_mib(t.pid),
        procfs::hwm_mib(t.pid),
    ));
    let cpu1 = procfs::cpu_seconds(t.pid).unwrap_or(0.0);
    let threads1 = procfs::thread_cpu(t.pid);
    let self1 = procfs::self_cpu_seconds();
    let wb1 = procfs::write_bytes(t.pid);

    // Merge.
    let mut m = Metrics::new();
    let mut all = hist();
    let mut per_op: BTreeMap<&'static str, Histogram<u64>> = BTreeMap::new();
    let mut age = hist();
    let (mut msgs_w, mut reqs_w, mut msgs_t, mut reqs_t, mut recv, mut empty) = (0, 0, 0, 0, 0, 0);
    let mut last_done = sh.warm_end;
    let mut sent = Vec::new();
    let mut received = Vec::new();
    for o in outs {
        for (op, h) in &o.hists {
            let _ = all.add(h);
            let _ = per_op.entry(op).or_insert_with(hist).add(h);
        }
        let _ = age.add(&o.age);
        msgs_w += o.msgs_window;
        reqs_w += o.reqs_window;
        msgs_t += o.msgs_total;
        reqs_t += o.reqs_total;
        recv += o.receives;
        empty += o.empty_receives;
        if let Some(l) = o.last_done {
            last_done = last_done.max(l);
        }
        sent.extend(o.sent);
        received.extend(o.received);
    }
    let window = (last_done.min(sh.deadline) - sh.warm_end).as_secs_f64();
    if window > 0.0 {
        m.insert("msgs_per_s".into(), msgs_w as f64 / window);
        m.insert("req_per_s".into(), reqs_w as f64 / window);
        if cfg.body_len >= 1 << 16 {
            m.insert(
                "mb_per_s".into(),
                msgs_w as f64 * cfg.body_len as f64 / window / 1e6,
            );
        }
    }
    m.insert("window_s".into(), window);
    m.insert("msgs_total".into(), msgs_t as f64);
    m.insert("reqs_total".into(), reqs_t as f64);
    m.insert("conns".into(), cfg.conns as f64);
    add_percentiles(&mut m, "", &all);
    if per_op.len() > 1 {
        for (op, h) in &per_op {
            add_percentiles(&mut m, &format!("{op}_"), h);
        }
    }
    if !age.is_empty() {
        add_percentiles(&mut m, "age_", &age);
    }
    if recv > 0 {
        m.insert("empty_receive_ratio".into(), empty as f64 / recv as f64);
    }
    if msgs_t > 0 {
        m.insert(
            "server_cpu_us_per_msg".into(),
            (cpu1 - cpu0) * 1e6 / msgs_t as f64,
        );
        // Per thread name: where the server's CPU goes (tokio workers, the store writer).
        for (name, c1) in &threads1 {
            let d = c1 - threads0.get(name).copied().unwrap_or(0.0);
            if d > 0.0 && t.kind == Kind::Localsqs {
                let key: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                m.insert(
                    format!("server_cpu_us_per_msg[{key}]"),
                    d * 1e6 / msgs_t as f64,
                );
            }
        }
        if let (Some(a), Some(b)) = (wb0, wb1) {
            m.insert(
                "server_write_bytes_per_msg".into(),
                b.saturating_sub(a) as f64 / msgs_t as f64,
            );
        }
    }
    if reqs_t > 0 {
        m.insert(
            "bench_cpu_us_per_req".into(),
            (self1 - self0) * 1e6 / reqs_t as f64,
        );
    }
    let wall = (end - start).as_secs_f64();
    m.insert("server_cpu_pct".into(), (cpu1 - cpu0) / wall * 100.0);
    if let Some(&(_, rss, hwm)) = series.last() {
        m.insert("rss_mib".into(), rss);
        m.insert("hwm_mib".into(), hwm);
        let peak = series.iter().map(|s| s.1).fold(0.0, f64::max);
        m.insert("rss_peak_sampled_mib".into(), peak);
        // HWM once a quarter of the volume had passed, to tell growth with volume from
        // growth with concurrency.
        let total = series.last().map_or(0, |s| s.0);
        if let Some(q) = series.iter().find(|s| s.0 * 4 >= total && total > 0) {
            m.insert("hwm_at_25pct_mib".into(), q.2);
        }
    }

    if t.pid == 0 {
        // A server whose process this bench cannot see (LocalStack, --endpoint without
        // --endpoint-pid): /proc figures would read as zeros.
        m.retain(|k, _| !(k.starts_with("server_") || k.contains("rss") || k.contains("hwm")));
    }
    let mut problems = sh
        .problems
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();

    // Correctness after the run (localsqs only: moto and the calibration server are references).
    if t.kind == Kind::Localsqs && problems.is_empty() {
        if cfg.track && cfg.drain_after && cfg.mode != Mode::SendOnly {
            let mut dcfg = cfg.clone();
            dcfg.mode = Mode::Drain;
            dcfg.conns = 8;
            dcfg.batch = 10;
            dcfg.warmup = Duration::ZERO;
            dcfg.duration = Duration::from_secs(120);
            dcfg.max_msgs = u64::MAX;
            let d = drain(t, dcfg, &url, &sh, base).await?;
            problems.extend(d.problems);
            received.extend(d.received);
            let left = queue_depth(t, p, &url).await?;
            if left != 0 {
                problems.push(format!("{left} messages left in the queue after the drain"));
            }
            problems.extend(verify(&sent, &received, left == 0));
        } else if cfg.mode == Mode::SendOnly {
            let depth = queue_depth(t, p, &url).await?;
            if depth != msgs_t {
                problems.push(format!(
                    "{msgs_t} sends acknowledged but the queue holds {depth} messages"
                ));
            }
        }
    }
    if cfg.delete_queue && t.kind != Kind::Calibration {
        let _ = one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    }
    Ok(Outcome {
        metrics: m,
        problems,
        url,
        sent,
        received,
    })
}

/// Receives and deletes everything left in `url`, checking FIFO order against `run`'s state.
async fn drain(
    t: Tgt,
    cfg: Cfg,
    url: &str,
    run: &Shared,
    base: Instant,
) -> Result<Outcome, String> {
    let mut conns = Vec::with_capacity(cfg.conns);
    for _ in 0..cfg.conns {
        conns.push(t.connect(cfg.proto).await?);
    }
    let start = Instant::now();
    let sh = Arc::new(Shared {
        url: url.to_owned(),
        warm_end: start,
        deadline: start + cfg.duration,
        cfg: cfg.clone(),
        base,
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        fifo_next: run
            .fifo_next
            .iter()
            .map(|a| AtomicU32::new(a.load(Ordering::SeqCst)))
            .collect(),
        fixed: None,
        problems: Mutex::new(Vec::new()),
        progress: Arc::new(Progress::default()),
        empties: AtomicU32::new(0),
    });
    let handles: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(w, c)| tokio::spawn(worker(w, c, Arc::clone(&sh))))
        .collect();
    let mut received = Vec::new();
    let mut n = 0u64;
    for h in handles {
        if let Ok(o) = h.await {
            n += o.msgs_total;
            received.extend(o.received);
        }
    }
    let mut metrics = Metrics::new();
    let secs = start.elapsed().as_secs_f64();
    metrics.insert("drained".into(), n as f64);
    metrics.insert("drain_msgs_per_s".into(), n as f64 / secs.max(1e-9));
    let problems = sh
        .problems
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    Ok(Outcome {
        metrics,
        problems,
        url: url.to_owned(),
        sent: Vec::new(),
        received,
    })
}

/// Public drain of a preloaded queue (W8), returning drained tags and drain rate.
pub async fn drain_queue(
    t: Tgt,
    p: Proto,
    url: &str,
    conns: usize,
    within: Duration,
    base: Instant,
) -> Result<Outcome, String> {
    let mut cfg = Cfg::new(p, conns, Mode::Drain);
    cfg.batch = 10;
    cfg.warmup = Duration::ZERO;
    cfg.duration = within;
    let dummy = Shared {
        url: url.to_owned(),
        warm_end: Instant::now(),
        deadline: Instant::now(),
        cfg: cfg.clone(),
        base,
        issued: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        fifo_next: Vec::new(),
        fixed: None,
        problems: Mutex::new(Vec::new()),
        progress: Arc::new(Progress::default()),
        empties: AtomicU32::new(0),
    };
    drain(t, cfg, url, &dummy, base).await
}
