//! Tools layer: calling a push target's handler: an HTTP POST (hyper's client connection, one
//! per invocation) or a program run with the event on standard input.
//!
//! An `Err` is a failed invocation (unreachable, non-2xx, non-zero exit); an [`Answer`] is
//! what the handler said, read further by [`super::event::verdict`]. Timeouts are the
//! caller's: dropping the future closes the connection or kills the program.

use std::process::Stdio;

use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::event::Answer;

/// The path the Lambda Runtime Interface Emulator serves, used when a URL has no path.
pub const RIE_PATH: &str = "/2015-03-31/functions/function/invocations";

/// Largest answer read from a handler (Lambda's synchronous payload limit is 6 MB).
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Where an HTTP handler listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port` to connect to and to send as `Host`.
    pub authority: String,
    /// Request target, e.g. [`RIE_PATH`].
    pub path: String,
}

impl Endpoint {
    /// Parses an `http://host[:port][/path]` URL; no path (or `/`) means [`RIE_PATH`].
    pub fn parse(url: &str) -> Result<Self, String> {
        let rest = if let Some(rest) = url.strip_prefix("http://") {
            rest
        } else if url.starts_with("https://") {
            return Err(format!("url {url:?}: https is not supported; use http://"));
        } else {
            return Err(format!("url {url:?} must start with http://"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.starts_with(':') || authority.contains('@') {
            return Err(format!("url {url:?} has no usable host"));
        }
        let port = if authority.starts_with('[') {
            match authority.split_once(']') {
                Some((_, "")) => None,
                Some((_, rest)) if rest.starts_with(':') => Some(&rest[1..]),
                _ => return Err(format!("url {url:?} has no usable host")),
            }
        } else if authority.matches(':').count() > 1 {
            return Err(format!("url {url:?}: put IPv6 addresses in brackets"));
        } else {
            authority.split_once(':').map(|(_, p)| p)
        };
        let authority = match port {
            Some(p) if p.parse::<u16>().is_err() => {
                return Err(format!("url {url:?}: port {p:?} is not a port number"));
            }
            Some(_) => authority.to_owned(),
            None => format!("{authority}:80"),
        };
        let path = match path {
            "" | "/" => RIE_PATH.to_owned(),
            p if p.starts_with('?') => format!("{RIE_PATH}{p}"),
            p => p.to_owned(),
        };
        Ok(Self { authority, path })
    }
}

/// POSTs the event and reads the answer.
pub async fn http(endpoint: &Endpoint, event: Vec<u8>) -> Result<Answer, String> {
    let stream = TcpStream::connect(endpoint.authority.as_str())
        .await
        .map_err(|e| format!("connect {}: {e}", endpoint.authority))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake with {}: {e}", endpoint.authority))?;
    let driver = tokio::spawn(conn);
    let req = Request::post(endpoint.path.as_str())
        .header(hyper::header::HOST, endpoint.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::CONTENT_LENGTH, event.len())
        .body(Full::new(Bytes::from(event)))
        .map_err(|e| format!("request: {e}"))?;
    let answer = async {
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("POST {}: {e}", endpoint.path))?;
        let status = resp.status();
        let function_error = resp
            .headers()
            .get("x-amz-function-error")
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let payload = Limited::new(resp.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes()
            .to_vec();
        if !status.is_success() {
            let text = String::from_utf8_lossy(&payload);
            let text: String = text.trim().chars().take(300).collect();
            return Err(format!("HTTP {}: {text}", status.as_u16()));
        }
        Ok(Answer {
            function_error,
            payload,
        })
    }
    .await;
    driver.abort();
    answer
}

/// Runs `argv` with the event on standard input; exit 0 with standard output as the payload.
pub async fn command(argv: &[String], event: Vec<u8>) -> Result<Answer, String> {
    let (program, args) = argv.split_first().ok_or("empty command")?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {program:?}: {e}"))?;
    let stdin = child.stdin.take();
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A program that does not read its input is not an error.
            let _ = stdin.write_all(&event).await;
        }
    };
    let ((), out) = tokio::join!(feed, child.wait_with_output());
    let out = out.map_err(|e| format!("running {program:?}: {e}"))?;
    if out.status.success() {
        return Ok(Answer {
            function_error: None,
            payload: out.stdout,
        });
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    let tail: String = tail.into_iter().rev().collect::<Vec<_>>().join(" | ");
    let tail: String = tail.chars().take(300).collect();
    let status = out.status.code().map_or_else(
        || "killed by a signal".to_owned(),
        |c| format!("exit status {c}"),
    );
    Err(if tail.is_empty() {
        status
    } else {
        format!("{status}: {tail}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_default_to_the_runtime_interface_emulator_path() {
        let e = Endpoint::parse("http://localhost:9000").unwrap();
        assert_eq!(e.authority, "localhost:9000");
        assert_eq!(e.path, RIE_PATH);
        assert_eq!(Endpoint::parse("http://h:1/").unwrap().path, RIE_PATH);
        assert_eq!(Endpoint::parse("http://h/x?y=1").unwrap().path, "/x?y=1");
        assert_eq!(Endpoint::parse("http://h").unwrap().authority, "h:80");
        assert_eq!(
            Endpoint::parse("http://[::1]:8080/f").unwrap().authority,
            "[::1]:8080"
        );
        assert!(Endpoint::parse("https://h").unwrap_err().contains("https"));
        assert!(Endpoint::parse("ftp://h").is_err());
        assert!(Endpoint::parse("http://").is_err());
        assert!(
            Endpoint::parse("http://h:99999")
                .unwrap_err()
                .contains("port")
        );
        assert!(Endpoint::parse("http://h:").is_err());
    }

    #[tokio::test]
    async fn commands_answer_with_stdout_or_fail_with_their_status() {
        let sh = |script: &str| vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let a = command(&sh("cat"), b"{\"Records\":[]}".to_vec())
            .await
            .unwrap();
        assert_eq!(a.payload, b"{\"Records\":[]}");
        let e = command(&sh("echo bad >&2; exit 3"), Vec::new())
            .await
            .unwrap_err();
        assert_eq!(e, "exit status 3: bad");
        let e = command(&["/nonexistent/prog".to_owned()], Vec::new())
            .await
            .unwrap_err();
        assert!(e.contains("cannot run"), "{e}");
    }
}
