//! The built `localsqs` binary as a child process: free ports, start-up and exit with bounded
//! waits, SIGKILL and SIGTERM, `/health` and the peek endpoint through the shared hyper client,
//! and an SDK client that fails fast when the server dies under it.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::timeout::TimeoutConfig;
use serde_json::Value;

use crate::http;

/// How long a starting server is given to answer `/health`.
pub const READY_WAIT: Duration = Duration::from_secs(10);
/// How long a process is given to exit (after a signal, or when it must refuse to start).
pub const EXIT_WAIT: Duration = Duration::from_secs(10);
/// Step of every polling loop.
pub const POLL_STEP: Duration = Duration::from_millis(20);

/// A port that was free a moment ago (bind port 0, read it, release it).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local address").port()
}

/// `127.0.0.1:<port>`.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// A `localsqs` child process with its output captured in files.
pub struct Proc {
    child: Child,
    /// The port it was told to listen on.
    pub port: u16,
    logs: tempfile::TempDir,
    reaped: Option<ExitStatus>,
}

impl Proc {
    /// Starts the binary with `--port <free port>` and the extra `args`; does not wait.
    pub fn spawn(args: &[&std::ffi::OsStr]) -> Proc {
        Self::spawn_with_env(args, &[])
    }

    /// [`Proc::spawn`] with extra environment variables.
    pub fn spawn_with_env(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Proc {
        let port = free_port();
        let logs = tempfile::tempdir().expect("log dir");
        let out = File::create(logs.path().join("stdout")).expect("stdout file");
        let err = File::create(logs.path().join("stderr")).expect("stderr file");
        let child = Command::new(env!("CARGO_BIN_EXE_localsqs"))
            .arg("--host")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(port.to_string())
            .args(args)
            .env_remove("LOCALSQS_DATA_DIR")
            .env_remove("LOCALSQS_CONFIG")
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("spawn localsqs");
        Proc {
            child,
            port,
            logs,
            reaped: None,
        }
    }

    /// Starts the binary durable in `dir` and waits until `/health` answers. Retries on a new
    /// port if the free port was taken in between.
    pub async fn start(dir: &Path) -> Proc {
        let mut last = String::new();
        for _ in 0..3 {
            let mut p = Proc::spawn(&["--data-dir".as_ref(), dir.as_os_str()]);
            match p.wait_ready().await {
                Ok(()) => return p,
                Err(e) if e.contains("cannot listen on") => last = e,
                Err(e) => panic!("localsqs did not start on {}: {e}", dir.display()),
            }
        }
        panic!("localsqs found no free port: {last}");
    }

    /// Polls `/health` until it answers 200; `Err` with the output if the process exits first
    /// or [`READY_WAIT`] passes.
    pub async fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_WAIT;
        while Instant::now() < deadline {
            if let Some(status) = self.try_exit() {
                return Err(format!("exited with {status}; {}", self.output()));
            }
            if let Ok(r) = http::get(loopback(self.port), "/health", &[]).await
                && r.status == 200
            {
                return Ok(());
            }
            tokio::time::sleep(POLL_STEP).await;
        }
        Err(format!(
            "no healthy answer within {READY_WAIT:?}; {}",
            self.output()
        ))
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL (what `Child::kill` sends on Unix), then reap.
    pub async fn kill9(&mut self) -> ExitStatus {
        self.child.kill().expect("SIGKILL localsqs");
        self.wait_exit().await
    }

    /// SIGTERM through `kill -TERM <pid>`; does not wait.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
            .expect("run kill -TERM");
        assert!(
            status.success(),
            "kill -TERM {} failed: {status}",
            self.pid()
        );
    }

    /// SIGTERM, then a bounded wait for a successful exit.
    pub async fn stop(&mut self) {
        self.terminate();
        let status = self.wait_exit().await;
        assert!(
            status.success(),
            "localsqs did not stop cleanly on SIGTERM: {status}; {}",
            self.output()
        );
    }

    /// The exit status, if the process has exited.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait().expect("try_wait");
        }
        self.reaped
    }

    /// Waits up to [`EXIT_WAIT`] for the process to exit; panics (after SIGKILL) if it does not.
    pub async fn wait_exit(&mut self) -> ExitStatus {
        self.wait_exit_within(EXIT_WAIT).await
    }

    /// Waits up to `limit` for the process to exit; panics (after SIGKILL) if it does not.
    pub async fn wait_exit_within(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Some(s) = self.try_exit() {
                return s;
            }
            tokio::time::sleep(POLL_STEP).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!(
            "localsqs (pid {}) did not exit within {limit:?}; {}",
            self.pid(),
            self.output()
        );
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stderr")).unwrap_or_default()
    }

    /// Both output streams, for failure messages.
    pub fn output(&self) -> String {
        let out = std::fs::read_to_string(self.logs.path().join("stdout")).unwrap_or_default();
        format!("stderr:\n{}\nstdout:\n{out}", self.stderr())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Never leave a server behind when a test fails half-way.
        if self.try_exit().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One message as the peek endpoint lists it.
#[derive(Debug)]
pub struct Peeked {
    /// MessageId.
    pub id: String,
    /// Body.
    pub body: String,
    /// System attributes.
    pub attrs: serde_json::Map<String, Value>,
}

impl Peeked {
    /// One system attribute, as a string.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).and_then(Value::as_str)
    }
}

/// Every message of the queue, in flight and delayed included, in queue order.
pub async fn peek(port: u16, url: &str) -> Vec<Peeked> {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("QueueUrl", url)
        .append_pair("ShowInvisible", "true")
        .append_pair("ShowDelayed", "true")
        .finish();
    let http::Response { status, body, .. } = http::get(
        loopback(port),
        &format!("/_aws/sqs/messages?{query}"),
        &[("Accept", "application/json")],
    )
    .await
    .unwrap_or_else(|e| panic!("peek {url}: {e}"));
    assert_eq!(status, 200, "peek {url}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("peek JSON {e}: {body}"));
    // LocalStack's JSON peek shape: the XML document's names, every repeated element a list.
    let list = match v.pointer("/ReceiveMessageResponse/ReceiveMessageResult/Message") {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(list)) => list,
        Some(other) => panic!("peek: Message is not a list: {other}"),
    };
    list.iter()
        .map(|m| {
            let s = |k: &str| {
                m.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| panic!("peeked message without {k}: {m}"))
                    .to_owned()
            };
            Peeked {
                id: s("MessageId"),
                body: s("Body"),
                attrs: m
                    .get("Attribute")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|a| Some((a["Name"].as_str()?.to_owned(), a["Value"].clone())))
                    .collect(),
            }
        })
        .collect()
}

/// An SDK client for `endpoint` (no aws-config) that never retries and gives up quickly, so a
/// request caught by a kill fails at once instead of being replayed against nothing.
pub fn client(endpoint: &str) -> Client {
    let conf = aws_sdk_sqs::Config::builder()
        .endpoint_url(endpoint)
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(aws_credential_types::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .retry_config(RetryConfig::disabled())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(2))
                .operation_timeout(Duration::from_secs(10))
                .build(),
        )
        .build();
    Client::from_conf(conf)
}
