//! The durable backlog run W8 and W9 share: load `n` × 200 B through SendMessageBatch into a
//! server with `--data-dir`, measure RSS and data-directory bytes per message, restart cleanly
//! and after `kill -9` (exec → first ReceiveMessage returning a message), and optionally drain
//! and check that every acknowledged message came back exactly once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::driver::{self, Cfg, Metrics, Progress, Tgt};
use crate::http::{Conn, Proto};
use crate::procfs::{self, Kind, Server};
use crate::sqs;

/// What one durable backlog run needs.
pub struct Backlog<'a> {
    pub bin: &'a Path,
    /// Prefix of the server logs (`<name>-<launch>.log`) and the name in messages.
    pub name: &'static str,
    pub dir: PathBuf,
    pub logs: PathBuf,
    /// Messages to load.
    pub n: u64,
    /// Clean restarts, and as many `kill -9` restarts.
    pub restarts: usize,
    /// Drain and verify every message afterwards (needs every tag tracked during the load).
    pub drain: bool,
    pub quick: bool,
}

impl Backlog<'_> {
    /// How long the load may take: 120 s, or more for big backlogs (20k msgs/s at least).
    fn load_deadline(&self) -> Duration {
        if self.quick {
            Duration::from_secs(30)
        } else {
            Duration::from_secs((self.n / 20_000).max(120))
        }
    }

    /// How long the drain may take: 180 s, or more for big backlogs (10k msgs/s at least).
    fn drain_deadline(&self) -> Duration {
        if self.quick {
            Duration::from_secs(60)
        } else {
            Duration::from_secs((self.n / 10_000).max(180))
        }
    }
}

/// Loads `n` × 200 B through SendMessageBatch into a durable server, measures RSS and disk,
/// restarts cleanly and after kill -9 (time to first receive), then (with `drain`) drains and
/// checks that every acknowledged message came back exactly once.
pub async fn durable(b: &Backlog<'_>, base: Instant) -> Result<(Metrics, Vec<String>), String> {
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
            b.logs.join(format!("{}-{launches}.log", b.name)),
        )
    };
    let mut s = spawn(&mut launches)?;
    driver::wait_ready(&s, p, Duration::from_secs(30)).await?;
    let t = Tgt::of(&s);
    let mut m = Metrics::new();
    let mut problems = Vec::new();

    // Load.
    let mut cfg = Cfg::preload(p, 16, b.n, b.load_deadline());
    // Tags are tracked only when they will be verified: 10M of them would cost 80 MB.
    cfg.track = b.drain;
    cfg.drain_after = false;
    let load = driver::run(t, cfg, None, Arc::new(Progress::default()), base).await?;
    problems.extend(load.problems.iter().map(|x| format!("load: {x}")));
    let loaded = load.metrics.get("msgs_total").copied().unwrap_or(0.0) as u64;
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
    let (disk, apparent) = procfs::dir_bytes(&b.dir);
    m.insert("disk_mib".into(), disk as f64 / 1048576.0);
    m.insert(
        "disk_bytes_per_msg".into(),
        disk as f64 / loaded.max(1) as f64,
    );
    m.insert(
        "disk_apparent_bytes_per_msg".into(),
        apparent as f64 / loaded.max(1) as f64,
    );
    if !problems.is_empty() {
        return Ok((m, problems));
    }

    // Restarts.
    let mut received = Vec::new();
    let mut taken = 0u64;
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
        taken += 1;
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
    if b.drain {
        let within = b.drain_deadline();
        let d = driver::drain_queue(t, p, &url, 8, within, base).await?;
        problems.extend(d.problems.iter().map(|x| format!("drain: {x}")));
        if let Some(v) = d.metrics.get("drain_msgs_per_s") {
            m.insert("drain_msgs_per_s".into(), *v);
        }
        received.extend(d.received);
        let left = driver::queue_depth(t, p, &url).await?;
        if left != 0 {
            problems.push(format!("{left} messages left after the drain"));
        }
        problems.extend(driver::verify(&load.sent, &received, left == 0));
    } else {
        // Without a drain: the restarts must have kept every message but the ones received.
        let left = driver::queue_depth(t, p, &url).await?;
        let want = loaded.saturating_sub(taken);
        if left != want {
            problems.push(format!(
                "{left} messages in the queue after the restarts, expected {want}"
            ));
        }
    }
    m.insert("hwm_mib".into(), procfs::hwm_mib(s.pid));
    let (disk_after, _) = procfs::dir_bytes(&b.dir);
    let disk_key = if b.drain {
        "disk_after_drain_mib"
    } else {
        "disk_after_restarts_mib"
    };
    m.insert(disk_key.into(), disk_after as f64 / 1048576.0);
    if !s.alive() {
        problems.push(format!(
            "localsqs exited during {}:\n{}",
            b.name,
            s.log_tail()
        ));
    }
    s.terminate(Duration::from_secs(60));
    let _ = std::fs::remove_dir_all(&b.dir);
    Ok((m, problems))
}

/// Time from spawn to the first ReceiveMessage that returns a message (which is then deleted).
/// Returns (time to first answered request, time to first message, the message's tag).
async fn first_receive(
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
