//! The state every workload runs against ([`Bench`]: flags, counts, paths, the sample book, the
//! violations and notes found so far) and the servers they share ([`Servers`]), with the
//! helpers workloads use to run a cell, record a ratio and file problems.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{Args, Params};
use crate::driver::{self, Cfg, Metrics, Mode, Progress, Tgt};
use crate::http::Proto;
use crate::procfs::{Kind, Server};
use crate::report::Book;

/// Target name of samples taken against localsqs.
pub const T_SELF: &str = "localsqs";
/// Target name of samples taken against the calibration server.
pub const T_CAL: &str = "calibration";
/// Target name of the ratio localsqs / calibration server (msgs/s).
pub const R_CAL: &str = "localsqs/calibration";
/// Target name of the ratio localsqs / moto (msgs/s).
pub const R_MOTO: &str = "localsqs/moto";
/// Target name of the ratio localsqs / LocalStack (msgs/s).
pub const R_LOCALSTACK: &str = "localsqs/localstack";

/// One benchmark session.
pub struct Bench {
    pub args: Args,
    pub p: Params,
    pub root: PathBuf,
    pub scratch: PathBuf,
    pub logs: PathBuf,
    pub bin: PathBuf,
    pub base: Instant,
    pub book: Book,
    pub problems: Vec<String>,
    pub notes: Vec<String>,
    /// A crash was seen: the remaining workloads are skipped.
    pub fatal: bool,
    pub moto_bin: Option<PathBuf>,
}

/// The servers the repeated workloads share.
pub struct Servers {
    /// localsqs in memory (started here, or a stand-in for `--endpoint`).
    pub own: Server,
    pub cal: Option<Server>,
    pub moto: Option<Server>,
    /// localsqs with `--data-dir` (W11).
    pub durable: Option<Server>,
    /// A running LocalStack (`--localstack URL`).
    pub localstack: Option<Server>,
}

/// The slower reference servers W1, W2 and W3 compare against, when they run.
#[derive(Debug, Clone, Copy)]
pub struct Refs {
    pub moto: Option<Tgt>,
    pub localstack: Option<Tgt>,
}

impl Servers {
    pub fn me(&self) -> Tgt {
        Tgt::of(&self.own)
    }

    pub fn cal_t(&self) -> Option<Tgt> {
        self.cal.as_ref().map(Tgt::of)
    }

    pub fn moto_t(&self) -> Option<Tgt> {
        self.moto.as_ref().map(Tgt::of)
    }

    pub fn refs(&self) -> Refs {
        Refs {
            moto: self.moto_t(),
            localstack: self.localstack.as_ref().map(Tgt::of),
        }
    }
}

impl Bench {
    /// Whether `--only` selects workload `w` (no `--only`: every workload).
    pub fn want(&self, w: &str) -> bool {
        self.args.only.is_empty() || self.args.only.iter().any(|o| o.eq_ignore_ascii_case(w))
    }

    /// The protocols W1 and W2 run in.
    pub fn protocols(&self) -> Vec<Proto> {
        match self.args.protocol.as_deref() {
            Some("json") => vec![Proto::Json],
            Some("query") => vec![Proto::Query],
            _ => vec![Proto::Json, Proto::Query],
        }
    }

    /// Whether workloads that start their own servers may run (not with `--endpoint`).
    pub fn owns_servers(&self) -> bool {
        self.args.endpoint.is_none()
    }

    pub fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.log"))
    }

    /// Prints a progress line stamped with the time since the start.
    pub fn step(&self, what: &str) {
        eprintln!("[{:6.1}s]   {what}", self.base.elapsed().as_secs_f64());
    }

    /// Files problems under localsqs (violations) or moto (notes).
    pub fn file(&mut self, what: &str, kind: Kind, problems: Vec<String>) {
        for p in problems {
            if kind == Kind::Moto {
                self.notes.push(format!("moto, {what}: {p}"));
            } else {
                eprintln!("VIOLATION [{what}] {}: {p}", kind.name());
                self.problems.push(format!("[{what}] {}: {p}", kind.name()));
            }
        }
    }

    /// Records the metrics of a one-off measurement, or files its problems or error.
    pub fn record(
        &mut self,
        (workload, variant, target, repeat): (&str, &str, Kind, usize),
        what: &str,
        res: Result<(Metrics, Vec<String>), String>,
    ) {
        match res {
            Ok((m, probs)) => {
                self.file(what, target, probs);
                self.book.add(workload, variant, target.name(), repeat, m);
            }
            Err(e) => self.file(what, target, vec![e]),
        }
    }

    /// A crash of a localsqs or calibration server is a violation and stops the run.
    pub fn check_alive(&mut self, s: &mut Server, during: &str) {
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

    /// Starts localsqs (in memory, or on a fresh `data_dir`) and waits until it answers.
    pub async fn spawn_localsqs(
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
        driver::wait_ready(&s, Proto::Json, Duration::from_secs(30)).await?;
        Ok(s)
    }

    /// One closed-loop run, recorded as a sample; returns its metrics.
    pub async fn cell(
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
        self.step(&format!(
            "{workload} {variant} → {} (repeat {})",
            t.kind.name(),
            repeat + 1
        ));
        let res = driver::run(t, cfg, None, Arc::new(Progress::default()), self.base).await;
        self.outcome((workload, variant, t.kind, repeat), res)
    }

    /// Records the outcome of a driver run as a sample (its problems filed under
    /// "`workload` `variant`"); returns its metrics.
    pub fn outcome(
        &mut self,
        (workload, variant, kind, repeat): (&str, &str, Kind, usize),
        res: Result<driver::Outcome, String>,
    ) -> Option<Metrics> {
        let what = format!("{workload} {variant}");
        match res {
            Ok(o) => {
                self.file(&what, kind, o.problems);
                self.book
                    .add(workload, variant, kind.name(), repeat, o.metrics.clone());
                Some(o.metrics)
            }
            Err(e) => {
                self.file(&what, kind, vec![e]);
                None
            }
        }
    }

    /// A closed-loop configuration with this mode's connections, warm-up and duration.
    pub fn cfg(&self, proto: Proto, mode: Mode) -> Cfg {
        let mut c = Cfg::new(proto, self.p.conns, mode);
        c.warmup = self.p.warmup;
        c.duration = self.p.duration;
        c
    }

    /// moto (and LocalStack) get 8 connections whatever the workload's count: moto's GIL
    /// makes it no faster from 1 to 8 threads and at 64 its receives pass 30 s, so 8 is its
    /// best case and the ratios are conservative (docs/benchmarks.md, comparing against moto).
    pub fn moto_cfg(&self, mut c: Cfg) -> Cfg {
        c.conns = c.conns.min(8);
        c.warmup = Duration::ZERO;
        c.duration = self.p.moto_cap;
        c.max_msgs = self.p.moto_n;
        c
    }

    /// Records msgs/s of `num` over `den` (and the server CPU per message of `den` over `num`)
    /// as target `name` of the cell.
    pub fn ratio(
        &mut self,
        (w, v, r): (&str, &str, usize),
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

    /// Runs a cell against moto (when it runs and is wanted) and LocalStack (when given) with
    /// [`Bench::moto_cfg`], and records the ratios localsqs / moto and localsqs / LocalStack.
    pub async fn versus_refs(
        &mut self,
        (w, v, r): (&str, &str, usize),
        refs: Refs,
        cfg: Cfg,
        ours: Option<&Metrics>,
    ) {
        let moto = refs.moto.filter(|_| self.want("moto"));
        for (t, name) in [(moto, R_MOTO), (refs.localstack, R_LOCALSTACK)] {
            if let Some(t) = t {
                let theirs = self.cell(w, v, t, self.moto_cfg(cfg.clone()), r).await;
                self.ratio((w, v, r), ours, theirs.as_ref(), name);
            }
        }
    }
}
