//! The binary's own interface: `localsqs clock …` and `localsqs faults …` against a running
//! server (and their refusal to talk to anything else), start-up errors that name the flag,
//! address, port or path at fault, and log lines fit for files and log shippers (no colour
//! codes when stderr is not a terminal, JSON with `--log-format json`, one debug line per
//! request naming action, queue and request id).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::http::exchange;
use super::process::{EXIT_WAIT, POLL_STEP, Proc, loopback};

/// Runs `localsqs <args> --port <port>` to completion; returns (success, stdout).
fn ctl(port: u16, args: &[&str]) -> (bool, String) {
    let (ok, out, _) = ctl_full(port, args);
    (ok, out)
}

/// Runs `localsqs <args> --port <port>` to completion; returns (success, stdout, stderr).
fn ctl_full(port: u16, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_localsqs"))
        .args(args)
        .arg("--port")
        .arg(port.to_string())
        .env_remove("LOCALSQS_HOST")
        .env_remove("LOCALSQS_PORT")
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `args` (nothing else), expecting it to exit within [`EXIT_WAIT`];
/// returns its exit code and stderr.
fn exits(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_localsqs"))
        .args(args)
        .env_remove("LOCALSQS_DATA_DIR")
        .env_remove("LOCALSQS_CONFIG")
        .env_remove("LOCALSQS_PORT")
        .env_remove("LOCALSQS_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let deadline = Instant::now() + EXIT_WAIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("localsqs {args:?} did not exit within {EXIT_WAIT:?}");
        }
        std::thread::sleep(POLL_STEP);
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut err).expect("stderr");
    }
    assert!(!err.contains("panicked"), "{err}");
    (status.code(), err)
}

async fn started(args: &[&str]) -> Proc {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut p = Proc::spawn(&args);
    p.wait_ready().await.expect("starts");
    p
}

#[tokio::test]
async fn clock_and_faults_subcommands_drive_a_running_server() {
    let mut p = started(&[]).await;
    let (ok, shown) = ctl(p.port, &["clock", "advance", "30"]);
    assert!(ok, "{shown}");
    let v: serde_json::Value = serde_json::from_str(shown.trim()).expect("json");
    assert_eq!(v["offset_ms"], 30_000, "{v}");
    let (ok, shown) = ctl(p.port, &["clock", "freeze"]);
    assert!(ok && shown.contains("\"frozen\":true"), "{shown}");
    let (ok, added) = ctl(
        p.port,
        &[
            "faults",
            "add",
            r#"{"queue":"q","error":"RequestThrottled"}"#,
        ],
    );
    assert!(ok, "{added}");
    let (_, listed) = ctl(p.port, &["faults"]);
    assert!(listed.contains("RequestThrottled"), "{listed}");
    let (ok, refused) = ctl(p.port, &["faults", "add", r#"{"error":"Nope"}"#]);
    assert!(!ok, "an invalid rule fails the command: {refused}");
    let (ok, _) = ctl(p.port, &["faults", "clear"]);
    assert!(ok);
    let (_, listed) = ctl(p.port, &["faults", "list"]);
    assert!(!listed.contains("RequestThrottled"), "{listed}");
    p.stop().await;
}

#[tokio::test]
async fn logs_have_no_colour_codes_off_a_terminal_and_json_on_request() {
    let mut text = started(&[]).await;
    text.stop().await;
    let logs = text.stderr();
    assert!(logs.contains("localsqs is serving"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "colour codes in a file: {logs:?}");

    let mut json = Proc::spawn(&["--log-format".as_ref(), "json".as_ref()]);
    json.wait_ready().await.expect("starts");
    json.stop().await;
    let logs = json.stderr();
    let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty());
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON object per line");
        assert!(v["level"].is_string(), "{line}");
    }
}

#[tokio::test]
async fn debug_lines_name_the_action_queue_and_request_id() {
    let mut p = Proc::spawn_with_env(&[], &[("RUST_LOG", "localsqs=debug")]);
    p.wait_ready().await.expect("starts");
    let resp = exchange(
        loopback(p.port),
        "POST",
        "/",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        "Action=CreateQueue&QueueName=logged",
    )
    .await
    .expect("answered");
    let id = resp
        .header("x-amzn-requestid")
        .expect("a request id")
        .to_owned();
    p.stop().await;
    let logs = p.stderr();
    let line = logs
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("no line with {id}: {logs}"));
    assert!(line.contains("action=CreateQueue"), "{line}");
    assert!(line.contains("queue=logged"), "{line}");
}

#[test]
fn a_port_in_use_names_the_address_and_what_to_do() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = held.local_addr().expect("addr").port().to_string();
    let (code, err) = exits(&["--host", "127.0.0.1", "--port", &port]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}"))
            && err.contains("Address already in use")
            && err.contains(&format!("port {port} is taken (by another localsqs?)"))
            && err.contains("--port 0"),
        "{err}"
    );
}

#[test]
fn a_host_that_is_not_this_machines_is_named() {
    // TEST-NET-3 (RFC 5737): an address, so no name lookup, and never this machine's.
    let (code, err) = exits(&["--host", "203.0.113.7", "--port", "0"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--host 203.0.113.7 is not an address of this machine"),
        "{err}"
    );
}

#[test]
fn a_mistyped_flag_gets_a_suggestion() {
    let (code, err) = exits(&["--prot", "9324"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a similar argument exists: '--port'"), "{err}");
}

#[test]
fn an_init_dir_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("hooks");
    std::fs::write(&file, "").expect("writes");
    let path = file.display().to_string();
    let (code, err) = exits(&["--port", "0", "--init-dir", &path]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("--init-dir {path} is a file, not a directory")),
        "{err}"
    );
}

#[test]
fn the_subcommands_flags_describe_the_server_they_talk_to() {
    for sub in ["clock", "faults"] {
        let out = Command::new(env!("CARGO_BIN_EXE_localsqs"))
            .args([sub, "--help"])
            .output()
            .expect("runs");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Port of the running server to talk to")
                && help.contains("Address of the running server to talk to")
                && !help.contains("to listen on"),
            "{sub} --help: {help}"
        );
    }
}

#[tokio::test]
async fn the_subcommands_say_which_server_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut p = Proc::start(dir.path()).await;
    let (ok, out, err) = ctl_full(p.port, &["clock"]);
    assert!(ok, "{out} {err}");
    assert!(
        err.contains(&format!(
            "localsqs {} on 127.0.0.1:{} (data in {})",
            env!("CARGO_PKG_VERSION"),
            p.port,
            dir.path().display()
        )),
        "{err}"
    );
    assert!(
        out.contains("offset_ms"),
        "stdout keeps the answer alone: {out}"
    );
    p.stop().await;
}

#[test]
fn the_subcommands_refuse_a_port_that_is_not_localsqs() {
    // Something else on the port: answers every request with 200 and a body of its own, and
    // records the request lines it got.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("addr").port();
    let seen = std::thread::spawn(move || {
        let mut lines = Vec::new();
        while let Ok((mut s, _)) = listener.accept() {
            s.set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            // The whole request (head and body), however the client's writes arrive: answering
            // after a first partial read would reset a client still writing.
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = s.read(&mut buf).unwrap_or(0);
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                let whole = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    body.len() >= length
                });
                if n == 0 || whole || text.starts_with("STOP") {
                    break;
                }
            }
            let text = String::from_utf8_lossy(&got).into_owned();
            if text.starts_with("STOP") {
                break;
            }
            lines.push(text.lines().next().unwrap_or_default().to_owned());
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
        lines
    });
    let (ok, out, err) = ctl_full(port, &["clock", "advance", "30"]);
    std::net::TcpStream::connect(("127.0.0.1", port))
        .and_then(|mut s| s.write_all(b"STOP"))
        .expect("stops the fake server");
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!("what answers on 127.0.0.1:{port} is not localsqs")),
        "{err}"
    );
    let seen = seen.join().expect("the fake server");
    assert_eq!(
        seen,
        ["GET /_localsqs/about HTTP/1.1"],
        "nothing else was sent"
    );
}

#[tokio::test]
async fn a_toml_config_named_conf_is_read_as_toml() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("queues.conf");
    std::fs::write(&conf, "[[queue]]\nname = \"declared\"\n").expect("writes");
    let mut p = Proc::spawn(&["--config".as_ref(), conf.as_os_str()]);
    p.wait_ready().await.expect("starts");
    let health = exchange(loopback(p.port), "GET", "/health", &[], "")
        .await
        .expect("answered");
    let v: serde_json::Value = serde_json::from_str(&health.body).expect("json");
    assert_eq!(v["queues"], 1, "{v}");
    p.stop().await;
}
