//! Startup: exec → first answered ListQueues and the idle RSS after it, in memory and on an
//! empty data directory.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Workload;
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{self, Metrics};
use crate::harness::{Bench, T_SELF};
use crate::http::Proto;
use crate::procfs::{self, Kind, Server};

pub const WORKLOAD: Workload = Workload {
    id: "startup",
    name: "startup, in memory and with an empty data directory",
    measures: "exec → first answered ListQueues; VmRSS after 0.5 s idle; SIGTERM → exit",
    runs: "first, before the shared servers: 5 launches of each",
};

/// In memory.
pub const VARIANT_MEMORY: &str = "memory";
/// On an empty data directory.
pub const VARIANT_DURABLE: &str = "durable, empty data dir";

pub async fn run(b: &mut Bench) {
    let w = WORKLOAD.id;
    for (variant, durable) in [(VARIANT_MEMORY, false), (VARIANT_DURABLE, true)] {
        for i in 0..b.p.startup_reps {
            if b.fatal {
                return;
            }
            let dir = b.scratch.join(format!("startup-{i}"));
            let _ = std::fs::remove_dir_all(&dir);
            let log = b.log(&format!("startup-{variant}-{i}").replace([' ', ','], "_"));
            let settle = Duration::from_millis(if b.args.quick { 200 } else { 500 });
            match launch(&b.bin, durable.then_some(dir.as_path()), log, settle).await {
                Ok(m) => b.book.add(w, variant, T_SELF, i, m),
                Err(e) => b.file(w, Kind::Localsqs, vec![e]),
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

pub fn checks(_: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let memory = "Startup (in memory)";
    let durable = "Startup (durable, empty dir)";
    let exec = "exec → first answered request";
    vec![
        Check::new(
            memory,
            exec,
            cell(w, VARIANT_MEMORY, T_SELF, "startup_ms"),
            Unit::Ms,
        )
        .below(50.0),
        Check::new(
            durable,
            exec,
            cell(w, VARIANT_DURABLE, T_SELF, "startup_ms"),
            Unit::Ms,
        )
        .below(50.0),
        Check::new(
            memory,
            "idle RSS",
            cell(w, VARIANT_MEMORY, T_SELF, "idle_rss_mib"),
            Unit::MiB,
        )
        .below(15.0),
        Check::new(
            durable,
            "idle RSS",
            cell(w, VARIANT_DURABLE, T_SELF, "idle_rss_mib"),
            Unit::MiB,
        )
        .below(15.0),
    ]
}

/// One launch: exec → first answered ListQueues, and RSS after `settle` idle.
async fn launch(
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
    let ready = driver::wait_ready(&s, Proto::Json, Duration::from_secs(10)).await?;
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
