//! The environment stamp every report carries: git SHA, profile, machine, load and steal, and a
//! raw fsync calibration of the disk that holds the scratch directory.

use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

/// The environment stamp (docs/benchmarks.md, environment stamp).
#[derive(Debug, Clone, Serialize, Default)]
pub struct Env {
    pub date_utc: String,
    pub git_sha: String,
    pub git_dirty: bool,
    pub bench_profile: String,
    pub server_bin: String,
    pub server_bin_modified_unix: u64,
    pub rustc: String,
    pub rustflags: String,
    pub nproc: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub mem_total_mib: u64,
    pub load1_before: f64,
    pub load1_after: f64,
    pub steal_pct: f64,
    pub fsync_per_s: f64,
    pub data_dir_fs: String,
    pub moto: String,
    pub mode: String,
    pub repeats: usize,
    pub duration_s: f64,
    pub wall_s: f64,
}

fn cmd_out(prog: &str, args: &[&str], dir: &Path) -> Option<String> {
    let o = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

impl Env {
    pub fn collect(root: &Path, server_bin: &Path) -> Env {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Env {
            date_utc: cmd_out("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"], root).unwrap_or_default(),
            git_sha: cmd_out("git", &["rev-parse", "HEAD"], root)
                .unwrap_or_else(|| "unknown".into()),
            git_dirty: cmd_out(
                "git",
                &["status", "--porcelain", "--untracked-files=no"],
                root,
            )
            .is_some_and(|s| !s.is_empty()),
            bench_profile: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
            server_bin: server_bin.display().to_string(),
            server_bin_modified_unix: std::fs::metadata(server_bin)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs()),
            rustc: cmd_out("rustc", &["--version"], root).unwrap_or_default(),
            rustflags: std::env::var("RUSTFLAGS").unwrap_or_default(),
            nproc: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|s| s.trim_start_matches([' ', '\t', ':']).to_owned())
                .unwrap_or_default(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
            mem_total_mib: meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(0, |k| k / 1024),
            ..Env::default()
        }
    }
}

/// Raw 4 KiB pwrite + fdatasync rate in `dir` for `secs` (the disk calibration of the
/// environment stamp).
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
