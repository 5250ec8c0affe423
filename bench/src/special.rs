//! Workloads that do not fit the closed-loop driver: long-poll wake latency and parked polls
//! (W5), the 1M backlog with restarts (W8), startup, fsync calibration and fsync counting.

use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::http::{Conn, Proto};
use crate::procfs::{self, Kind, Server};
use crate::run::{self, Metrics, Tgt, VISIBILITY_S};
use crate::sqs::{self, Entry};

fn us_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// W5: one receiver parked with WaitTimeSeconds=20; a sender sends one message every
/// `interval` (open loop); latency = send start → receive done.
pub async fn long_poll_latency(
    t: Tgt,
    p: Proto,
    samples: usize,
    interval: Duration,
    base: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let url = run::create_queue(
        t,
        p,
        &run::queue_name("w5", false),
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
        let mut h = run::hist();
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
        problems.extend(run::verify(&sent, &tags, true));
    }
    let _ = run::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    let mut m = Metrics::new();
    run::add_percentiles(&mut m, "", &h);
    m.insert("samples".into(), h.len() as f64);
    Ok((m, problems))
}

/// The W5 reference: one SendMessage every `interval` on an otherwise idle connection, so that
/// threads and vCPUs are parked between requests as they are before a long-poll wake.
pub async fn idle_round_trip(
    t: Tgt,
    p: Proto,
    samples: usize,
    interval: Duration,
) -> Result<(Metrics, Vec<String>), String> {
    let url = if t.kind == Kind::Calibration {
        format!("http://{}/000000000000/calibration", t.addr)
    } else {
        run::create_queue(t, p, &run::queue_name("w5idle", false), &[]).await?
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
    let mut h = run::hist();
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
        let _ = run::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
    }
    let mut m = Metrics::new();
    run::add_percentiles(&mut m, "", &h);
    m.insert("samples".into(), h.len() as f64);
    Ok((m, problems))
}

/// W5: `receivers` long polls parked (WaitTimeSeconds=20) on one queue; server CPU over `idle`;
/// then one message each wakes them all, and each must get exactly one.
pub async fn parked_polls(
    t: Tgt,
    p: Proto,
    receivers: usize,
    idle: Duration,
    base: Instant,
) -> Result<(Metrics, Vec<String>), String> {
    let url = run::create_queue(
        t,
        p,
        &run::queue_name("w5park", false),
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
        left = run::queue_depth(t, p, &url).await.unwrap_or(0);
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
    let _ = run::one(t.addr, p, &sqs::delete_queue(p, &url)).await;
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

/// Waits until `ListQueues` answers 200; returns the time since the process was spawned.
pub async fn wait_ready(s: &Server, p: Proto, within: Duration) -> Result<Duration, String> {
    let end = Instant::now() + within;
    let req = sqs::list_queues(p);
    let mut last = String::new();
    while Instant::now() < end {
        match Conn::connect(s.addr, p).await {
            Ok(mut c) => match c.call(&req, Duration::from_secs(5)).await {
                Ok(r) if r.status == 200 => return Ok(s.spawned.elapsed()),
                Ok(r) => last = sqs::describe(&r),
                Err(e) => last = e,
            },
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    Err(format!(
        "{} on {} not ready within {within:?}: {last}\n{}",
        s.kind.name(),
        s.addr,
        s.log_tail()
    ))
}

/// Time from spawn to the first ReceiveMessage that returns a message (which is then deleted).
/// Returns (time to first answered request, time to first message, the message's tag).
pub async fn first_receive(
    s: &Server,
    p: Proto,
    url: &str,
    within: Duration,
) -> Result<(Duration, Duration, Option<u64>), String> {
    let end = Instant::now() + within;
    let req = sqs::receive(p, url, 1, None);
    let mut answered = None;
    let mut last = String::new();
    while Instant::now() < end {
        let mut c = match Conn::connect(s.addr, p).await {
            Ok(c) => c,
            Err(e) => {
                last = e;
                tokio::time::sleep(Duration::from_micros(500)).await;
                continue;
            }
        };
        while Instant::now() < end {
            let r = match c.call(&req, Duration::from_secs(10)).await {
                Ok(r) => r,
                Err(e) => {
                    last = e;
                    break;
                }
            };
            answered.get_or_insert_with(|| s.spawned.elapsed());
            let msgs = sqs::parse_receive(p, &r)?;
            if let Some(m) = msgs.first() {
                let t = s.spawned.elapsed();
                let r = c
                    .call(&sqs::delete(p, url, &m.handle), Duration::from_secs(10))
                    .await?;
                if r.status != 200 {
                    return Err(format!(
                        "DeleteMessage after restart: {}",
                        sqs::describe(&r)
                    ));
                }
                let tag = sqs::parse_body(&m.body).map(|x| x.0);
                return Ok((answered.unwrap_or(t), t, tag));
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
    }
    Err(format!(
        "no message received within {within:?} after restart: {last}"
    ))
}

/// Startup: exec → first answered ListQueues, and RSS after `settle` idle.
pub async fn startup(
    bin: &Path,
    data_dir: Option<&Path>,
    log: PathBuf,
    settle: Duration,
) -> Result<Metrics, String> {
    let mut args = Vec::new();
    if let Some(d) = data_dir {
        args.push("--data-dir".to_owned());
        args.push(d.display().to_string());
    }
    let mut s = Server::spawn(Kind::Localsqs, bin, &args, log)?;
    let ready = wait_ready(&s, Proto::Json, Duration::from_secs(10)).await?;
    tokio::time::sleep(settle).await;
    let mut m = Metrics::new();
    m.insert("startup_ms".into(), ready.as_secs_f64() * 1000.0);
    m.insert("idle_rss_mib".into(), procfs::rss_mib(s.pid));
    let t0 = Instant::now();
    let clean = s.terminate(Duration::from_secs(10));
    m.insert("shutdown_ms".into(), t0.elapsed().as_secs_f64() * 1000.0);
    if !clean {
        return Err("localsqs did not exit within 10 s of SIGTERM".into());
    }
    Ok(m)
}

/// Raw 4 KiB pwrite + fdatasync rate in `dir` for `secs` (the disk calibration of §4.4).
pub fn fsync_calibration(dir: &Path, secs: Duration) -> Result<f64, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let path = dir.join("fsync-calibration.bin");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(&[0u8; 4096]).map_err(|e| e.to_string())?;
    f.sync_all().map_err(|e| e.to_string())?;
    let buf = [0x5au8; 4096];
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < secs && n < 1_000_000 {
        f.write_all_at(&buf, 0).map_err(|e| e.to_string())?;
        f.sync_data().map_err(|e| e.to_string())?;
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    drop(f);
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}

/// Counts fsync + fdatasync calls of `pid` over `secs` with `strace -c` (None if strace is
/// missing or refuses).
pub fn count_fsyncs(pid: u32, secs: u32) -> Option<u64> {
    let out = Command::new("timeout")
        .args([
            "-s",
            "INT",
            &secs.to_string(),
            "strace",
            "-f",
            "-c",
            "--seccomp-bpf",
            "-e",
            "trace=fsync,fdatasync",
            "-p",
            &pid.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let mut total = None;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let Some(name) = f.last()
            && (*name == "fsync" || *name == "fdatasync")
            && f.len() >= 5
            && let Ok(calls) = f[3].parse::<u64>()
        {
            *total.get_or_insert(0) += calls;
        }
    }
    if total.is_none() && text.contains("total") {
        return Some(0);
    }
    total
}

/// Shared pieces for W8.
pub struct Backlog<'a> {
    pub bin: &'a Path,
    pub dir: PathBuf,
    pub logs: PathBuf,
    pub n: u64,
    pub restarts: usize,
    pub quick: bool,
}

/// W8: load `n` × 200 B through SendMessageBatch into a durable server, measure RSS and disk,
/// restart cleanly and after kill -9 (time to first receive), then drain and check that every
/// acknowledged message came back exactly once.
pub async fn backlog(b: &Backlog<'_>, base: Instant) -> Result<(Metrics, Vec<String>), String> {
    let p = Proto::Json;
    let _ = std::fs::remove_dir_all(&b.dir);
    std::fs::create_dir_all(&b.dir).map_err(|e| e.to_string())?;
    let args = vec!["--data-dir".to_owned(), b.dir.display().to_string()];
    let mut launches = 0;
    let spawn = |launches: &mut usize| {
        *launches += 1;
        Server::spawn(
            Kind::Localsqs,
            b.bin,
            &args,
            b.logs.join(format!("w8-{launches}.log")),
        )
    };
    let mut s = spawn(&mut launches)?;
    wait_ready(&s, p, Duration::from_secs(30)).await?;
    let t = Tgt::of(&s);
    let mut m = Metrics::new();
    let mut problems = Vec::new();

    // Load.
    let mut cfg = run::Cfg::new(p, 16, run::Mode::SendOnly);
    cfg.batch = 10;
    cfg.warmup = Duration::ZERO;
    cfg.duration = Duration::from_secs(if b.quick { 30 } else { 120 });
    cfg.max_msgs = b.n;
    cfg.drain_after = false;
    cfg.delete_queue = false;
    let load = run::run(t, cfg, None, Arc::new(run::Progress::default()), base).await?;
    problems.extend(load.problems.iter().map(|x| format!("load: {x}")));
    let loaded = load.sent.len() as u64;
    let url = load.url.clone();
    m.insert("loaded".into(), loaded as f64);
    if let Some(v) = load.metrics.get("msgs_per_s") {
        m.insert("load_msgs_per_s".into(), *v);
    }
    for k in [
        "hwm_mib",
        "rss_mib",
        "server_write_bytes_per_msg",
        "server_cpu_us_per_msg",
    ] {
        if let Some(v) = load.metrics.get(k) {
            m.insert(format!("load_{k}"), *v);
        }
    }
    let disk = procfs::dir_bytes(&b.dir);
    m.insert("disk_mib".into(), disk as f64 / 1048576.0);
    m.insert(
        "disk_bytes_per_msg".into(),
        disk as f64 / loaded.max(1) as f64,
    );
    if !problems.is_empty() {
        return Ok((m, problems));
    }

    // Restarts.
    let mut received = Vec::new();
    let mut clean_ms = Vec::new();
    let mut kill_ms = Vec::new();
    let mut answer_ms = Vec::new();
    let mut rss_after = 0.0f64;
    for i in 0..b.restarts * 2 {
        let clean = i % 2 == 0;
        if clean {
            let t0 = Instant::now();
            if !s.terminate(Duration::from_secs(60)) {
                problems.push("localsqs did not exit within 60 s of SIGTERM".into());
            }
            m.insert("shutdown_ms".into(), t0.elapsed().as_secs_f64() * 1000.0);
        } else {
            s.kill9();
        }
        s = spawn(&mut launches)?;
        let (answered, first, tag) = first_receive(&s, p, &url, Duration::from_secs(60)).await?;
        if let Some(tag) = tag {
            received.push(tag);
        }
        answer_ms.push(answered.as_secs_f64() * 1000.0);
        if clean {
            clean_ms.push(first.as_secs_f64() * 1000.0);
        } else {
            kill_ms.push(first.as_secs_f64() * 1000.0);
        }
        rss_after = rss_after.max(procfs::rss_mib(s.pid));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    m.insert("restart_clean_first_receive_ms".into(), med(&mut clean_ms));
    m.insert("restart_kill9_first_receive_ms".into(), med(&mut kill_ms));
    m.insert("restart_first_answer_ms".into(), med(&mut answer_ms));
    m.insert("restarts_each".into(), b.restarts as f64);
    m.insert("rss_after_restart_mib".into(), rss_after);
    let t = Tgt::of(&s);

    // Drain.
    let within = Duration::from_secs(if b.quick { 60 } else { 180 });
    let d = run::drain_queue(t, p, &url, 8, within, base).await?;
    problems.extend(d.problems.iter().map(|x| format!("drain: {x}")));
    if let Some(v) = d.metrics.get("drain_msgs_per_s") {
        m.insert("drain_msgs_per_s".into(), *v);
    }
    received.extend(d.received);
    let left = run::queue_depth(t, p, &url).await?;
    if left != 0 {
        problems.push(format!("{left} messages left after the drain"));
    }
    problems.extend(run::verify(&load.sent, &received, left == 0));
    m.insert("hwm_mib".into(), procfs::hwm_mib(s.pid));
    let disk_after = procfs::dir_bytes(&b.dir);
    m.insert("disk_after_drain_mib".into(), disk_after as f64 / 1048576.0);
    if !s.alive() {
        problems.push(format!("localsqs exited during W8:\n{}", s.log_tail()));
    }
    s.terminate(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&b.dir);
    Ok((m, problems))
}
