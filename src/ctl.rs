//! The `localsqs` binary's subcommands: `localsqs clock …` and `localsqs faults …`, which drive
//! a running server's admin endpoints from the shell (after checking, with `/_localsqs/about`,
//! that a localsqs answers), and the `--healthcheck` probe. A plain blocking
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
        #[command(flatten)]
        target: Target,
    },
    /// List, add or remove fault-injection rules (`/_localsqs/faults`).
    Faults {
        #[command(subcommand)]
        action: Option<FaultAction>,
        #[command(flatten)]
        target: Target,
    },
}

/// Which running server a subcommand talks to.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// Address of the running server to talk to (default 127.0.0.1; 0.0.0.0 means this
    /// machine).
    #[arg(long, global = true, env = "LOCALSQS_HOST")]
    host: Option<String>,
    /// Port of the running server to talk to (default 9324).
    #[arg(long, global = true, env = "LOCALSQS_PORT")]
    port: Option<u16>,
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

/// Runs a control command against the server its flags name (else `host:port`, the flags
/// given before the subcommand); prints the answer; exit 0 on a 2xx. `token` is sent as
/// `Authorization: Bearer <token>` (servers started with `--admin-token`). First it asks
/// `GET /_localsqs/about` and says on stderr which server answered; it refuses to go on when
/// what answers is not localsqs.
pub fn run(ctl: Ctl, host: &str, port: u16, token: Option<&str>) -> ExitCode {
    let target = match &ctl {
        Ctl::Clock { target, .. } | Ctl::Faults { target, .. } => target.clone(),
    };
    let host = target.host.as_deref().unwrap_or(host);
    let host = if host == "0.0.0.0" { "127.0.0.1" } else { host };
    let port = target.port.unwrap_or(port);
    if let Err(e) = identify(host, port, token) {
        eprintln!("localsqs: {e}");
        return ExitCode::FAILURE;
    }
    let (method, path, body) = match ctl {
        Ctl::Clock { action, .. } => match action.unwrap_or(ClockAction::Show) {
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
        Ctl::Faults { action, .. } => match action.unwrap_or(FaultAction::List) {
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

/// Asks `host:port` who it is; prints `localsqs 0.1.0 on 127.0.0.1:9324 (in memory)` on
/// stderr, or says why it will not talk to it.
fn identify(host: &str, port: u16, token: Option<&str>) -> Result<(), String> {
    let at = format!("{host}:{port}");
    let (status, body) = exchange(host, port, "GET", "/_localsqs/about", "", token).map_err(|e| {
        format!("cannot reach a server on {at}: {e} (is localsqs running there? --host and --port name the server to talk to)")
    })?;
    let about: Option<serde_json::Value> = serde_json::from_str(&body).ok();
    let is_localsqs = about.as_ref().is_some_and(|v| v["server"] == "localsqs");
    match status {
        200 if is_localsqs => {
            let v = about.unwrap_or_default();
            let state = match v["data_dir"].as_str() {
                Some(dir) => format!("data in {dir}"),
                None => "in memory".to_owned(),
            };
            let version = v["version"].as_str().unwrap_or("?");
            eprintln!("localsqs {version} on {at} ({state})");
            Ok(())
        }
        401 => Err(format!(
            "the server on {at} asks for the admin token: pass --admin-token (or set LOCALSQS_ADMIN_TOKEN)"
        )),
        _ => Err(format!(
            "what answers on {at} is not localsqs (GET /_localsqs/about answered {status}), so nothing was sent to it: is another program, or a localsqs older than this one, on that port? --host and --port name the server to talk to"
        )),
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
