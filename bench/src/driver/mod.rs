//! The closed-loop driver: one task and one keep-alive connection per virtual client, a warm-up
//! window, count and time bounds, HDR latency histograms, server CPU and RSS from /proc, and
//! the correctness checks (lost, duplicated, unexpected, out-of-order messages). This file holds
//! the run parameters and one-off requests; `run` the run itself, `worker` one virtual client,
//! `verify` the comparison of sent and received tags.

mod run;
mod verify;
mod worker;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::http::{Conn, Proto, Req, Resp};
use crate::procfs::{self, Kind, Server};
use crate::sqs;

pub use run::{drain_queue, run};
pub use verify::verify;

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
    /// A connection to this target (reconnecting for moto, which closes after each response,
    /// and for LocalStack, which this bench does not control).
    pub async fn connect(&self, p: Proto) -> Result<Conn, String> {
        if matches!(self.kind, Kind::Moto | Kind::LocalStack) {
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

    /// Loads a backlog: `n` messages through SendMessageBatch(10), no warm-up, at most
    /// `deadline`, and the queue kept for what follows.
    pub fn preload(proto: Proto, conns: usize, n: u64, deadline: Duration) -> Cfg {
        Cfg {
            batch: 10,
            warmup: Duration::ZERO,
            duration: deadline,
            max_msgs: n,
            delete_queue: false,
            ..Cfg::new(proto, conns, Mode::SendOnly)
        }
    }
}

/// Live counters a caller may watch during a run.
#[derive(Debug, Default)]
pub struct Progress {
    /// Messages acknowledged (sent for SendOnly, deleted otherwise).
    pub acked: AtomicU64,
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
