//! The `localsqs` binary's subcommands: `localsqs clock …` and `localsqs faults …`, which drive
//! a running server's admin endpoints from the shell, and the `--healthcheck` probe. A plain blocking
//! HTTP/1.1 exchange over `std::net` is enough for these one-shot calls.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

/// Commands that talk to a running server instead of starting one.
#[derive(Debug, Subcommand)]
pub enum Ctl {
    /// Show or move a running server's clock (`/_localsqs/clock`).
    Clock {
        #[command(subcommand)]
        action: Option<ClockAction>,
    },
    /// List, add or remove fault-injection rules (`/_localsqs/faults`).
    Faults {
        #[command(subcommand)]
        action: Option<FaultAction>,
    },
}

/// What to do to the clock.
#[derive(Debug, Subcommand)]
pub enum ClockAction {
    /// Print the clock (the default).
    Show,
    /// Move time forward by SECONDS (fractions allowed).
    Advance { seconds: f64 },
    /// Stop time.
    Freeze,
    /// Let time run again from where it stood.
    Resume,
    /// Return to real time.
    Reset,
}

/// What to do to the fault rules.
#[derive(Debug, Subcommand)]
pub enum FaultAction {
    /// Print every rule (the default).
    List,
    /// Add a rule given as JSON, e.g. '{"queue":"orders","error":"RequestThrottled","error_rate":0.2}'.
    Add { rule: String },
    /// Remove the rule with this id.
    Remove { id: String },
    /// Remove every rule.
    Clear,
}

/// Runs a control command against `host:port`; prints the answer; exit 0 on a 2xx.
/// `token` is sent as `Authorization: Bearer <token>` (servers started with `--admin-token`).
pub fn run(ctl: Ctl, host: &str, port: u16, token: Option<&str>) -> ExitCode {
    let (method, path, body) = match ctl {
        Ctl::Clock { action } => match action.unwrap_or(ClockAction::Show) {
            ClockAction::Show => ("GET", "/_localsqs/clock".to_owned(), String::new()),
            ClockAction::Advance { seconds } => (
                "POST",
                "/_localsqs/clock".to_owned(),
                serde_json::json!({ "advance_seconds": seconds }).to_string(),
            ),
            ClockAction::Freeze => (
                "POST",
                "/_localsqs/clock".into(),
                r#"{"freeze":true}"#.into(),
            ),
            ClockAction::Resume => (
                "POST",
                "/_localsqs/clock".into(),
                r#"{"freeze":false}"#.into(),
            ),
            ClockAction::Reset => (
                "POST",
                "/_localsqs/clock".into(),
                r#"{"reset":true}"#.into(),
            ),
        },
        Ctl::Faults { action } => match action.unwrap_or(FaultAction::List) {
            FaultAction::List => ("GET", "/_localsqs/faults".to_owned(), String::new()),
            FaultAction::Add { rule } => ("POST", "/_localsqs/faults".to_owned(), rule),
            FaultAction::Remove { id } => {
                ("DELETE", format!("/_localsqs/faults/{id}"), String::new())
            }
            FaultAction::Clear => ("DELETE", "/_localsqs/faults".to_owned(), String::new()),
        },
    };
    match exchange(host, port, method, &path, &body, token) {
        Ok((status, answer)) => {
            println!("{answer}");
            if (200..300).contains(&status) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("localsqs: cannot reach the server on {host}:{port}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `GET /health`; exit 0 on a 200 (container HEALTHCHECKs in images without curl).
pub fn healthcheck(port: u16) -> ExitCode {
    match exchange("127.0.0.1", port, "GET", "/health", "", None) {
        Ok((200, _)) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// One request on a new connection; returns the status and the body.
fn exchange(
    host: &str,
    port: u16,
    method: &str,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> std::io::Result<(u16, String)> {
    let wait = Duration::from_secs(5);
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, wait)?;
    s.set_read_timeout(Some(wait))?;
    let auth = token.map_or_else(String::new, |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("not an HTTP answer"))?;
    let answer = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Ok((status, answer))
}
