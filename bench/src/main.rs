//! `localsqs-bench`: the benchmark harness of issue #8 (performance.md §4).
//!
//! Starts localsqs (`target/release/localsqs`), a bare hyper calibration server (this binary
//! with `--serve-calibration`) and, when installed, `moto_server`, all on loopback; drives them
//! with a tokio + hyper 1 closed-loop load generator in both SQS protocols; reads server CPU and
//! RSS from /proc; prints a Markdown table and writes JSON.
//!
//! `--quick` is the CI mode: small counts, under two minutes, and a non-zero exit only on a
//! crash or a correctness violation, never on a timing.

mod http;
mod procfs;
mod report;
mod run;
mod special;
mod sqs;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;

use http::Proto;
use procfs::{Kind, Server};
use report::{Book, Check, Env};
use run::{Cfg, Fifo, Metrics, Mode, Progress, Tgt};

/// Benchmark harness for localsqs (performance.md §4).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// CI mode: small counts, fails only on crashes and correctness violations.
    #[arg(long)]
    quick: bool,
    /// Repeats of the key workloads (default 3, quick 1).
    #[arg(long)]
    repeat: Option<usize>,
    /// Measured seconds per closed-loop run, after a warm-up (default 5, quick 1).
    #[arg(long)]
    duration: Option<f64>,
    /// The localsqs binary (default: build and use <workspace>/target/release/localsqs).
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Do not run `cargo build --release --bin localsqs` first.
    #[arg(long)]
    no_build: bool,
    /// Drive an already running localsqs at this loopback URL instead of starting one
    /// (workloads that restart the server are then skipped).
    #[arg(long)]
    endpoint: Option<String>,
    /// PID of the --endpoint server, for CPU and RSS figures.
    #[arg(long)]
    endpoint_pid: Option<u32>,
    /// moto_server executable (default: `moto_server` on PATH).
    #[arg(long)]
    moto: Option<PathBuf>,
    /// Skip the moto comparison.
    #[arg(long)]
    no_moto: bool,
    /// Only these workloads (comma-separated: W1,W1c1,W2,W2a,W3,W4,W5,W7,W8,W11,startup,moto).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Run W1 and W2 in one protocol only: json or query (default both).
    #[arg(long, value_parser = ["json", "query"])]
    protocol: Option<String>,
    /// Messages loaded in W8 (default 1,000,000; quick 20,000).
    #[arg(long)]
    w8_messages: Option<u64>,
    /// JSON output (default bench/results/latest.json, quick: bench/results/quick.json).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Scratch directory for data directories and logs (default <target>/localsqs-bench).
    #[arg(long)]
    scratch: Option<PathBuf>,
    #[arg(long, hide = true)]
    serve_calibration: bool,
    #[arg(long, hide = true, default_value_t = 0)]
    port: u16,
}

/// Counts and durations of one mode.
#[derive(Debug, Clone)]
struct Params {
    warmup: Duration,
    duration: Duration,
    repeat: usize,
    conns: usize,
    w1_cap: u64,
    w3_send_cap: u64,
    w2a_backlog: u64,
    w4_groups: u32,
    w5_samples: usize,
    w5_parked: usize,
    w5_idle: Duration,
    w7_conns: usize,
    w7_msgs: u64,
    w7_duration: Duration,
    w8_n: u64,
    w8_restarts: usize,
    startup_reps: usize,
    moto_n: u64,
    moto_cap: Duration,
    fsync_cal: Duration,
}

impl Params {
    fn new(a: &Args) -> Params {
        let quick = a.quick;
        let secs = a.duration.unwrap_or(if quick { 1.0 } else { 5.0 });
        Params {
            warmup: Duration::from_millis(if quick { 250 } else { 1000 }),
            duration: Duration::from_secs_f64(secs.clamp(0.2, 60.0)),
            repeat: a.repeat.unwrap_or(if quick { 1 } else { 3 }).clamp(1, 20),
            conns: 64,
            w1_cap: if quick { 50_000 } else { 200_000 },
            w3_send_cap: if quick { 150_000 } else { 500_000 },
            w2a_backlog: if quick { 5_000 } else { 100_000 },
            w4_groups: 10_000,
            w5_samples: if quick { 40 } else { 200 },
            w5_parked: if quick { 200 } else { 1000 },
            w5_idle: Duration::from_secs(if quick { 2 } else { 10 }),
            w7_conns: if quick { 4 } else { 8 },
            w7_msgs: if quick { 40 } else { 2048 },
            w7_duration: Duration::from_secs(if quick { 5 } else { 10 }),
            w8_n: a
                .w8_messages
                .unwrap_or(if quick { 20_000 } else { 1_000_000 })
                .clamp(100, 10_000_000),
            w8_restarts: if quick { 1 } else { 3 },
            startup_reps: if quick { 1 } else { 5 },
            moto_n: if quick { 50 } else { 1000 },
            moto_cap: Duration::from_secs(if quick { 10 } else { 30 }),
            fsync_cal: Duration::from_millis(if quick { 500 } else { 2000 }),
        }
    }
}

fn v_w1(p: Proto, c: usize) -> String {
    format!("SendMessage {} c{c}", p.name())
}
fn v_w2(p: Proto, c: usize) -> String {
    format!("send→receive→delete {} c{c}", p.name())
}
const V_W2A: &str = "drain backlog, Receive(1)+Delete json c64";
const V_W3: &str = "batch 10 send→receive→delete json c64";
const V_W3S: &str = "SendMessageBatch(10) only json c64";
fn v_w4(groups: u32, content: bool) -> String {
    format!(
        "FIFO {groups} groups{} send→receive→delete json c64",
        if content { ", content dedup" } else { "" }
    )
}
const V_W5: &str = "wake latency, 1 parked receiver, json";
const V_W5IDLE: &str = "idle round trip, 1 SendMessage per 50 ms, json";
const V_W5P: &str = "parked long polls, idle";
const V_W7: &str = "1 MiB send→receive→delete json";
const V_W8: &str = "200 B backlog, durable";
const V_W8M: &str = "200 B backlog, in memory";
const V_W11: &str = "durable SendMessage json c64";
const V_W11P: &str = "durable send→receive→delete json c64";
const V_W11B: &str = "durable batch 10 send→receive→delete json c64";
const T_SELF: &str = "localsqs";
const T_CAL: &str = "calibration";
const T_MOTO: &str = "moto";

struct Bench {
    args: Args,
    p: Params,
    root: PathBuf,
    scratch: PathBuf,
    logs: PathBuf,
    bin: PathBuf,
    base: Instant,
    book: Book,
    problems: Vec<String>,
    notes: Vec<String>,
    fatal: bool,
    moto_bin: Option<PathBuf>,
}

impl Bench {
    fn want(&self, w: &str) -> bool {
        self.args.only.is_empty() || self.args.only.iter().any(|o| o.eq_ignore_ascii_case(w))
    }

    /// The protocols W1 and W2 run in.
    fn protocols(&self) -> Vec<Proto> {
        match self.args.protocol.as_deref() {
            Some("json") => vec![Proto::Json],
            Some("query") => vec![Proto::Query],
            _ => vec![Proto::Json, Proto::Query],
        }
    }

    fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.log"))
    }

    /// Files problems under localsqs (fatal) or moto (a note).
    fn file(&mut self, what: &str, kind: Kind, problems: Vec<String>) {
        for p in problems {
            if kind == Kind::Moto {
                self.notes.push(format!("moto, {what}: {p}"));
            } else {
                eprintln!("VIOLATION [{what}] {}: {p}", kind.name());
                self.problems.push(format!("[{what}] {}: {p}", kind.name()));
            }
        }
    }

    fn check_alive(&mut self, s: &mut Server, during: &str) {
        if !self.fatal && s.kind != Kind::Moto && !s.alive() {
            let msg = format!(
                "[{during}] {} exited unexpectedly (crash):\n{}",
                s.kind.name(),
                s.log_tail()
            );
            eprintln!("VIOLATION {msg}");
            self.problems.push(msg);
            self.fatal = true;
        }
    }

    async fn spawn_localsqs(
        &mut self,
        name: &str,
        data_dir: Option<&Path>,
    ) -> Result<Server, String> {
        let mut args = Vec::new();
        if let Some(d) = data_dir {
            let _ = std::fs::remove_dir_all(d);
            args.push("--data-dir".to_owned());
            args.push(d.display().to_string());
        }
        let s = Server::spawn(Kind::Localsqs, &self.bin, &args, self.log(name))?;
        special::wait_ready(&s, Proto::Json, Duration::from_secs(30)).await?;
        Ok(s)
    }

    /// One closed-loop run, recorded as a sample; returns its metrics.
    async fn cell(
        &mut self,
        workload: &str,
        variant: &str,
        t: Tgt,
        cfg: Cfg,
        repeat: usize,
    ) -> Option<Metrics> {
        if self.fatal {
            return None;
        }
        eprintln!(
            "[{:6.1}s]   {workload} {variant} → {} (repeat {})",
            self.base.elapsed().as_secs_f64(),
            t.kind.name(),
            repeat + 1
        );
        match run::run(t, cfg, None, Arc::new(Progress::default()), self.base).await {
            Ok(o) => {
                self.file(&format!("{workload} {variant}"), t.kind, o.problems);
                self.book
                    .add(workload, variant, t.kind.name(), repeat, o.metrics.clone());
                Some(o.metrics)
            }
            Err(e) => {
                self.file(&format!("{workload} {variant}"), t.kind, vec![e]);
                None
            }
        }
    }

    fn cfg(&self, proto: Proto, mode: Mode) -> Cfg {
        let mut c = Cfg::new(proto, self.p.conns, mode);
        c.warmup = self.p.warmup;
        c.duration = self.p.duration;
        c
    }

    /// moto gets 8 connections whatever the workload's count: its GIL makes it no faster
    /// from 1 to 8 threads (§3.1) and at 64 its receives pass 30 s, so 8 is its best case
    /// and the ratios are conservative.
    fn moto_cfg(&self, mut c: Cfg) -> Cfg {
        c.conns = c.conns.min(8);
        c.warmup = Duration::ZERO;
        c.duration = self.p.moto_cap;
        c.max_msgs = self.p.moto_n;
        c
    }

    fn ratio(
        &mut self,
        w: &str,
        v: &str,
        r: usize,
        num: Option<&Metrics>,
        den: Option<&Metrics>,
        name: &str,
    ) {
        let get = |m: Option<&Metrics>, k: &str| m.and_then(|m| m.get(k).copied());
        if let (Some(a), Some(b)) = (get(num, "msgs_per_s"), get(den, "msgs_per_s"))
            && b > 0.0
        {
            let mut m = Metrics::new();
            m.insert("ratio".into(), a / b);
            if let (Some(ca), Some(cb)) = (
                get(num, "server_cpu_us_per_msg"),
                get(den, "server_cpu_us_per_msg"),
            ) && ca > 0.0
            {
                // Server CPU per message of the reference over ours.
                m.insert("cpu_per_msg_ratio".into(), cb / ca);
            }
            self.book.add(w, v, name, r, m);
        }
    }

    async fn repeat_round(
        &mut self,
        r: usize,
        own: &mut Server,
        cal: Option<&mut Server>,
        moto: Option<&mut Server>,
        durable: Option<&mut Server>,
    ) {
        let me = Tgt::of(own);
        let cal_t = cal.as_ref().map(|s| Tgt::of(s));
        let moto_t = moto.as_ref().map(|s| Tgt::of(s));
        let c = self.p.conns;
        let mut w1_json = None;
        // W1: SendMessage at 64 connections, both protocols, against calibration, self, moto.
        if self.want("W1") {
            for proto in self.protocols() {
                let v = v_w1(proto, c);
                let mut cfg = self.cfg(proto, Mode::SendOnly);
                cfg.track = false;
                cfg.max_msgs = self.p.w1_cap;
                let cal_m = match cal_t {
                    Some(t) => self.cell("W1", &v, t, cfg.clone(), r).await,
                    None => None,
                };
                let self_m = self.cell("W1", &v, me, cfg.clone(), r).await;
                self.ratio(
                    "W1",
                    &v,
                    r,
                    self_m.as_ref(),
                    cal_m.as_ref(),
                    "localsqs/calibration",
                );
                if proto == Proto::Json {
                    w1_json.clone_from(&self_m);
                    if let Some(t) = moto_t.filter(|_| self.want("moto")) {
                        let moto_m = self.cell("W1", &v, t, self.moto_cfg(cfg), r).await;
                        self.ratio(
                            "W1",
                            &v,
                            r,
                            self_m.as_ref(),
                            moto_m.as_ref(),
                            "localsqs/moto",
                        );
                    }
                }
            }
        }
        // W1 at one connection: the round-trip floor of this machine and harness.
        if self.want("W1") || self.want("W1c1") {
            let v = v_w1(Proto::Json, 1);
            let mut cfg = self.cfg(Proto::Json, Mode::SendOnly);
            cfg.conns = 1;
            cfg.track = false;
            cfg.duration = self.p.duration.min(Duration::from_secs(2));
            cfg.max_msgs = self.p.w1_cap;
            let cal_m = match cal_t {
                Some(t) => self.cell("W1", &v, t, cfg.clone(), r).await,
                None => None,
            };
            let self_m = self.cell("W1", &v, me, cfg, r).await;
            self.ratio(
                "W1",
                &v,
                r,
                self_m.as_ref(),
                cal_m.as_ref(),
                "localsqs/calibration",
            );
        }
        self.check_alive(own, "W1");
        // W2: send → receive → delete pipeline.
        let mut w2_json = None;
        if self.want("W2") {
            for proto in self.protocols() {
                let v = v_w2(proto, c);
                let cfg = self.cfg(proto, Mode::Pipeline);
                let self_m = self.cell("W2", &v, me, cfg.clone(), r).await;
                if proto == Proto::Json {
                    w2_json.clone_from(&self_m);
                    if let Some(t) = moto_t.filter(|_| self.want("moto")) {
                        let moto_m = self.cell("W2", &v, t, self.moto_cfg(cfg), r).await;
                        self.ratio(
                            "W2",
                            &v,
                            r,
                            self_m.as_ref(),
                            moto_m.as_ref(),
                            "localsqs/moto",
                        );
                    }
                }
            }
        }
        self.check_alive(own, "W2");
        // W3: batches of 10.
        if self.want("W3") {
            let mut cfg = self.cfg(Proto::Json, Mode::Pipeline);
            cfg.batch = 10;
            let self_m = self.cell("W3", V_W3, me, cfg.clone(), r).await;
            if let Some(t) = moto_t.filter(|_| self.want("moto")) {
                let moto_m = self.cell("W3", V_W3, t, self.moto_cfg(cfg), r).await;
                self.ratio(
                    "W3",
                    V_W3,
                    r,
                    self_m.as_ref(),
                    moto_m.as_ref(),
                    "localsqs/moto",
                );
            }
            let mut cfg = self.cfg(Proto::Json, Mode::SendOnly);
            cfg.batch = 10;
            cfg.track = false;
            cfg.max_msgs = self.p.w3_send_cap;
            self.cell("W3", V_W3S, me, cfg, r).await;
        }
        self.check_alive(own, "W3");
        // W4: FIFO, 10k groups, order verified.
        if self.want("W4") {
            let mut cfg = self.cfg(Proto::Json, Mode::Pipeline);
            cfg.fifo = Some(Fifo {
                groups: self.p.w4_groups,
                content_dedup: false,
            });
            let v = v_w4(self.p.w4_groups, false);
            let m = self.cell("W4", &v, me, cfg, r).await;
            self.ratio("W4", &v, r, m.as_ref(), w2_json.as_ref(), "W4/W2");
        }
        self.check_alive(own, "W4");
        // W5: long-poll wake latency and parked polls.
        if self.want("W5") && !self.fatal {
            eprintln!(
                "[{:6.1}s]   W5 {V_W5} (repeat {})",
                self.base.elapsed().as_secs_f64(),
                r + 1
            );
            match special::long_poll_latency(
                me,
                Proto::Json,
                self.p.w5_samples,
                Duration::from_millis(50),
                self.base,
            )
            .await
            {
                Ok((m, probs)) => {
                    self.file("W5 wake latency", Kind::Localsqs, probs);
                    self.book.add("W5", V_W5, T_SELF, r, m);
                }
                Err(e) => self.file("W5 wake latency", Kind::Localsqs, vec![e]),
            }
            // The reference: an idle round trip (same 50 ms spacing) to the calibration server
            // and to localsqs.
            let mut targets = vec![me];
            targets.extend(cal_t);
            for t in targets {
                match special::idle_round_trip(
                    t,
                    Proto::Json,
                    (self.p.w5_samples / 2).max(10),
                    Duration::from_millis(50),
                )
                .await
                {
                    Ok((m, probs)) => {
                        self.file("W5 idle round trip", t.kind, probs);
                        self.book.add("W5", V_W5IDLE, t.kind.name(), r, m);
                    }
                    Err(e) => self.file("W5 idle round trip", t.kind, vec![e]),
                }
            }
            let limit = procfs::open_files_limit();
            let parked = self
                .p
                .w5_parked
                .min(usize::try_from(limit.saturating_sub(200)).unwrap_or(0));
            if parked < self.p.w5_parked {
                self.notes.push(format!(
                    "W5: open-file limit {limit} allows only {parked} parked polls"
                ));
            }
            eprintln!(
                "[{:6.1}s]   W5 {parked} {V_W5P} (repeat {})",
                self.base.elapsed().as_secs_f64(),
                r + 1
            );
            match special::parked_polls(me, Proto::Json, parked, self.p.w5_idle, self.base).await {
                Ok((m, probs)) => {
                    self.file("W5 parked polls", Kind::Localsqs, probs);
                    self.book.add("W5", V_W5P, T_SELF, r, m);
                }
                Err(e) => self.file("W5 parked polls", Kind::Localsqs, vec![e]),
            }
        }
        self.check_alive(own, "W5");
        // W7: 1 MiB messages, fresh server so that VmHWM is this workload's.
        if self.want("W7") && self.args.endpoint.is_none() && !self.fatal {
            self.w7(r).await;
        }
        // W11: durable SendMessage.
        if let Some(d) = durable
            && self.want("W11")
        {
            let mut cfg = self.cfg(Proto::Json, Mode::SendOnly);
            cfg.track = false;
            cfg.max_msgs = self.p.w1_cap;
            let m = self.cell("W11", V_W11, Tgt::of(d), cfg, r).await;
            self.ratio(
                "W11",
                V_W11,
                r,
                m.as_ref(),
                w1_json.as_ref(),
                "durable/memory",
            );
            self.check_alive(d, "W11");
        }
    }

    async fn w7(&mut self, r: usize) {
        let mut s = match self.spawn_localsqs(&format!("w7-{r}"), None).await {
            Ok(s) => s,
            Err(e) => {
                self.file("W7", Kind::Localsqs, vec![e]);
                return;
            }
        };
        let idle = procfs::rss_mib(s.pid);
        let size = 1usize << 20;
        let mut cfg = Cfg::new(Proto::Json, self.p.w7_conns, Mode::Pipeline);
        cfg.warmup = self.p.warmup;
        cfg.duration = self.p.w7_duration;
        cfg.max_msgs = self.p.w7_msgs;
        cfg.body_len = size;
        cfg.attrs = vec![("MaximumMessageSize", size.to_string())];
        cfg.timeout = Duration::from_secs(60);
        let v = format!("{V_W7} c{}", self.p.w7_conns);
        if let Some(mut m) = self.cell("W7", &v, Tgt::of(&s), cfg, r).await {
            let hwm = m.get("hwm_mib").copied().unwrap_or(f64::NAN);
            let at25 = m.get("hwm_at_25pct_mib").copied().unwrap_or(f64::NAN);
            let c_x_size = self.p.w7_conns as f64 * size as f64 / 1048576.0;
            m.insert("idle_rss_mib".into(), idle);
            m.insert("hwm_growth_after_25pct_mib".into(), hwm - at25);
            m.insert("c_x_size_mib".into(), c_x_size);
            m.insert(
                "peak_over_idle_per_c_x_size".into(),
                (hwm - idle) / c_x_size,
            );
            m.insert(
                "volume_mib".into(),
                m.get("msgs_total").copied().unwrap_or(0.0) * size as f64 / 1048576.0,
            );
            if let Some(last) = self.book.samples.last_mut() {
                last.metrics = m;
            }
        }
        self.check_alive(&mut s, "W7");
        s.terminate(Duration::from_secs(30));
    }

    async fn once(
        &mut self,
        own: &mut Server,
        moto: Option<&mut Server>,
        durable: Option<&mut Server>,
    ) {
        let me = Tgt::of(own);
        // W2a: drain a preloaded backlog with Receive(Max=1) + Delete.
        if self.want("W2a") && !self.fatal {
            eprintln!(
                "[{:6.1}s]   W2a {V_W2A} ({} messages)",
                self.base.elapsed().as_secs_f64(),
                self.p.w2a_backlog
            );
            let mut load = Cfg::new(Proto::Json, 8, Mode::SendOnly);
            load.batch = 10;
            load.warmup = Duration::ZERO;
            load.duration = Duration::from_secs(60);
            load.max_msgs = self.p.w2a_backlog;
            load.delete_queue = false;
            let res = async {
                let l = run::run(me, load, None, Arc::new(Progress::default()), self.base).await?;
                let mut d = Cfg::new(Proto::Json, self.p.conns, Mode::Drain);
                d.warmup = Duration::ZERO;
                d.duration = Duration::from_secs(60);
                d.drain_after = false;
                let o = run::run(
                    me,
                    d,
                    Some(l.url.clone()),
                    Arc::new(Progress::default()),
                    self.base,
                )
                .await?;
                let mut probs = l.problems;
                probs.extend(o.problems);
                probs.extend(run::verify(&l.sent, &o.received, true));
                Ok::<_, String>((o.metrics, probs))
            }
            .await;
            match res {
                Ok((m, probs)) => {
                    self.file("W2a", Kind::Localsqs, probs);
                    self.book.add("W2a", V_W2A, T_SELF, 0, m);
                }
                Err(e) => self.file("W2a", Kind::Localsqs, vec![e]),
            }
            self.check_alive(own, "W2a");
        }
        // W4 variants (informational).
        if self.want("W4") && !self.args.quick {
            for (groups, content) in [(100, false), (self.p.w4_groups, true)] {
                let mut cfg = self.cfg(Proto::Json, Mode::Pipeline);
                cfg.fifo = Some(Fifo {
                    groups,
                    content_dedup: content,
                });
                self.cell("W4", &v_w4(groups, content), me, cfg, 0).await;
            }
            self.check_alive(own, "W4");
        }
        // W11 informational: durable pipeline and batches, and fsyncs per message.
        if let Some(d) = durable
            && self.want("W11")
        {
            let dt = Tgt::of(d);
            let cfg = self.cfg(Proto::Json, Mode::Pipeline);
            self.cell("W11", V_W11P, dt, cfg, 0).await;
            let mut cfg = self.cfg(Proto::Json, Mode::Pipeline);
            cfg.batch = 10;
            self.cell("W11", V_W11B, dt, cfg, 0).await;
            if !self.fatal {
                self.fsyncs(dt).await;
            }
            self.check_alive(d, "W11");
        }
        // moto: W5 wake latency, 40 samples.
        if let Some(m) = moto
            && self.want("moto")
            && self.want("W5")
        {
            eprintln!(
                "[{:6.1}s]   W5 {V_W5} → moto",
                self.base.elapsed().as_secs_f64()
            );
            match special::long_poll_latency(
                Tgt::of(m),
                Proto::Json,
                if self.args.quick { 10 } else { 40 },
                Duration::from_millis(50),
                self.base,
            )
            .await
            {
                Ok((met, probs)) => {
                    self.file("W5", Kind::Moto, probs);
                    self.book.add("W5", V_W5, T_MOTO, 0, met);
                }
                Err(e) => self.file("W5", Kind::Moto, vec![e]),
            }
        }
    }

    /// fsyncs per message of the durable server during a 3 s SendMessage run (strace -c).
    async fn fsyncs(&mut self, t: Tgt) {
        let mut cfg = self.cfg(Proto::Json, Mode::SendOnly);
        cfg.track = false;
        cfg.warmup = Duration::ZERO;
        cfg.duration = Duration::from_secs(if self.args.quick { 2 } else { 5 });
        let progress = Arc::new(Progress::default());
        let pr = Arc::clone(&progress);
        let base = self.base;
        let load = tokio::spawn(async move { run::run(t, cfg, None, pr, base).await });
        tokio::time::sleep(Duration::from_millis(500)).await;
        let a0 = progress.acked.load(std::sync::atomic::Ordering::Relaxed);
        let secs = if self.args.quick { 1 } else { 3 };
        let fs = tokio::task::spawn_blocking(move || special::count_fsyncs(t.pid, secs))
            .await
            .ok()
            .flatten();
        let a1 = progress.acked.load(std::sync::atomic::Ordering::Relaxed);
        match load.await {
            Ok(Ok(o)) => self.file("W11 fsync count", Kind::Localsqs, o.problems),
            Ok(Err(e)) => self.file("W11 fsync count", Kind::Localsqs, vec![e]),
            Err(e) => self.file("W11 fsync count", Kind::Localsqs, vec![e.to_string()]),
        }
        match fs {
            Some(n) if a1 > a0 => {
                let mut m = Metrics::new();
                m.insert("fsyncs".into(), n as f64);
                m.insert("msgs_while_traced".into(), (a1 - a0) as f64);
                m.insert("fsyncs_per_msg".into(), n as f64 / (a1 - a0) as f64);
                m.insert(
                    "msgs_per_fsync".into(),
                    (a1 - a0) as f64 / (n.max(1)) as f64,
                );
                self.book.add(
                    "W11",
                    "fsyncs under strace -c, SendMessage c64",
                    T_SELF,
                    0,
                    m,
                );
            }
            _ => self
                .notes
                .push("W11: fsync count unavailable (strace missing or refused)".into()),
        }
    }

    async fn w8(&mut self) {
        if self.fatal {
            return;
        }
        eprintln!(
            "[{:6.1}s]   W8 {V_W8} ({} messages)",
            self.base.elapsed().as_secs_f64(),
            self.p.w8_n
        );
        let b = special::Backlog {
            bin: &self.bin,
            dir: self.scratch.join("w8-data"),
            logs: self.logs.clone(),
            n: self.p.w8_n,
            restarts: self.p.w8_restarts,
            quick: self.args.quick,
        };
        match special::backlog(&b, self.base).await {
            Ok((m, probs)) => {
                self.file("W8", Kind::Localsqs, probs);
                self.book.add("W8", V_W8, T_SELF, 0, m);
            }
            Err(e) => self.file("W8", Kind::Localsqs, vec![e]),
        }
        // The same backlog in memory: RSS only.
        if !self.args.quick && !self.fatal {
            eprintln!("[{:6.1}s]   W8 {V_W8M}", self.base.elapsed().as_secs_f64());
            let mut s = match self.spawn_localsqs("w8-memory", None).await {
                Ok(s) => s,
                Err(e) => {
                    self.file("W8 memory", Kind::Localsqs, vec![e]);
                    return;
                }
            };
            let mut cfg = Cfg::new(Proto::Json, 16, Mode::SendOnly);
            cfg.batch = 10;
            cfg.warmup = Duration::ZERO;
            cfg.duration = Duration::from_secs(120);
            cfg.max_msgs = self.p.w8_n;
            cfg.track = false;
            cfg.delete_queue = false;
            match run::run(
                Tgt::of(&s),
                cfg,
                None,
                Arc::new(Progress::default()),
                self.base,
            )
            .await
            {
                Ok(o) => {
                    self.file("W8 memory", Kind::Localsqs, o.problems);
                    let mut m = Metrics::new();
                    for k in [
                        "msgs_total",
                        "msgs_per_s",
                        "hwm_mib",
                        "rss_mib",
                        "server_cpu_us_per_msg",
                    ] {
                        if let Some(v) = o.metrics.get(k) {
                            m.insert(k.into(), *v);
                        }
                    }
                    self.book.add("W8", V_W8M, T_SELF, 0, m);
                }
                Err(e) => self.file("W8 memory", Kind::Localsqs, vec![e]),
            }
            self.check_alive(&mut s, "W8 memory");
            s.terminate(Duration::from_secs(30));
        }
    }

    async fn startup(&mut self) {
        for (variant, durable) in [("memory", false), ("durable, empty data dir", true)] {
            for i in 0..self.p.startup_reps {
                if self.fatal {
                    return;
                }
                let dir = self.scratch.join(format!("startup-{i}"));
                let _ = std::fs::remove_dir_all(&dir);
                let log = self.log(&format!("startup-{variant}-{i}").replace([' ', ','], "_"));
                let settle = Duration::from_millis(if self.args.quick { 200 } else { 500 });
                match special::startup(&self.bin, durable.then_some(dir.as_path()), log, settle)
                    .await
                {
                    Ok(m) => self.book.add("startup", variant, T_SELF, i, m),
                    Err(e) => self.file("startup", Kind::Localsqs, vec![e]),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

fn parse_endpoint(url: &str) -> Result<std::net::SocketAddr, String> {
    let hostport = url
        .strip_prefix("http://")
        .unwrap_or(url)
        .trim_end_matches('/');
    let hostport = hostport.replace("localhost", "127.0.0.1");
    let addr: std::net::SocketAddr = hostport
        .parse()
        .map_err(|_| format!("--endpoint {url}: expected http://127.0.0.1:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--endpoint {url}: only loopback endpoints are allowed"
        ));
    }
    Ok(addr)
}

/// What a target asks of a median.
#[derive(Debug, Clone, Copy)]
enum Goal {
    /// Shown for context; always "met".
    Context,
    AtLeast(f64),
    Below(f64),
    AtMost(f64),
}

impl Goal {
    fn met(self, x: f64) -> bool {
        match self {
            Goal::Context => true,
            Goal::AtLeast(t) => x >= t,
            Goal::Below(t) => x < t,
            Goal::AtMost(t) => x <= t,
        }
    }
}

/// One row of the targets table: (workload label, metric label, cell, metric, unit, target
/// text, goal), where a cell is (workload id, variant, target).
type Row<'a> = (
    &'a str,
    &'a str,
    (&'a str, String, &'a str),
    &'a str,
    &'a str,
    String,
    Goal,
);

fn checks(b: &Book, problems: &[String], p: &Params) -> Vec<Check> {
    let c = p.conns;
    let (v1, q1, c1) = (
        v_w1(Proto::Json, c),
        v_w1(Proto::Query, c),
        v_w1(Proto::Json, 1),
    );
    let (v2, q2) = (v_w2(Proto::Json, c), v_w2(Proto::Query, c));
    let v4 = v_w4(p.w4_groups, false);
    let v7 = format!("{V_W7} c{}", p.w7_conns);
    let n8 = if p.w8_n >= 1_000_000 {
        format!("{}M", p.w8_n / 1_000_000)
    } else {
        p.w8_n.to_string()
    };
    let w8 = format!("W8 {n8} × 200 B backlog (durable)");
    let ctx = || "(context)".to_owned();
    let w1 = "W1 SendMessage, 64 connections (json)";
    let w1q = "W1 SendMessage, 64 connections (query)";
    let w1c1 = "W1 SendMessage, 1 connection (json)";
    let w3 = "W3 batch of 10 (json, c64)";
    let w4 = "W4 FIFO, 10k groups (json, c64)";
    let w5 = "W5 long-poll wake";
    let w7 = "W7 1 MiB messages";
    let w11 = "W11 durable SendMessage, 64 connections";
    let rows: Vec<Row<'_>> = vec![
        (
            w1,
            "localsqs msgs/s",
            ("W1", v1.clone(), T_SELF),
            "msgs_per_s",
            "",
            ctx(),
            Goal::Context,
        ),
        (
            w1,
            "calibration server req/s",
            ("W1", v1.clone(), T_CAL),
            "msgs_per_s",
            "",
            "(context; loadgen ≥ 30,000)".into(),
            Goal::AtLeast(30_000.0),
        ),
        (
            w1,
            "localsqs / calibration",
            ("W1", v1.clone(), "localsqs/calibration"),
            "ratio",
            "×",
            "≥ 0.60".into(),
            Goal::AtLeast(0.6),
        ),
        (
            w1,
            "p99",
            ("W1", v1.clone(), T_SELF),
            "p99_ms",
            " ms",
            "< 10 ms".into(),
            Goal::Below(10.0),
        ),
        (
            w1q,
            "localsqs / calibration",
            ("W1", q1.clone(), "localsqs/calibration"),
            "ratio",
            "×",
            "≥ 0.60".into(),
            Goal::AtLeast(0.6),
        ),
        (
            w1q,
            "p99",
            ("W1", q1, T_SELF),
            "p99_ms",
            " ms",
            "< 10 ms".into(),
            Goal::Below(10.0),
        ),
        (
            w1c1,
            "p50 round trip, localsqs",
            ("W1", c1.clone(), T_SELF),
            "p50_ms",
            " ms",
            ctx(),
            Goal::Context,
        ),
        (
            w1c1,
            "p50 round trip, calibration server",
            ("W1", c1, T_CAL),
            "p50_ms",
            " ms",
            ctx(),
            Goal::Context,
        ),
        (
            "W2 send→receive→delete (json, c64)",
            "msgs/s",
            ("W2", v2.clone(), T_SELF),
            "msgs_per_s",
            "",
            "≥ 10,000".into(),
            Goal::AtLeast(10_000.0),
        ),
        (
            "W2 send→receive→delete (query, c64)",
            "msgs/s",
            ("W2", q2, T_SELF),
            "msgs_per_s",
            "",
            "≥ 10,000".into(),
            Goal::AtLeast(10_000.0),
        ),
        (
            w3,
            "end-to-end msgs/s",
            ("W3", V_W3.into(), T_SELF),
            "msgs_per_s",
            "",
            "≥ 50,000".into(),
            Goal::AtLeast(50_000.0),
        ),
        (
            w3,
            "SendMessageBatch alone msgs/s",
            ("W3", V_W3S.into(), T_SELF),
            "msgs_per_s",
            "",
            "≥ 100,000".into(),
            Goal::AtLeast(100_000.0),
        ),
        (
            w4,
            "msgs/s",
            ("W4", v4.clone(), T_SELF),
            "msgs_per_s",
            "",
            ctx(),
            Goal::Context,
        ),
        (
            w4,
            "W4 / W2",
            ("W4", v4.clone(), "W4/W2"),
            "ratio",
            "×",
            "≥ 0.50".into(),
            Goal::AtLeast(0.5),
        ),
        (
            w5,
            "p50 idle round trip, calibration server",
            ("W5", V_W5IDLE.into(), T_CAL),
            "p50_ms",
            " ms",
            "(context: floor)".into(),
            Goal::Context,
        ),
        (
            w5,
            "p50 idle round trip, localsqs SendMessage",
            ("W5", V_W5IDLE.into(), T_SELF),
            "p50_ms",
            " ms",
            ctx(),
            Goal::Context,
        ),
        (
            w5,
            "p50",
            ("W5", V_W5.into(), T_SELF),
            "p50_ms",
            " ms",
            "< 0.5 ms".into(),
            Goal::Below(0.5),
        ),
        (
            w5,
            "p99",
            ("W5", V_W5.into(), T_SELF),
            "p99_ms",
            " ms",
            "< 2 ms".into(),
            Goal::Below(2.0),
        ),
        (
            w5,
            "CPU of the parked polls",
            ("W5", V_W5P.into(), T_SELF),
            "idle_cpu_pct_core",
            "% of a core",
            format!("< 1% of a core ({} parked)", p.w5_parked),
            Goal::Below(1.0),
        ),
        (
            w7,
            "MB/s",
            ("W7", v7.clone(), T_SELF),
            "mb_per_s",
            " MB/s",
            "≥ 200 MB/s".into(),
            Goal::AtLeast(200.0),
        ),
        (
            w7,
            "peak RSS (VmHWM)",
            ("W7", v7.clone(), T_SELF),
            "hwm_mib",
            " MiB",
            ctx(),
            Goal::Context,
        ),
        (
            w7,
            "VmHWM growth over the last 75% of the volume",
            ("W7", v7, T_SELF),
            "hwm_growth_after_25pct_mib",
            " MiB",
            format!(
                "≤ c × size = {} MiB (bounded by concurrency, not volume)",
                p.w7_conns
            ),
            Goal::AtMost(p.w7_conns as f64),
        ),
        (
            &w8,
            "peak RSS during load",
            ("W8", V_W8.into(), T_SELF),
            "load_hwm_mib",
            " MiB",
            "< 300 MiB".into(),
            Goal::Below(300.0),
        ),
        (
            &w8,
            "peak RSS after restart and drain",
            ("W8", V_W8.into(), T_SELF),
            "hwm_mib",
            " MiB",
            "< 300 MiB".into(),
            Goal::Below(300.0),
        ),
        (
            &w8,
            "bytes/message on disk",
            ("W8", V_W8.into(), T_SELF),
            "disk_bytes_per_msg",
            " B",
            "≤ 400 B".into(),
            Goal::AtMost(400.0),
        ),
        (
            &w8,
            "first receive after clean restart",
            ("W8", V_W8.into(), T_SELF),
            "restart_clean_first_receive_ms",
            " ms",
            "< 2,000 ms".into(),
            Goal::Below(2000.0),
        ),
        (
            &w8,
            "first receive after kill -9",
            ("W8", V_W8.into(), T_SELF),
            "restart_kill9_first_receive_ms",
            " ms",
            "< 2,000 ms".into(),
            Goal::Below(2000.0),
        ),
        (
            w11,
            "msgs/s",
            ("W11", V_W11.into(), T_SELF),
            "msgs_per_s",
            "",
            "≥ 15,000".into(),
            Goal::AtLeast(15_000.0),
        ),
        (
            w11,
            "durable / in-memory",
            ("W11", V_W11.into(), "durable/memory"),
            "ratio",
            "×",
            "≥ 0.50".into(),
            Goal::AtLeast(0.5),
        ),
        (
            "Startup (in memory)",
            "exec → first answered request",
            ("startup", "memory".into(), T_SELF),
            "startup_ms",
            " ms",
            "< 50 ms".into(),
            Goal::Below(50.0),
        ),
        (
            "Startup (durable, empty dir)",
            "exec → first answered request",
            ("startup", "durable, empty data dir".into(), T_SELF),
            "startup_ms",
            " ms",
            "< 50 ms".into(),
            Goal::Below(50.0),
        ),
        (
            "Startup (in memory)",
            "idle RSS",
            ("startup", "memory".into(), T_SELF),
            "idle_rss_mib",
            " MiB",
            "< 15 MiB".into(),
            Goal::Below(15.0),
        ),
        (
            "Startup (durable, empty dir)",
            "idle RSS",
            ("startup", "durable, empty data dir".into(), T_SELF),
            "idle_rss_mib",
            " MiB",
            "< 15 MiB".into(),
            Goal::Below(15.0),
        ),
        (
            "Against moto: W1",
            "localsqs / moto msgs/s",
            ("W1", v1, "localsqs/moto"),
            "ratio",
            "×",
            "≥ 200×".into(),
            Goal::AtLeast(200.0),
        ),
        (
            "Against moto: W2",
            "localsqs / moto msgs/s",
            ("W2", v2, "localsqs/moto"),
            "ratio",
            "×",
            "≥ 200×".into(),
            Goal::AtLeast(200.0),
        ),
        (
            "Against moto: W3",
            "localsqs / moto msgs/s",
            ("W3", V_W3.into(), "localsqs/moto"),
            "ratio",
            "×",
            "≥ 200×".into(),
            Goal::AtLeast(200.0),
        ),
    ];
    let mut out: Vec<Check> = rows
        .into_iter()
        .map(|(w, metric, (wid, v, t), m, unit, target, goal)| {
            let s = b.stat(wid, &v, t, m);
            Check {
                workload: w.into(),
                metric: metric.into(),
                value: report::show(s, unit),
                target,
                met: s.map(|s| goal.met(s.median)),
            }
        })
        .collect();
    let w4_ran = b.stat("W4", &v4, T_SELF, "msgs_total").is_some();
    let w4_bad = problems.iter().any(|x| x.starts_with("[W4"));
    let pos = out
        .iter()
        .rposition(|c| c.workload == w4)
        .map_or(out.len(), |i| i + 1);
    out.insert(
        pos,
        Check {
            workload: w4.into(),
            metric: "per-group order verified by the bench".into(),
            value: if !w4_ran {
                "not measured".into()
            } else if w4_bad {
                "violations (see below)".into()
            } else {
                "in order, none lost or duplicated".into()
            },
            target: "in order".into(),
            met: w4_ran.then_some(!w4_bad),
        },
    );
    out
}

fn build_server(root: &Path) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("localsqs-bench: cargo build --release -p localsqs --bin localsqs");
    let st = Command::new(cargo)
        .args(["build", "--release", "-p", "localsqs", "--bin", "localsqs"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("cargo build --release failed: {st}"))
    }
}

async fn bench(args: Args) -> Result<bool, String> {
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let bin = args
        .server_bin
        .clone()
        .unwrap_or_else(|| target_dir.join("release").join("localsqs"));
    if args.server_bin.is_none() && !args.no_build && args.endpoint.is_none() {
        build_server(&root)?;
    }
    if args.endpoint.is_none() && !bin.is_file() {
        return Err(format!(
            "{} not found: run `cargo build --release` or pass --server-bin",
            bin.display()
        ));
    }
    let scratch = args
        .scratch
        .clone()
        .unwrap_or_else(|| target_dir.join("localsqs-bench"));
    let logs = scratch.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let p = Params::new(&args);
    let mut env = Env::collect(&root, &bin);
    env.mode = if args.quick {
        "quick".into()
    } else {
        "full".into()
    };
    env.repeats = p.repeat;
    env.duration_s = p.duration.as_secs_f64();
    env.data_dir_fs = procfs::fs_type(&scratch);
    env.load1_before = procfs::load1();
    let (tot0, steal0) = procfs::cpu_totals();
    env.fsync_per_s = special::fsync_calibration(&scratch, p.fsync_cal).unwrap_or(f64::NAN);
    let moto_bin = if args.no_moto {
        None
    } else {
        args.moto.clone().or_else(|| find_on_path("moto_server"))
    };
    env.moto = match &moto_bin {
        Some(m) => format!("moto_server at {}", m.display()),
        None => "moto_server not found (moto comparison skipped)".into(),
    };
    eprintln!(
        "localsqs-bench ({}): server {}, scratch {}, {} repeat(s) × {:.1} s",
        env.mode,
        bin.display(),
        scratch.display(),
        p.repeat,
        p.duration.as_secs_f64()
    );
    let mut b = Bench {
        args,
        p,
        root: root.clone(),
        scratch,
        logs,
        bin,
        base: Instant::now(),
        book: Book::default(),
        problems: Vec::new(),
        notes: Vec::new(),
        fatal: false,
        moto_bin,
    };
    if env.data_dir_fs == "tmpfs" {
        b.notes
            .push("the scratch directory is on tmpfs: durable figures are not meaningful".into());
    }

    if b.args.endpoint.is_none() && b.want("startup") {
        eprintln!("startup");
        b.startup().await;
    }

    // Servers shared by the repeated workloads.
    let mut own = match &b.args.endpoint {
        Some(url) => {
            let addr = parse_endpoint(url)?;
            // A stand-in Server record for an external process (never killed: pid 0 is not ours).
            ExternalOrOwned::External(Tgt {
                kind: Kind::Localsqs,
                addr,
                pid: b.args.endpoint_pid.unwrap_or(0),
            })
        }
        None => ExternalOrOwned::Owned(b.spawn_localsqs("localsqs-memory", None).await?),
    };
    let needs_cal = b.want("W1") || b.want("W1c1") || b.want("W5");
    let mut cal = if needs_cal {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let s = Server::spawn(
            Kind::Calibration,
            &exe,
            &["--serve-calibration".to_owned()],
            b.log("calibration"),
        )?;
        special::wait_ready(&s, Proto::Json, Duration::from_secs(10)).await?;
        Some(s)
    } else {
        None
    };
    let mut moto = match (&b.moto_bin, b.want("moto")) {
        (Some(m), true) => {
            let m = m.clone();
            match Server::spawn(Kind::Moto, &m, &[], b.log("moto")) {
                Ok(s) => match special::wait_ready(&s, Proto::Query, Duration::from_secs(30)).await
                {
                    Ok(t) => {
                        b.notes.push(format!(
                            "moto_server answered its first ListQueues {:.0} ms after exec; moto runs use 8 connections (its best case) and are capped at {} messages and {} s",
                            t.as_secs_f64() * 1000.0,
                            b.p.moto_n,
                            b.p.moto_cap.as_secs()
                        ));
                        Some(s)
                    }
                    Err(e) => {
                        b.notes.push(format!("moto skipped: {e}"));
                        None
                    }
                },
                Err(e) => {
                    b.notes.push(format!("moto skipped: {e}"));
                    None
                }
            }
        }
        _ => None,
    };
    let mut durable = if b.want("W11") && b.args.endpoint.is_none() {
        let dir = b.scratch.join("w11-data");
        Some(b.spawn_localsqs("localsqs-durable", Some(&dir)).await?)
    } else {
        None
    };

    for r in 0..b.p.repeat {
        if b.fatal {
            break;
        }
        eprintln!(
            "[{:6.1}s] repeat {}/{}",
            b.base.elapsed().as_secs_f64(),
            r + 1,
            b.p.repeat
        );
        let mut stand_in;
        let own_srv: &mut Server = match &mut own {
            ExternalOrOwned::Owned(s) => s,
            ExternalOrOwned::External(t) => {
                stand_in = Server::external(*t);
                &mut stand_in
            }
        };
        b.repeat_round(r, own_srv, cal.as_mut(), moto.as_mut(), durable.as_mut())
            .await;
    }
    eprintln!("[{:6.1}s] single runs", b.base.elapsed().as_secs_f64());
    {
        let mut stand_in;
        let own_srv: &mut Server = match &mut own {
            ExternalOrOwned::Owned(s) => s,
            ExternalOrOwned::External(t) => {
                stand_in = Server::external(*t);
                &mut stand_in
            }
        };
        b.once(own_srv, moto.as_mut(), durable.as_mut()).await;
    }
    if b.want("W8") && b.args.endpoint.is_none() {
        b.w8().await;
    }

    // Stop everything we started.
    eprintln!("[{:6.1}s] stopping servers", b.base.elapsed().as_secs_f64());
    if let ExternalOrOwned::Owned(s) = &mut own {
        b.check_alive(s, "end of run");
        if !s.terminate(Duration::from_secs(30)) {
            b.problems
                .push("localsqs (memory) did not exit within 30 s of SIGTERM".into());
        }
    }
    if let Some(d) = durable.as_mut() {
        b.check_alive(d, "end of run");
        if !d.terminate(Duration::from_secs(30)) {
            b.problems
                .push("localsqs (durable) did not exit within 30 s of SIGTERM".into());
        }
        let _ = std::fs::remove_dir_all(b.scratch.join("w11-data"));
    }
    if let Some(c) = cal.as_mut() {
        c.kill9();
    }
    if let Some(m) = moto.as_mut() {
        m.terminate(Duration::from_secs(5));
    }

    eprintln!("[{:6.1}s] report", b.base.elapsed().as_secs_f64());
    env.load1_after = procfs::load1();
    let (tot1, steal1) = procfs::cpu_totals();
    env.steal_pct = if tot1 > tot0 {
        (steal1 - steal0) as f64 * 100.0 / (tot1 - tot0) as f64
    } else {
        0.0
    };
    env.wall_s = started.elapsed().as_secs_f64();
    if env.load1_before > 1.5 {
        b.notes.push(format!(
            "load1 was {:.2} at the start (> 1.5): wall-clock figures are noisy (§4.6)",
            env.load1_before
        ));
    }
    if env.steal_pct > 5.0 {
        b.notes.push(format!(
            "CPU steal was {:.1}% (> 5%): noisy run",
            env.steal_pct
        ));
    }
    let checks = checks(&b.book, &b.problems, &b.p);
    let md = report::markdown(&env, &checks, &b.book, &b.problems, &b.notes, true);
    println!(
        "{}",
        report::markdown(&env, &checks, &b.book, &b.problems, &b.notes, false)
    );
    let out = b.args.out.clone().unwrap_or_else(|| {
        b.root.join("bench").join("results").join(if b.args.quick {
            "quick.json"
        } else {
            "latest.json"
        })
    });
    if let Some(dir) = out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let json = serde_json::json!({
        "env": env,
        "checks": checks,
        "summary": b.book.summary(),
        "samples": b.book.samples,
        "problems": b.problems,
        "notes": b.notes,
    });
    let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::write(out.with_extension("md"), &md);
    eprintln!(
        "localsqs-bench: wrote {} and {} in {:.0} s; {} correctness violation(s)",
        out.display(),
        out.with_extension("md").display(),
        env.wall_s,
        b.problems.len()
    );
    Ok(b.problems.is_empty())
}

enum ExternalOrOwned {
    External(Tgt),
    Owned(Server),
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.serve_calibration {
        return match http::serve_calibration(args.port) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("calibration server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("localsqs-bench: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(bench(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("localsqs-bench: FAILED (correctness violations or a crash; see above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("localsqs-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}
