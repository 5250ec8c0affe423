//! HTTP layer: bounds on what one connection may hold: a header-read timeout, a keep-alive
//! idle timeout, and the per-connection activity tracking that the watchdog uses, plus the
//! connection cap's pressure signal.
//!
//! A connection is in one of three states. *Busy*: at least one request has been read and is
//! not yet answered (a long poll may be busy for 20 s; the body-read timeout in `dispatch`
//! bounds a slow body). *Reading a header*: bytes arrived while nothing was busy. *Idle*:
//! nothing arrived since the last answer. The watchdog closes a connection whose header takes
//! longer than the header timeout, or that stays idle longer than the idle timeout. When the
//! server holds more than three quarters of its connection cap, both shrink to one second, so
//! slow or idle connections cannot lock other clients out.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use atomic_waker::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// Connection limits; each has a flag and an environment variable in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Longest time a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// Longest time a client may take to send a request's body.
    pub body_timeout: Duration,
    /// Longest time a keep-alive connection may sit idle between requests.
    pub idle_timeout: Duration,
    /// Most connections open at once; further clients wait in the listen backlog. Lowered at
    /// start to what the process's file-descriptor limit allows (see `usable_connections`).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(75),
            max_connections: 4096,
        }
    }
}

/// File descriptors kept for everything but connections: the data file, the listener, logs.
const RESERVED_FDS: u64 = 64;

/// The connection cap the process can honour: it raises its soft file-descriptor limit to the
/// hard one (containers often start at a soft 1,024 under a far higher hard limit), then keeps
/// the cap below it, so the cap, not EMFILE, is what slow clients run into.
#[must_use]
pub fn usable_connections(wanted: usize) -> usize {
    let limit = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(u64::MAX);
    let fit = usize::try_from(limit.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
    wanted.min(fit).max(1)
}

/// The timeout that applies under pressure (more than three quarters of the cap in use).
const PRESSURED_TIMEOUT: Duration = Duration::from_secs(1);

/// What one connection is doing, shared by its IO wrapper, its service and its watchdog.
///
/// The watchdog is woken only when its deadline may have moved *earlier* (or, while the
/// connection was busy, appeared again): it publishes the deadline it sleeps until, and a
/// request compares against that instead of waking it every time. A deadline that moved later
/// or went away is found when the watchdog wakes at the old one. On a busy keep-alive
/// connection that is a few wake-ups per header timeout instead of two or three per request.
#[derive(Debug)]
pub(super) struct Activity {
    /// Requests read and not yet answered.
    busy: AtomicUsize,
    /// When the current header started arriving, in ms since `origin`, plus one; 0 = none.
    header_started: AtomicU64,
    /// When the connection last became idle, in ms since `origin`.
    idle_since: AtomicU64,
    /// When the watchdog looks next, in ms since `origin`: the deadline, or sooner the earliest
    /// a new deadline could fall; `u64::MAX` until it has first looked.
    sleeping_until: AtomicU64,
    /// Whether the watchdog last saw the server under pressure (shorter timeouts).
    pressured: AtomicBool,
    /// Whether the watchdog saw the server stopping: then every finished request wakes it.
    stopping: AtomicBool,
    limits: ConnectionLimits,
    origin: Instant,
    /// Wakes the watchdog when its deadline may have moved earlier or gone away.
    changed: Notify,
    /// How many times the watchdog has looked.
    #[cfg(test)]
    looks: AtomicUsize,
}

impl Activity {
    pub(super) fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(Self {
            busy: AtomicUsize::new(0),
            header_started: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            sleeping_until: AtomicU64::new(u64::MAX),
            pressured: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            limits,
            origin: Instant::now(),
            changed: Notify::new(),
            #[cfg(test)]
            looks: AtomicUsize::new(0),
        })
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Wakes the watchdog if `timeout` from `since_ms` ends before the deadline it sleeps on.
    fn wake_if_sooner(&self, since_ms: u64, timeout: Duration) {
        let timeout = cap(timeout, self.pressured.load(Ordering::SeqCst));
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        if self.stopping.load(Ordering::SeqCst)
            || since_ms.saturating_add(ms) < self.sleeping_until.load(Ordering::SeqCst)
        {
            self.changed.notify_one();
        }
    }

    /// A request's headers were read; it is being served. Its deadline went away, which the
    /// watchdog need not hear about at once.
    pub(super) fn request_started(&self) {
        self.busy.fetch_add(1, Ordering::SeqCst);
        self.header_started.store(0, Ordering::SeqCst);
    }

    /// A request was answered.
    pub(super) fn request_finished(&self) {
        let now = self.elapsed_ms();
        self.idle_since.store(now, Ordering::SeqCst);
        if self.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.wake_if_sooner(now, self.limits.idle_timeout);
        }
    }

    fn bytes_read(&self) {
        if self.busy.load(Ordering::SeqCst) == 0 && self.header_started.load(Ordering::SeqCst) == 0
        {
            let now = self.elapsed_ms();
            self.header_started.store(now + 1, Ordering::SeqCst);
            self.wake_if_sooner(now, self.limits.header_timeout);
        }
    }

    /// When the connection should be closed if nothing changes, or `None` while it is busy.
    fn deadline(&self, pressured: bool) -> Option<Instant> {
        if self.busy.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let limits = &self.limits;
        let at = |ms: u64, d: Duration| self.origin + Duration::from_millis(ms) + cap(d, pressured);
        Some(match self.header_started.load(Ordering::SeqCst) {
            0 => at(self.idle_since.load(Ordering::SeqCst), limits.idle_timeout),
            started => at(started - 1, limits.header_timeout),
        })
    }

    /// Resolves when the connection has been idle, or slow to send a header, for too long; or
    /// at once when the server stops and the connection is not busy.
    pub(super) async fn expired(
        &self,
        mut pressure: watch::Receiver<bool>,
        mut stop: watch::Receiver<bool>,
    ) {
        loop {
            let changed = self.changed.notified();
            if *stop.borrow() {
                // From now on, finishing a request must wake the watchdog at once.
                self.stopping.store(true, Ordering::SeqCst);
                if self.busy.load(Ordering::SeqCst) == 0 {
                    return;
                }
            }
            let pressured = *pressure.borrow();
            self.pressured.store(pressured, Ordering::SeqCst);
            #[cfg(test)]
            self.looks.fetch_add(1, Ordering::SeqCst);
            let deadline = self.deadline(pressured);
            let now = Instant::now();
            // Any deadline a request creates from now on (a header starting, the connection
            // going idle) falls at least the shorter timeout from now. Looking again then at
            // the latest means requests need not wake the watchdog: in memory a whole request
            // is often read, run and answered within one poll, so a deadline seen idle would
            // otherwise be followed by a sooner header deadline on every request.
            let shorter = self.limits.header_timeout.min(self.limits.idle_timeout);
            let check = now + cap(shorter, pressured);
            let wake_at = deadline.map_or(check, |d| d.min(check));
            let until = u64::try_from((wake_at - self.origin).as_millis()).unwrap_or(u64::MAX);
            self.sleeping_until.store(until, Ordering::SeqCst);
            // A request that changed the state before seeing the time just published
            // compared against an older one and may not have woken us: look again.
            if self.deadline(pressured) != deadline {
                continue;
            }
            if deadline.is_some_and(|d| d <= now) {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = changed => {}
                r = pressure.changed() => if r.is_err() { std::future::pending::<()>().await },
                r = stop.changed() => if r.is_err() { std::future::pending::<()>().await },
            }
        }
    }
}

/// A future that is polled only when one of its own wakers fired, not every time the task it
/// shares is woken. The connection's watchdog shares the connection's task, which is woken for
/// every read and write; polling the watchdog's timer and channels each time cost a few
/// percent of the server in W1 profiles.
pub(super) struct OnWake<F> {
    inner: Pin<Box<F>>,
    flag: Arc<WakeFlag>,
}

/// Whether the wrapped future was woken, and the task to wake when it is.
#[derive(Debug, Default)]
struct WakeFlag {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for WakeFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.task.wake();
    }
}

impl<F: Future> OnWake<F> {
    pub(super) fn new(inner: F) -> Self {
        let flag = WakeFlag::default();
        // The first poll must reach the future.
        flag.woken.store(true, Ordering::SeqCst);
        Self {
            inner: Box::pin(inner),
            flag: Arc::new(flag),
        }
    }
}

impl<F: Future> Future for OnWake<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // Registered before the flag is read, so a wake between the two is not lost.
        self.flag.task.register(cx.waker());
        if !self.flag.woken.swap(false, Ordering::SeqCst) {
            return Poll::Pending;
        }
        let waker = Waker::from(Arc::clone(&self.flag));
        self.inner.as_mut().poll(&mut Context::from_waker(&waker))
    }
}

/// `d`, shortened to the pressured timeout when the server is under pressure.
fn cap(d: Duration, pressured: bool) -> Duration {
    if pressured {
        d.min(PRESSURED_TIMEOUT)
    } else {
        d
    }
}

/// A socket that reports the bytes it reads to the connection's [`Activity`].
#[derive(Debug)]
pub(super) struct TrackedIo<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> TrackedIo<T> {
    pub(super) fn new(inner: T, activity: Arc<Activity>) -> Self {
        Self { inner, activity }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TrackedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.bytes_read();
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TrackedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Counts open connections and says when the server is under pressure.
#[derive(Debug)]
pub(super) struct Gauge {
    open: AtomicUsize,
    limits: ConnectionLimits,
    pressure: watch::Sender<bool>,
}

impl Gauge {
    pub(super) fn new(limits: ConnectionLimits) -> Arc<Self> {
        Arc::new(Self {
            open: AtomicUsize::new(0),
            limits,
            pressure: watch::Sender::new(false),
        })
    }

    pub(super) fn pressure(&self) -> watch::Receiver<bool> {
        self.pressure.subscribe()
    }

    /// Whether the server is under pressure right now.
    pub(super) fn is_pressured(&self) -> bool {
        *self.pressure.borrow()
    }

    fn update(&self, open: usize) {
        let pressured = open * 4 > self.limits.max_connections * 3;
        self.pressure.send_if_modified(|p| {
            let changed = *p != pressured;
            *p = pressured;
            changed
        });
    }

    pub(super) fn opened(&self) {
        let open = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        self.update(open);
    }

    pub(super) fn closed(&self) {
        let open = self.open.fetch_sub(1, Ordering::SeqCst) - 1;
        self.update(open);
    }
}

#[cfg(test)]
mod tests;
