//! Tools layer: LocalStack's init hooks (`--init-dir DIR`), so that a LocalStack user's
//! `ready.d/*.sh` (`awslocal sqs create-queue …`) keeps working unchanged.
//!
//! As LocalStack does (its `runtime/init.py` and the "Initialization Hooks" page of its docs):
//! the stage directories `boot.d`, `start.d`, `ready.d` and `shutdown.d` hold `.sh` scripts
//! (which must be executable and start with `#!`) and `.py` scripts; within a stage they run one
//! at a time in name order, a directory's own files before its subdirectories, which follow in
//! name order, depth first; a script that fails (non-zero exit, or it cannot start) is logged and
//! marked `ERROR`, and the next one runs. Differences: a `.py` script runs as `python3 SCRIPT`
//! (LocalStack runs it inside its own interpreter), and each script's output is logged line by
//! line under its name.
//!
//! When the stages run (`server.rs`): `boot.d` before the engine opens (nothing answers yet),
//! `start.d` then `ready.d` once the server is serving (in the background: the scripts call it),
//! `shutdown.d` first thing at shutdown, while the server still answers. Every script gets
//! `AWS_ENDPOINT_URL` and `AWS_ENDPOINT_URL_SQS` (this server), credentials that this server
//! accepts, `AWS_DEFAULT_REGION` and `AWS_REGION`, and a `PATH` that starts with a directory
//! holding `awslocal`, a small shell wrapper that runs `aws --endpoint-url "$AWS_ENDPOINT_URL"`.
//! These programs come only from the command line (or the Rust API) of whoever starts the
//! server, never from the network (docs/security.md).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// A lifecycle stage, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before the server opens its state and listens.
    Boot,
    /// Once it is serving, before `Ready`.
    Start,
    /// Once it is serving.
    Ready,
    /// When it shuts down, while it still answers.
    Shutdown,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 4] = [Stage::Boot, Stage::Start, Stage::Ready, Stage::Shutdown];

    /// LocalStack's name of the stage (`BOOT`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Stage::Boot => "BOOT",
            Stage::Start => "START",
            Stage::Ready => "READY",
            Stage::Shutdown => "SHUTDOWN",
        }
    }

    /// The stage's directory under the init directory.
    #[must_use]
    pub fn dir(self) -> &'static str {
        match self {
            Stage::Boot => "boot.d",
            Stage::Start => "start.d",
            Stage::Ready => "ready.d",
            Stage::Shutdown => "shutdown.d",
        }
    }

    /// The stage named `name`, in any case (`ready`, `READY`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where a script stands, with LocalStack's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptState {
    /// Found, not run yet.
    Unknown,
    /// Running now.
    Running,
    /// Exited with status 0.
    Successful,
    /// Exited otherwise, or could not start.
    Error,
}

impl ScriptState {
    fn name(self) -> &'static str {
        match self {
            ScriptState::Unknown => "UNKNOWN",
            ScriptState::Running => "RUNNING",
            ScriptState::Successful => "SUCCESSFUL",
            ScriptState::Error => "ERROR",
        }
    }
}

/// One script found under the init directory.
#[derive(Debug, Clone)]
struct Script {
    stage: Stage,
    path: PathBuf,
    state: ScriptState,
}

impl Script {
    fn name(&self) -> String {
        self.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }
}

#[derive(Debug, Default)]
struct Progress {
    scripts: Vec<Script>,
    completed: [bool; 4],
}

/// The init hooks of one server: the scripts found, their states, and how to run them.
#[derive(Debug)]
pub struct InitHooks {
    root: Option<PathBuf>,
    env: Mutex<Vec<(String, String)>>,
    /// The directory holding the generated `awslocal`, removed when the hooks are dropped.
    bin: Option<PathBuf>,
    progress: Mutex<Progress>,
}

/// Scripts of one stage directory, in LocalStack's order: the directory's own files by name,
/// then each subdirectory by name, depth first. Only `.sh` and `.py` files are scripts.
fn scripts_in(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<(String, PathBuf, bool)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| {
            let path = e.path();
            let is_dir = path.is_dir();
            (e.file_name().to_string_lossy().into_owned(), path, is_dir)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, path, is_dir) in &entries {
        let script = path.extension().is_some_and(|e| e == "sh" || e == "py");
        if !is_dir && script && path.is_file() {
            out.push(path.clone());
        }
    }
    for (_, path, is_dir) in &entries {
        if *is_dir {
            scripts_in(path, out)?;
        }
    }
    Ok(())
}

/// The `awslocal` wrapper: the AWS CLI against this server, or a clear message without it.
const AWSLOCAL: &str = r#"#!/bin/sh
# awslocal, written by localsqs for its init hooks: the AWS CLI against this server.
if ! command -v aws >/dev/null 2>&1; then
  echo "awslocal: the AWS CLI (aws) is not on PATH; install it (pip install awscli), or call $AWS_ENDPOINT_URL another way" >&2
  exit 127
fi
exec aws --endpoint-url "$AWS_ENDPOINT_URL" "$@"
"#;

/// Writes `awslocal` into a fresh directory under the system's temporary directory.
fn write_awslocal() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir();
    let mut n = 0u32;
    let dir = loop {
        let dir = base.join(format!("localsqs-init-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e),
        }
    };
    let file = dir.join("awslocal");
    std::fs::write(&file, AWSLOCAL)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(dir)
}

impl InitHooks {
    /// No init directory: every stage completes with no scripts (what `/_localstack/init`
    /// reports for a LocalStack without hooks).
    #[must_use]
    pub fn none() -> Self {
        Self {
            root: None,
            env: Mutex::new(Vec::new()),
            bin: None,
            progress: Mutex::new(Progress::default()),
        }
    }

    /// Finds the scripts under `root`, which must be a directory (its stage directories may be
    /// missing), and writes `awslocal` for them.
    pub fn discover(root: &Path) -> Result<Self, String> {
        let meta =
            std::fs::metadata(root).map_err(|e| format!("--init-dir {}: {e}", root.display()))?;
        if !meta.is_dir() {
            return Err(format!(
                "--init-dir {} is a file, not a directory: give the directory that holds boot.d, start.d, ready.d and shutdown.d",
                root.display()
            ));
        }
        let mut scripts = Vec::new();
        for stage in Stage::ALL {
            let dir = root.join(stage.dir());
            if !dir.is_dir() {
                continue;
            }
            let mut paths = Vec::new();
            scripts_in(&dir, &mut paths)
                .map_err(|e| format!("--init-dir {}: {e}", dir.display()))?;
            scripts.extend(paths.into_iter().map(|path| Script {
                stage,
                path,
                state: ScriptState::Unknown,
            }));
        }
        let found: Vec<String> = scripts
            .iter()
            .map(|s| format!("{}/{}", s.stage.dir(), s.name()))
            .collect();
        tracing::info!(dir = %root.display(), scripts = ?found, "init hooks found");
        let bin = write_awslocal()
            .map_err(|e| format!("--init-dir: cannot write the awslocal wrapper: {e}"))?;
        Ok(Self {
            root: Some(root.to_owned()),
            env: Mutex::new(Vec::new()),
            bin: Some(bin),
            progress: Mutex::new(Progress {
                scripts,
                completed: [false; 4],
            }),
        })
    }

    /// Sets what every script is told: the endpoint (absent before the server listens on a
    /// known port), a credential the server accepts, and the region.
    pub fn set_env(&self, endpoint: Option<&str>, key: &str, secret: &str, region: &str) {
        let mut env = vec![
            ("AWS_ACCESS_KEY_ID".to_owned(), key.to_owned()),
            ("AWS_SECRET_ACCESS_KEY".to_owned(), secret.to_owned()),
            ("AWS_DEFAULT_REGION".to_owned(), region.to_owned()),
            ("AWS_REGION".to_owned(), region.to_owned()),
        ];
        if let Some(url) = endpoint {
            env.push(("AWS_ENDPOINT_URL".to_owned(), url.to_owned()));
            env.push(("AWS_ENDPOINT_URL_SQS".to_owned(), url.to_owned()));
        }
        if let Some(bin) = &self.bin {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let joined = std::env::join_paths(
                std::iter::once(bin.clone()).chain(std::env::split_paths(&path)),
            )
            .unwrap_or(path);
            env.push(("PATH".to_owned(), joined.to_string_lossy().into_owned()));
        }
        *self
            .env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = env;
    }

    fn progress(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs the scripts of `stage`, one at a time; a failure is logged and the next one runs.
    /// A stage runs once.
    pub async fn run(&self, stage: Stage) {
        let paths: Vec<(usize, PathBuf)> = {
            let p = self.progress();
            if p.completed[stage.index()] {
                return;
            }
            p.scripts
                .iter()
                .enumerate()
                .filter(|(_, s)| s.stage == stage)
                .map(|(i, s)| (i, s.path.clone()))
                .collect()
        };
        let env = self
            .env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for (i, path) in paths {
            self.progress().scripts[i].state = ScriptState::Running;
            let shown = self.shown(&path);
            let started = Instant::now();
            let outcome = run_script(&path, &env, &shown).await;
            let elapsed_ms = started.elapsed().as_millis();
            let state = match outcome {
                Ok(()) => {
                    tracing::info!(stage = stage.name(), script = %shown, elapsed_ms, "init script succeeded");
                    ScriptState::Successful
                }
                Err(why) => {
                    tracing::warn!(stage = stage.name(), script = %shown, elapsed_ms, "init script failed: {why}; the next one runs");
                    ScriptState::Error
                }
            };
            self.progress().scripts[i].state = state;
        }
        self.progress().completed[stage.index()] = true;
    }

    /// A script's path as the log shows it: relative to the init directory.
    fn shown(&self, path: &Path) -> String {
        self.root
            .as_deref()
            .and_then(|r| path.strip_prefix(r).ok())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    fn script_json(s: &Script) -> Value {
        json!({ "stage": s.stage.name(), "name": s.name(), "state": s.state.name() })
    }

    /// `GET /_localstack/init`, in LocalStack's shape: whether each stage has completed, and
    /// every script with its state.
    #[must_use]
    pub fn status(&self) -> Value {
        let p = self.progress();
        let mut completed = serde_json::Map::new();
        for stage in Stage::ALL {
            completed.insert(stage.name().into(), p.completed[stage.index()].into());
        }
        json!({
            "completed": completed,
            "scripts": p.scripts.iter().map(Self::script_json).collect::<Vec<_>>(),
        })
    }

    /// `GET /_localstack/init/<stage>`: whether that stage has completed, and its scripts.
    #[must_use]
    pub fn stage_status(&self, stage: Stage) -> Value {
        let p = self.progress();
        json!({
            "completed": p.completed[stage.index()],
            "scripts": p
                .scripts
                .iter()
                .filter(|s| s.stage == stage)
                .map(Self::script_json)
                .collect::<Vec<_>>(),
        })
    }
}

impl Drop for InitHooks {
    fn drop(&mut self) {
        if let Some(bin) = &self.bin {
            let _ = std::fs::remove_dir_all(bin);
        }
    }
}

/// Runs one script to its end, logging its output line by line.
async fn run_script(path: &Path, env: &[(String, String)], shown: &str) -> Result<(), String> {
    let python = path.extension().is_some_and(|e| e == "py");
    let mut cmd = if python {
        let mut c = tokio::process::Command::new("python3");
        c.arg(path);
        c
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(|e| e.to_string())?
                .permissions()
                .mode();
            if mode & 0o111 == 0 {
                return Err(format!(
                    "{shown} is not executable; run chmod +x on it (LocalStack, too, runs only executable scripts)"
                ));
            }
        }
        tokio::process::Command::new(path)
    };
    cmd.envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| match e.raw_os_error() {
        // ENOEXEC: executable, but not a program and no `#!` line.
        Some(8) => {
            format!("{shown} cannot be run: it needs a #! line (e.g. #!/bin/sh) as its first line")
        }
        _ if python => format!("cannot run python3 {shown}: {e}"),
        _ => format!("cannot run {shown}: {e}"),
    })?;
    let out = child.stdout.take().map(|s| log_lines(s, shown.to_owned()));
    let err = child.stderr.take().map(|s| log_lines(s, shown.to_owned()));
    let status = child.wait().await.map_err(|e| e.to_string())?;
    for task in [out, err].into_iter().flatten() {
        let _ = task.await;
    }
    if status.success() {
        Ok(())
    } else {
        Err(match status.code() {
            Some(code) => format!("exit status {code}"),
            None => format!("ended by {status}"),
        })
    }
}

fn log_lines<R>(reader: R, script: String) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut lines = BufReader::new(reader).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(script = %script, "{line}");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_and_their_names() {
        assert_eq!(Stage::from_name("ready"), Some(Stage::Ready));
        assert_eq!(Stage::from_name("BOOT"), Some(Stage::Boot));
        assert_eq!(Stage::from_name("later"), None);
        let none = InitHooks::none();
        assert_eq!(
            none.status(),
            json!({
                "completed": {"BOOT": false, "START": false, "READY": false, "SHUTDOWN": false},
                "scripts": [],
            })
        );
    }

    #[test]
    fn scripts_run_in_localstacks_order() {
        let root = std::env::temp_dir().join(format!("localsqs-init-order-{}", std::process::id()));
        let ready = root.join("ready.d");
        std::fs::create_dir_all(ready.join("a-sub")).expect("dirs");
        std::fs::create_dir_all(ready.join("0-sub")).expect("dirs");
        for f in ["b.sh", "a.py", "c.txt", "a-sub/z.sh", "0-sub/y.sh"] {
            std::fs::write(ready.join(f), "#!/bin/sh\n").expect("write");
        }
        let mut found = Vec::new();
        scripts_in(&ready, &mut found).expect("reads");
        let _ = std::fs::remove_dir_all(&root);
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&ready).expect("under").display().to_string())
            .collect();
        assert_eq!(names, ["a.py", "b.sh", "0-sub/y.sh", "a-sub/z.sh"]);
    }
}
