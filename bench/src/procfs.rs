//! /proc readers (CPU, RSS, I/O, load, steal) and the server processes the bench starts and
//! stops by PID (docs/benchmarks.md, metrics).

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Linux reports utime/stime in USER_HZ ticks, 100 per second on every mainstream ABI.
const TICKS_PER_S: f64 = 100.0;

/// utime + stime of a process (all its threads, live and exited), in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    // `rest` starts at field 3 (state); utime and stime are fields 14 and 15.
    let utime: u64 = f.nth(11)?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some((utime + stime) as f64 / TICKS_PER_S)
}

/// CPU seconds (utime + stime) of the live threads of `pid`, summed by thread name
/// (`comm`), e.g. `tokio-runtime-w` and `localsqs-writer`.
pub fn thread_cpu(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in rd.filter_map(Result::ok) {
        let Ok(s) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (s.find('('), s.rfind(')')) else {
            continue;
        };
        let name = s[open + 1..close].to_owned();
        let mut f = s[close + 1..].split_whitespace();
        let (Some(u), Some(st)) = (f.nth(11), f.next()) else {
            continue;
        };
        let (Ok(u), Ok(st)) = (u.parse::<u64>(), st.parse::<u64>()) else {
            continue;
        };
        *out.entry(name).or_insert(0.0) += (u + st) as f64 / TICKS_PER_S;
    }
    out
}

/// A `/proc/<pid>/status` field in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// VmRSS in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    status_kib(pid, "VmRSS").unwrap_or(0) as f64 / 1024.0
}

/// VmHWM (peak RSS) in MiB.
pub fn hwm_mib(pid: u32) -> f64 {
    status_kib(pid, "VmHWM").unwrap_or(0) as f64 / 1024.0
}

/// `write_bytes` of `/proc/<pid>/io`.
pub fn write_bytes(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The 1-minute load average.
pub fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(f64::NAN)
}

/// Total and steal jiffies of all CPUs, from the `cpu` line of /proc/stat.
pub fn cpu_totals() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = s.lines().find(|l| l.starts_with("cpu ")) else {
        return (0, 0);
    };
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal guest guest_nice; guests are in user.
    let total = v.iter().take(8).sum();
    (total, v.get(7).copied().unwrap_or(0))
}

/// The soft limit on open files of this process.
pub fn open_files_limit() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(1024)
}

/// Space the files under `dir` take: `(allocated, apparent)` bytes. Allocated counts the
/// blocks the file system holds (what `du` shows); apparent counts file lengths, which for
/// redb includes the unwritten (sparse) tail it reserves when it grows its file by doubling.
pub fn dir_bytes(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    rd.filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => (m.blocks() * 512, m.len()),
            Err(_) => (0, 0),
        })
        .fold((0, 0), |(a, l), (b, m)| (a + b, l + m))
}

/// The file system type of the mount holding `path` (longest matching mount point).
pub fn fs_type(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, mnt, ty) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(mnt).then(|| (mnt.len(), ty.to_owned()))
        })
        .max()
        .map_or_else(|| "unknown".into(), |(_, t)| t)
}

/// A free loopback port (bound and released; another process could take it in between,
/// which the readiness probe would then report).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// What a server process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The localsqs binary.
    Localsqs,
    /// The bare hyper server (this binary, `--serve-calibration`).
    Calibration,
    /// moto_server.
    Moto,
    /// A LocalStack the user started (`--localstack URL`), never signalled.
    LocalStack,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Localsqs => "localsqs",
            Kind::Calibration => "calibration",
            Kind::Moto => "moto",
            Kind::LocalStack => "localstack",
        }
    }
}

/// A server process this bench started; it is killed (by PID) when dropped.
pub struct Server {
    pub kind: Kind,
    pub addr: SocketAddr,
    pub pid: u32,
    /// When `spawn` was called (just before exec).
    pub spawned: Instant,
    child: Option<Child>,
    /// Not started by this bench (`--endpoint`): never signalled.
    external: bool,
    pub log: PathBuf,
}

impl Server {
    /// Starts a process on a free port: `args` get `--port P` (or `-p P` for moto).
    pub fn spawn(
        kind: Kind,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<Server, String> {
        let port = free_port()?;
        let mut cmd = Command::new(program);
        cmd.args(args);
        match kind {
            Kind::Moto => cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]),
            _ => cmd.args(["--port", &port.to_string()]),
        };
        if kind == Kind::Localsqs {
            cmd.args(["--host", "127.0.0.1"]).env("RUST_LOG", "info");
        }
        let err = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err);
        let spawned = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        Ok(Server {
            kind,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            pid: child.id(),
            spawned,
            child: Some(child),
            external: false,
            log,
        })
    }

    /// A record for a server this bench did not start (`--endpoint`).
    pub fn external(t: crate::driver::Tgt) -> Server {
        Server {
            kind: t.kind,
            addr: t.addr,
            pid: t.pid,
            spawned: Instant::now(),
            child: None,
            external: true,
            log: PathBuf::new(),
        }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        if self.external {
            return self.pid == 0 || Path::new(&format!("/proc/{}", self.pid)).exists();
        }
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The last lines of the server's stderr, for crash reports.
    pub fn log_tail(&self) -> String {
        let s = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }

    /// SIGTERM, then waits (bounded) for a clean exit; SIGKILL if it does not come.
    /// Returns whether the process exited by itself.
    pub fn terminate(&mut self, within: Duration) -> bool {
        let Some(mut child) = self.child.take() else {
            return true;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Ok(Some(_)) = child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// SIGKILL and reap.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// The bench's own CPU seconds.
pub fn self_cpu_seconds() -> f64 {
    cpu_seconds(std::process::id()).unwrap_or(0.0)
}
