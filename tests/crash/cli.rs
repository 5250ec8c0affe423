//! The binary's own interface: `localsqs clock …` and `localsqs faults …` against a running
//! server, and log lines fit for files and log shippers (no colour codes when stderr is not a
//! terminal, JSON with `--log-format json`, one debug line per request naming action, queue
//! and request id).

use std::process::Command;

use super::http::exchange;
use super::process::{Proc, loopback};

/// Runs `localsqs <args> --port <port>` to completion; returns (success, stdout).
fn ctl(port: u16, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_localsqs"))
        .args(args)
        .arg("--port")
        .arg(port.to_string())
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
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
