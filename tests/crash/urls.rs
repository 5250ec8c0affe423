//! The startup log names URLs a client can use, with the console under each: on a specific
//! address that address, on the wildcard `0.0.0.0` loopback first (and the machine's other
//! addresses after it), never `0.0.0.0` itself. Only loopback is dialled.

use std::fs::File;
use std::process::{Command, Stdio};

use super::http;
use super::process::{EXIT_WAIT, POLL_STEP, free_port, loopback};

/// Starts the binary on `host` and a free port, waits for `/health` on loopback, stops it with
/// SIGTERM; returns (port, stderr).
async fn startup_log(host: &str, extra: &[&str]) -> (u16, String) {
    let port = free_port();
    let logs = tempfile::tempdir().expect("log dir");
    let path = logs.path().join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_localsqs"))
        .args(["--host", host, "--port", &port.to_string()])
        .args(extra)
        .env_remove("LOCALSQS_DATA_DIR")
        .env_remove("LOCALSQS_CONFIG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(&path).expect("stderr file"))
        .spawn()
        .expect("spawn localsqs");
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    loop {
        if let Ok(r) = http::get(loopback(port), "/health", &[]).await
            && r.status == 200
        {
            break;
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!(
                "exited with {status}: {}",
                std::fs::read_to_string(&path).unwrap_or_default()
            );
        }
        assert!(std::time::Instant::now() < deadline, "never healthy");
        tokio::time::sleep(POLL_STEP).await;
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    assert!(child.wait().expect("wait").success());
    (port, std::fs::read_to_string(&path).expect("stderr"))
}

fn serving_lines(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("localsqs is serving"))
        .collect()
}

#[tokio::test]
async fn a_loopback_server_names_its_endpoint_and_console() {
    let (port, log) = startup_log("127.0.0.1", &[]).await;
    let lines = serving_lines(&log);
    assert_eq!(lines.len(), 1, "{log}");
    let want = format!(
        "localsqs is serving endpoint=http://127.0.0.1:{port} \
         console=http://127.0.0.1:{port}/_localsqs/ui/ mode=in memory"
    );
    assert!(lines[0].contains(&want), "{log}");
}

#[tokio::test]
async fn the_wildcard_is_named_as_loopback_first_and_never_as_0_0_0_0() {
    let (port, log) = startup_log("0.0.0.0", &[]).await;
    let lines = serving_lines(&log);
    assert!(!lines.is_empty(), "{log}");
    assert!(
        lines[0].contains(&format!(
            "endpoint=http://127.0.0.1:{port} console=http://127.0.0.1:{port}/_localsqs/ui/"
        )),
        "{log}"
    );
    assert!(!log.contains("0.0.0.0"), "{log}");
    for line in &lines[1..] {
        assert!(line.contains(&format!(":{port} console=http://")), "{line}");
    }
}

#[tokio::test]
async fn json_logs_carry_the_urls_as_fields() {
    let (port, log) = startup_log("127.0.0.1", &["--log-format", "json"]).await;
    let line = serving_lines(&log)
        .first()
        .copied()
        .expect("a serving line");
    let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
    assert_eq!(
        v["fields"]["endpoint"],
        format!("http://127.0.0.1:{port}"),
        "{line}"
    );
    assert_eq!(
        v["fields"]["console"],
        format!("http://127.0.0.1:{port}/_localsqs/ui/"),
        "{line}"
    );
}
