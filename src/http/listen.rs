//! HTTP layer: binding the listening socket (with errors that say what to do), the hyper accept
//! loop, the connection cap, per-connection watchdogs and graceful shutdown.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::conn::{Activity, OnWake, TrackedIo};
use super::dispatch;
use super::front::Front;

/// Longest pause after a failed accept (running out of file descriptors, say).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);
/// At most one "accept failed" log line per this interval.
const ACCEPT_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Rate-limits the log of failed accepts and grows the pause between retries.
struct AcceptBackoff {
    pause: Duration,
    last_log: Option<tokio::time::Instant>,
    suppressed: u64,
}

impl AcceptBackoff {
    fn new() -> Self {
        Self {
            pause: Duration::ZERO,
            last_log: None,
            suppressed: 0,
        }
    }

    async fn failed(&mut self, e: &std::io::Error) {
        let now = tokio::time::Instant::now();
        if self
            .last_log
            .is_none_or(|t| now.duration_since(t) >= ACCEPT_LOG_INTERVAL)
        {
            tracing::warn!(error = %e, suppressed = self.suppressed, "accept failed; backing off");
            self.last_log = Some(now);
            self.suppressed = 0;
        } else {
            self.suppressed += 1;
        }
        self.pause = (self.pause * 2)
            .max(Duration::from_millis(10))
            .min(MAX_ACCEPT_BACKOFF);
        tokio::time::sleep(self.pause).await;
    }

    fn succeeded(&mut self) {
        self.pause = Duration::ZERO;
    }
}

/// Accepts connections until `stop` changes, then lets busy connections finish (30 s at
/// most) while idle ones close at once.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    front: Arc<Front>,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let slots = &front.slots;
    let limits = slots.limits();
    let gauge = slots.gauge();
    let mut backoff = AcceptBackoff::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => break,
        };
        let (stream, peer) = match accepted {
            Ok(s) => {
                backoff.succeeded();
                s
            }
            Err(e) => {
                backoff.failed(&e).await;
                continue;
            }
        };
        // A client is waiting: give it a slot. While none is free, no other connection is
        // accepted (they wait in the listen backlog), the oldest parked long polls are
        // answered to free slots, and health and admin requests may use the reserve.
        let release = |n: usize| {
            let released = front.engine.release_oldest_polls(n);
            if released > 0 {
                tracing::debug!(released, "slots full: answered the oldest long polls early");
            }
            released
        };
        let Some(permit) = slots.acquire(stop.clone(), release).await else {
            break;
        };
        let reserved = permit.reserved();
        let _ = stream.set_nodelay(true);
        let local = stream.local_addr().ok();
        let activity = Activity::new(limits);
        let svc = hyper::service::service_fn({
            let front = Arc::clone(&front);
            let activity = Arc::clone(&activity);
            move |req| {
                let front = Arc::clone(&front);
                let activity = Arc::clone(&activity);
                activity.request_started();
                async move {
                    let resp = dispatch::serve(&front, req, local, reserved).await;
                    activity.request_finished();
                    Ok::<_, Infallible>(resp)
                }
            }
        });
        let io = TokioIo::new(TrackedIo::new(stream, Arc::clone(&activity)));
        let conn = hyper::server::conn::http1::Builder::new()
            .header_read_timeout(None)
            .serve_connection(io, svc);
        let conn = graceful.watch(conn);
        let (pressure, stop_rx) = (gauge.pressure(), stop.clone());
        let gauge = Arc::clone(gauge);
        gauge.opened();
        tokio::spawn(async move {
            tokio::select! {
                r = conn => if let Err(e) = r {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                },
                () = OnWake::new(activity.expired(pressure, stop_rx)) => {
                    tracing::debug!(%peer, "closing an idle or slow connection");
                }
            }
            gauge.closed();
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(Duration::from_secs(30), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after 30 s; closing them");
    }
}

/// Binds the listening socket; an error names the address and port, and what to do.
pub async fn bind(host: &str, port: u16) -> Result<TcpListener, String> {
    let shown = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| {
            format!("--host {host}: not an IP address, nor a name this machine can resolve ({e})")
        })?
        .collect();
    let Some(first) = addrs.first().copied() else {
        return Err(format!("--host {host}: the name resolves to no address"));
    };
    let mut last = None;
    for addr in addrs {
        match TcpListener::bind(addr).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some((addr, e)),
        }
    }
    let (addr, e) = last.unwrap_or((first, std::io::Error::other("no address")));
    Err(match e.kind() {
        // The system's own words stay in the message: helpers in other languages match them.
        std::io::ErrorKind::AddrInUse => format!(
            "cannot listen on {addr}: {e}: port {port} is taken (by another localsqs?); try another --port, or --port 0 for a free one"
        ),
        std::io::ErrorKind::AddrNotAvailable => format!(
            "cannot listen on {shown}: --host {host} is not an address of this machine ({e})"
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "cannot listen on {addr}: permission denied ({e}); ports below 1024 need privileges, so pick another --port"
        ),
        _ => format!("cannot listen on {shown} (--host {host}, --port {port}): {e}"),
    })
}
