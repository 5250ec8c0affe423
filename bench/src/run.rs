//! The closed-loop driver: one task and one keep-alive connection per virtual client, a warm-up
//! window, count and time bounds, HDR latency histograms, server CPU and RSS from /proc, and
//! the correctness checks (lost, duplicated, unexpected, out-of-order messages).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::http::{Conn, Proto, Req, Resp};
use crate::procfs::{self, Kind};
use crate::sqs::{self, Entry};

/// Visibility timeout of every bench queue: far longer than any run, so a second delivery of
/// a message during a run is a duplicate delivery within the visibility timeout.
pub const VISIBILITY_S: u32 = 600;

/// A server under test, as the driver needs it.
#[derive(Debug, Clone, Copy)]
pub struct Tgt {
    pub kind: Kind,
    pub addr: SocketAddr,
    pub pid: u32,
}

impl Tgt {
    /// A connection to this target (reconnecting for moto, which closes after each response).
    pub async fn connect(&self, p: Proto) -> Result<Conn, String> {
        if self.kind == Kind::Moto {
            Conn::connect_reconnecting(self.addr, p).await
        } else {
            Conn::connect(self.addr, p).await
        }
    }

    pub fn of(s: &procfs::Server) -> Tgt {
        Tgt {
            kind: s.kind,
            addr: s.addr,
            pid: s.pid,
        }
    }
}

/// Metrics of one run, by name.
pub type Metrics = BTreeMap<String, f64>;

/// A new latency histogram in microseconds (1 µs to 2 min, 3 significant digits).
pub fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 120_000_000, 3)
        .unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()))
}

/// Adds p50/p90/p99/p99.9/max of `h` (µs) to `m` as `<prefix>p50_ms` and so on.
pub fn add_percentiles(m: &mut Metrics, prefix: &str, h: &Histogram<u64>) {
    if h.is_empty() {
        return;
    }
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        m.insert(
            format!("{prefix}{name}_ms"),
            h.value_at_quantile(q) as f64 / 1000.0,
        );
    }
    m.insert(format!("{prefix}max_ms"), h.max() as f64 / 1000.0);
}

/// What the workers do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Send only (SendMessage, or SendMessageBatch when `batch > 1`).
    SendOnly,
    /// Send `batch` → Receive(Max=`batch`) → Delete(Batch), per worker, closed loop.
    Pipeline,
    /// Receive(Max=`batch`) → Delete(Batch) of a preloaded backlog.
    Drain,
}

/// FIFO settings.
#[derive(Debug, Clone, Copy)]
pub struct Fifo {
    pub groups: u32,
    pub content_dedup: bool,
}

/// One run's parameters.
#[derive(Debug, Clone)]
pub struct Cfg {
    pub proto: Proto,
    pub conns: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Most messages sent (received, for `Drain`) in the run.
    pub max_msgs: u64,
    pub batch: usize,
    pub body_len: usize,
    pub mode: Mode,
    pub fifo: Option<Fifo>,
    /// Track every message by tag and check for loss, duplicates and order afterwards.
    pub track: bool,
    /// Extra queue attributes.
    pub attrs: Vec<(&'static str, String)>,
    /// Drain the queue after the run and check that nothing was lost.
    pub drain_after: bool,
    /// Delete the queue after the run.
    pub delete_queue: bool,
    pub timeout: Duration,
}

impl Cfg {
    pub fn new(proto: Proto, conns: usize, mode: Mode) -> Cfg {
        Cfg {
            proto,
            conns,
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(5),
            max_msgs: u64::MAX,
            batch: 1,
            body_len: 200,
            mode,
            fifo: None,
            track: true,
            attrs: Vec::new(),
            drain_after: true,
            delete_queue: true,
            timeout: Duration::from_secs(30),
        }
    }
}

/// Live counters a caller may watch during a run.
#[derive(Debug, Default)]
pub struct Progress {
    /// Messages acknowledged (sent for SendOnly, deleted otherwise).
    pub acked: AtomicU64,
}

struct Shared {
    url: String,
    cfg: Cfg,
    base: Instant,
    warm_end: Instant,
    deadline: Instant,
    issued: AtomicU64,
    stop: AtomicBool,
    fifo_next: Vec<AtomicU32>,
    fixed: Option<Req>,
    problems: Mutex<Vec<String>>,
    progress: Arc<Progress>,
    /// Drain: consecutive empty receives seen by all workers.
    empties: AtomicU32,
}

impl Shared {
    fn problem(&self, p: String) {
        self.stop.store(true, Ordering::SeqCst);
        let mut v = self
            .problems
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if v.len() < 20 {
            v.push(p);
        }
    }
}

struct WorkerOut {
    hists: BTreeMap<&'static str, Histogram<u64>>,
    age: Histogram<u64>,
    msgs_window: u64,
    reqs_window: u64,
    msgs_total: u64,
    reqs_total: u64,
    receives: u64,
    empty_receives: u64,
    sent: Vec<u64>,
    received: Vec<u64>,
    last_done: Option<Instant>,
}

impl WorkerOut {
    fn new() -> Self {
        WorkerOut {
            hists: BTreeMap::new(),
            age: hist(),
            msgs_window: 0,
            reqs_window: 0,
            msgs_total: 0,
            reqs_total: 0,
            receives: 0,
            empty_receives: 0,
            sent: Vec::new(),
            received: Vec::new(),
            last_done: None,
        }
    }

    fn req(&mut self, sh: &Shared, op: &'static str, t0: Instant, t1: Instant) {
        self.reqs_total += 1;
        if t1 >= sh.warm_end && t1 <= sh.deadline {
            self.reqs_window += 1;
            let us = u64::try_from((t1 - t0).as_micros()).unwrap_or(u64::MAX);
            self.hists
                .entry(op)
                .or_insert_with(hist)
                .saturating_record(us.max(1));
        }
    }

    fn msgs(&mut self, sh: &Shared, n: u64, t1: Instant) {
        self.msgs_total += n;
        sh.progress.acked.fetch_add(n, Ordering::Relaxed);
        if t1 >= sh.warm_end && t1 <= sh.deadline {
            self.msgs_window += n;
            self.last_done = Some(self.last_done.map_or(t1, |l| l.max(t1)));
        }
    }
}

fn us_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_micros()).unwrap_or(u64::MAX)
}

async fn call(conn: &mut Conn, sh: &Shared, req: &Req) -> Option<Resp> {
    match conn.call(req, sh.cfg.timeout).await {
        Ok(r) => Some(r),
        Err(e) => {
            sh.problem(format!("transport error on {}: {e}", req.target));
            None
        }
    }
}

/// Checks the received messages: tags, FIFO order, ages, body length.
fn take_messages(sh: &Shared, out: &mut WorkerOut, msgs: &[sqs::Msg], done: Instant) {
    let now_us = u64::try_from((done - sh.base).as_micros()).unwrap_or(u64::MAX);
    let in_window = done >= sh.warm_end && done <= sh.deadline;
    for m in msgs {
        let Some((tag, ts)) = sqs::parse_body(&m.body) else {
            if sh.cfg.track {
                sh.problem(format!(
                    "received a body the bench did not send: {:?}",
                    m.body.chars().take(40).collect::<String>()
                ));
            }
            continue;
        };
        if m.body.len() != sh.cfg.body_len && sh.cfg.mode != Mode::Drain {
            sh.problem(format!(
                "message {tag:x} came back with {} bytes, sent {}",
                m.body.len(),
                sh.cfg.body_len
            ));
        }
        if in_window {
            out.age
                .saturating_record(now_us.saturating_sub(ts).max(1) & 0xffff_ffff_ffff);
        }
        if sh.cfg.track {
            out.received.push(tag);
        }
        if sh.cfg.fifo.is_some() {
            fifo_check(sh, tag);
        }
    }
}

fn fifo_check(sh: &Shared, tag: u64) {
    let g = usize::try_from(tag >> 32).unwrap_or(usize::MAX);
    let k = u32::try_from(tag & 0xffff_ffff).unwrap_or(u32::MAX);
    let Some(next) = sh.fifo_next.get(g) else {
        sh.problem(format!("FIFO message of unknown group {g}"));
        return;
    };
    if let Err(expected) = next.compare_exchange(k, k + 1, Ordering::SeqCst, Ordering::SeqCst) {
        sh.problem(format!(
            "FIFO order violated in group {g}: received #{k}, expected #{expected}"
        ));
    }
}

async fn worker(w: usize, mut conn: Conn, sh: Arc<Shared>) -> WorkerOut {
    let cfg = &sh.cfg;
    let p = cfg.proto;
    let mut out = WorkerOut::new();
    let mut counter: u64 = 0;
    let my_groups: Vec<u32> = cfg.fifo.map_or_else(Vec::new, |f| {
        (u32::try_from(w).unwrap_or(0)..f.groups)
            .step_by(cfg.conns.max(1))
            .collect()
    });
    let mut group_seq = vec![0u32; my_groups.len()];
    let mut gi = 0usize;
    loop {
        if Instant::now() >= sh.deadline || sh.stop.load(Ordering::Relaxed) {
            break;
        }
        if cfg.mode != Mode::Drain {
            let n = cfg.batch as u64;
            if sh.issued.fetch_add(n, Ordering::Relaxed) >= cfg.max_msgs {
                break;
            }
            // Send.
            let mut tags = Vec::with_capacity(cfg.batch);
            let req = if let Some(f) = &sh.fixed {
                f.clone()
            } else {
                let sent_us = us_since(sh.base);
                let mut bodies = Vec::with_capacity(cfg.batch);
                let mut groups = Vec::with_capacity(cfg.batch);
                let mut dedups = Vec::with_capacity(cfg.batch);
                for _ in 0..cfg.batch {
                    let tag = if cfg.fifo.is_some() {
                        if my_groups.is_empty() {
                            break;
                        }
                        let g = my_groups[gi % my_groups.len()];
                        let k = group_seq[gi % my_groups.len()];
                        group_seq[gi % my_groups.len()] += 1;
                        gi += 1;
                        groups.push(format!("g{g}"));
                        dedups.push(format!("d{g}-{k}"));
                        (u64::from(g) << 32) | u64::from(k)
                    } else {
                        counter += 1;
                        ((w as u64) << 40) | counter
                    };
                    tags.push(tag);
                    bodies.push(sqs::body(tag, sent_us, cfg.body_len));
                }
                if bodies.is_empty() {
                    break;
                }
                let content = cfg.fifo.is_some_and(|f| f.content_dedup);
                let entries: Vec<Entry<'_>> = bodies
                    .iter()
                    .enumerate()
                    .map(|(i, b)| Entry {
                        group: groups.get(i).map(String::as_str),
                        dedup: if content {
                            None
                        } else {
                            dedups.get(i).map(String::as_str)
                        },
                        body: b,
                    })
                    .collect();
                if cfg.batch == 1 {
                    sqs::send(p, &sh.url, &entries[0])
                } else {
                    sqs::send_batch(p, &sh.url, &entries)
                }
            };
            let t0 = Instant::now();
            let Some(r) = call(&mut conn, &sh, &req).await else {
                break;
            };
            let t1 = Instant::now();
            let checked = if cfg.batch == 1 {
                sqs::check_send(p, &r)
            } else {
                sqs::check_batch(p, &r, cfg.batch).map(|_| ())
            };
            if let Err(e) = checked {
                sh.problem(format!("{}: {e}", req.target));
                break;
            }
            let op = if cfg.batch == 1 {
                "SendMessage"
            } else {
                "SendMessageBatch"
            };
            out.req(&sh, op, t0, t1);
            if cfg.track {
                out.sent.extend_from_slice(&tags);
            }
            if cfg.mode == Mode::SendOnly {
                out.msgs(&sh, n, t1);
                continue;
            }
        }
        // Receive.
        let req = sqs::receive(p, &sh.url, cfg.batch, None);
        let t0 = Instant::now();
        let Some(r) = call(&mut conn, &sh, &req).await else {
            break;
        };
        let t1 = Instant::now();
        out.req(&sh, "ReceiveMessage", t0, t1);
        out.receives += 1;
        let msgs = match sqs::parse_receive(p, &r) {
            Ok(m) => m,
            Err(e) => {
                sh.problem(format!("ReceiveMessage: {e}"));
                break;
            }
        };
        if msgs.is_empty() {
            out.empty_receives += 1;
            if cfg.mode == Mode::Drain {
                if sh.empties.fetch_add(1, Ordering::SeqCst) >= 3 * cfg.conns as u32 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            continue;
        }
        if cfg.mode == Mode::Drain {
            sh.empties.store(0, Ordering::SeqCst);
            if sh.issued.fetch_add(msgs.len() as u64, Ordering::Relaxed) >= cfg.max_msgs {
                sh.stop.store(true, Ordering::SeqCst);
            }
        }
        take_messages(&sh, &mut out, &msgs, t1);
        // Delete.
        let (req, op) = if msgs.len() == 1 {
            (sqs::delete(p, &sh.url, &msgs[0].handle), "DeleteMessage")
        } else {
            let hs: Vec<&str> = msgs.iter().map(|m| m.handle.as_str()).collect();
            (sqs::delete_batch(p, &sh.url, &hs), "DeleteMessageBatch")
        };
        let t0 = Instant::now();
        let Some(r) = call(&mut conn, &sh, &req).await else {
            break;
        };
        let t1 = Instant::now();
        let checked = if msgs.len() == 1 {
            if r.status == 200 {
                Ok(())
            } else {
                Err(sqs::describe(&r))
            }
        } else {
            sqs::check_batch(p, &r, msgs.len()).map(|_| ())
        };
        if let Err(e) = checked {
            sh.problem(format!("{op}: {e}"));
            break;
        }
        out.req(&sh, op, t0, t1);
        out.msgs(&sh, msgs.len() as u64, t1);
    }
    out
}

/// One request on a fresh connection, with the response status checked.
pub async fn one(addr: SocketAddr, p: Proto, req: &Req) -> Result<Resp, String> {
    let mut c = Conn::connect_reconnecting(addr, p).await?;
    let r = c.call(req, Duration::from_secs(30)).await?;
    if r.status != 200 {
        return Err(format!("{}: {}", req.target, sqs::describe(&r)));
    }
    Ok(r)
}

/// Creates a queue and returns its URL.
pub async fn create_queue(
    t: Tgt,
    p: Proto,
    name: &str,
    attrs: &[(&'static str, String)],
) -> Result<String, String> {
    let r = one(t.addr, p, &sqs::create_queue(p, name, attrs)).await?;
    sqs::parse_queue_url(p, &r)
}

/// ApproximateNumberOfMessages + ApproximateNumberOfMessagesNotVisible (+ Delayed).
pub async fn queue_depth(t: Tgt, p: Proto, url: &str) -> Result<u64, String> {
    let names = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ];
    let r = one(t.addr, p, &sqs::get_attributes(p, url, &names)).await?;
    let mut n = 0;
    for name in names {
        n += sqs::parse_attribute(p, &r, name)?;
    }
    Ok(n)
}

/// The outcome of one run: metrics plus correctness problems found.
pub struct Outcome {
    pub metrics: Metrics,
    pub problems: Vec<String>,
    pub url: String,
    /// Tags sent and received (when tracked), for callers that check more.
    pub sent: Vec<u64>,
    pub received: Vec<u64>,
}

/// Unique queue names within one bench process.
pub fn queue_name(prefix: &str, fifo: bool) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let suffix = if fifo { ".fifo" } else { "" };
    format!("bench-{prefix}-{}-{n}{suffix}", std::process::id())
}

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

/// Compares sent and received tags: duplicates, losses (when the queue was drained empty)
/// and messages nobody sent.
pub fn verify(sent: &[u64], received: &[u64], complete: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = sent.to_vec();
    s.sort_unstable();
    let mut r = received.to_vec();
    r.sort_unstable();
    let dups: Vec<u64> = r
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    if !dups.is_empty() {
        out.push(format!(
            "{} duplicate deliveries within the visibility timeout (first tags: {:x?})",
            dups.len(),
            &dups[..dups.len().min(5)]
        ));
    }
    r.dedup();
    let s_dups = s.windows(2).filter(|w| w[0] == w[1]).count();
    if s_dups > 0 {
        out.push(format!("bench bug: {s_dups} tags sent twice"));
    }
    let (mut lost, mut extra) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < s.len() || j < r.len() {
        match (s.get(i), r.get(j)) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a < b => {
                lost.push(*a);
                i += 1;
            }
            (Some(_), Some(b)) => {
                extra.push(*b);
                j += 1;
            }
            (Some(a), None) => {
                lost.push(*a);
                i += 1;
            }
            (None, Some(b)) => {
                extra.push(*b);
                j += 1;
            }
            (None, None) => break,
        }
    }
    if complete && !lost.is_empty() {
        out.push(format!(
            "{} acknowledged messages lost (first tags: {:x?})",
            lost.len(),
            &lost[..lost.len().min(5)]
        ));
    }
    if !extra.is_empty() {
        out.push(format!(
            "{} messages received that no acknowledged send produced (first tags: {:x?})",
            extra.len(),
            &extra[..extra.len().min(5)]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::verify;

    #[test]
    fn verify_finds_losses_duplicates_and_extras() {
        assert!(verify(&[1, 2, 3], &[3, 1, 2], true).is_empty());
        assert_eq!(verify(&[1, 2, 3], &[1, 2], true).len(), 1);
        assert!(verify(&[1, 2, 3], &[1, 2], false).is_empty());
        assert_eq!(verify(&[1, 2], &[1, 2, 2], true).len(), 1);
        assert_eq!(verify(&[1, 2], &[1, 2, 9], true).len(), 1);
    }
}
