//! HTTP layer: reading a request body within bounds. One body may be at most
//! `--max-request-bytes` and must arrive within `--body-timeout`; it must keep arriving at
//! `--min-body-rate` at least (checked over windows of five seconds, one second when the server
//! is near its connection cap), so a client cannot hold a slot by trickling or by stalling
//! after a burst; and all bodies in flight together hold at most `--max-body-memory`, so the
//! memory clients can pin is bounded whatever the connection count. A body that cannot get its
//! share of that budget within a second is answered 503, as SQS answers when it is overloaded.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Bytes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::error::{ErrorCode, SqsError};

/// The unit the memory budget counts in.
const UNIT: usize = 1024;
/// How much more of the budget a body of unannounced length takes at a time.
const STEP: usize = 64 * 1024;
/// How long a body waits for its share of the budget before the request is refused.
const BUDGET_WAIT: Duration = Duration::from_secs(1);
/// The window over which a body must have arrived at the minimum rate.
const RATE_WINDOW: Duration = Duration::from_secs(5);
/// The same window while the server is near its connection cap.
const PRESSURED_RATE_WINDOW: Duration = Duration::from_secs(1);

/// The memory all request bodies in flight may hold together.
#[derive(Debug)]
pub struct BodyBudget {
    units: Arc<Semaphore>,
    total: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (at least one body of `UNIT`).
    #[must_use]
    pub fn new(bytes: usize) -> Self {
        let total = (bytes / UNIT).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            units: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// Bytes of bodies held right now.
    #[cfg(test)]
    fn held(&self) -> usize {
        (self.total - self.units.available_permits()) * UNIT
    }

    /// Takes room for `bytes` more, waiting at most [`BUDGET_WAIT`]; the room taken (whole
    /// units), or `None` when the budget stays full.
    async fn take(&self, bytes: usize, hold: &mut Option<OwnedSemaphorePermit>) -> Option<usize> {
        let units = bytes.div_ceil(UNIT).clamp(1, self.total);
        let taken = units * UNIT;
        let units = u32::try_from(units).unwrap_or(u32::MAX);
        let permit = match Arc::clone(&self.units).try_acquire_many_owned(units) {
            Ok(p) => p,
            Err(_) => match tokio::time::timeout(
                BUDGET_WAIT,
                Arc::clone(&self.units).acquire_many_owned(units),
            )
            .await
            {
                Ok(Ok(p)) => p,
                _ => return None,
            },
        };
        match hold {
            Some(h) => h.merge(permit),
            None => *hold = Some(permit),
        }
        Some(taken)
    }
}

/// The bounds one body is read within.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyRules {
    /// Largest body.
    pub max_bytes: usize,
    /// Longest time the whole body may take.
    pub timeout: Duration,
    /// Slowest rate, bytes per second (0: no minimum).
    pub min_rate: u64,
    /// Whether the server is near its connection cap (shorter rate windows).
    pub pressured: bool,
}

/// A body read in full, with the share of the budget it holds until it is dropped.
#[derive(Debug, Default)]
pub(super) struct Body {
    /// The bytes.
    pub bytes: Bytes,
    /// Released when the request is answered.
    _hold: Option<OwnedSemaphorePermit>,
}

/// Reads `body` (announced as `declared` bytes, if it was) within `rules` and `budget`.
pub(super) async fn read<B>(
    mut body: B,
    declared: Option<u64>,
    rules: BodyRules,
    budget: &BodyBudget,
) -> Result<Body, SqsError>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let max = rules.max_bytes;
    let declared = declared.map(|d| usize::try_from(d).unwrap_or(usize::MAX));
    if declared.is_some_and(|d| d > max) {
        return Err(too_large(max));
    }
    if declared == Some(0) {
        return Ok(Body::default());
    }
    let mut hold = None;
    let mut room = budget
        .take(declared.unwrap_or(STEP).min(max), &mut hold)
        .await
        .ok_or_else(overloaded)?;
    let started = Instant::now();
    let deadline = started + rules.timeout;
    let window = if rules.pressured {
        PRESSURED_RATE_WINDOW
    } else {
        RATE_WINDOW
    };
    let per_window = rules
        .min_rate
        .saturating_mul(window.as_millis().try_into().unwrap_or(u64::MAX))
        / 1000;
    let (mut window_end, mut at_window_start) = (started + window, 0usize);
    let mut buf: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0).min(max));
    let mut only: Option<Bytes> = None;
    loop {
        let wake = if rules.min_rate > 0 {
            deadline.min(window_end)
        } else {
            deadline
        };
        match tokio::time::timeout_at(wake, body.frame()).await {
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                return Err(SqsError::new(
                    ErrorCode::SerializationException,
                    "Could not read the request body.",
                ));
            }
            Ok(Some(Ok(frame))) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let total = buf.len() + only.as_ref().map_or(0, Bytes::len) + data.len();
                if total > max {
                    return Err(too_large(max));
                }
                if total > room {
                    // More than announced (or no length announced): take more room first.
                    let more = total.saturating_add(STEP).min(max).saturating_sub(room);
                    room += budget.take(more, &mut hold).await.ok_or_else(overloaded)?;
                }
                // The usual body arrives as one frame: keep it as it is, with no copy.
                match only.take() {
                    None if buf.is_empty() => only = Some(data),
                    first => {
                        if let Some(f) = first {
                            buf.extend_from_slice(&f);
                        }
                        buf.extend_from_slice(&data);
                    }
                }
            }
            Err(_) if Instant::now() >= deadline => return Err(too_slow("in time")),
            Err(_) => {
                let received = buf.len() + only.as_ref().map_or(0, Bytes::len);
                let arrived = u64::try_from(received - at_window_start).unwrap_or(u64::MAX);
                if arrived < per_window {
                    return Err(too_slow("fast enough"));
                }
                at_window_start = received;
                window_end += window;
            }
        }
    }
    let bytes = match only {
        Some(b) => b,
        None => Bytes::from(buf),
    };
    Ok(Body { bytes, _hold: hold })
}

fn too_large(limit: usize) -> SqsError {
    // [E] AWS's front door answers oversized bodies before SQS sees them.
    SqsError::new(
        ErrorCode::RequestEntityTooLarge,
        format!("Request body is larger than the {limit} bytes this server accepts."),
    )
}

fn too_slow(how: &str) -> SqsError {
    // [E] AWS's front door closes such requests; a 408 tells the client why.
    SqsError::new(
        ErrorCode::RequestTimeout,
        format!("The request body was not received {how}."),
    )
}

fn overloaded() -> SqsError {
    SqsError::new(
        ErrorCode::ServiceUnavailable,
        "Too many request bodies are in flight (--max-body-memory); please try again shortly.",
    )
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use hyper::body::Frame;
    use tokio::sync::mpsc;

    use super::*;

    /// A body whose chunks the test sends when it likes.
    struct Chunks(mpsc::UnboundedReceiver<Bytes>);

    impl hyper::body::Body for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            self.0.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b))))
        }
    }

    fn chunks() -> (mpsc::UnboundedSender<Bytes>, Chunks) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, Chunks(rx))
    }

    fn rules() -> BodyRules {
        BodyRules {
            max_bytes: 1 << 20,
            timeout: Duration::from_secs(30),
            min_rate: 1024,
            pressured: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_arrives_whole_and_holds_its_share_until_dropped() {
        let budget = BodyBudget::new(64 * 1024);
        let (tx, body) = chunks();
        tx.send(Bytes::from_static(b"hello ")).expect("open");
        tx.send(Bytes::from_static(b"world")).expect("open");
        drop(tx);
        let b = read(body, Some(11), rules(), &budget).await.expect("read");
        assert_eq!(&b.bytes[..], b"hello world");
        assert_eq!(budget.held(), 1024, "11 bytes hold one unit");
        drop(b);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn too_large_is_refused_before_reading_and_while_reading() {
        let budget = BodyBudget::new(1 << 20);
        let (_tx, body) = chunks();
        let small = BodyRules {
            max_bytes: 10,
            ..rules()
        };
        let e = read(body, Some(11), small, &budget).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RequestEntityTooLarge);
        let (tx, body) = chunks();
        tx.send(Bytes::from(vec![b'x'; 11])).expect("open");
        let e = read(body, None, small, &budget).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RequestEntityTooLarge);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_budget_a_body_waits_a_second_then_gets_503() {
        let budget = BodyBudget::new(8 * 1024);
        let (_held_tx, held) = chunks();
        let budget = Arc::new(budget);
        let b2 = Arc::clone(&budget);
        // A stalled body that announced 8 KiB holds the whole budget.
        let stalled = tokio::spawn(async move { read(held, Some(8 * 1024), rules(), &b2).await });
        tokio::task::yield_now().await;
        assert_eq!(budget.held(), 8 * 1024);
        let (_tx, body) = chunks();
        let started = Instant::now();
        let e = read(body, Some(10), rules(), &budget).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::ServiceUnavailable);
        assert_eq!(started.elapsed(), BUDGET_WAIT);
        stalled.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_or_a_stall_after_a_burst_gets_408() {
        let budget = BodyBudget::new(1 << 20);
        // A byte a second: under 5 KiB in the first five seconds.
        let (tx, body) = chunks();
        let trickle = tokio::spawn(async move {
            for _ in 0..60 {
                if tx.send(Bytes::from_static(b"x")).is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let started = Instant::now();
        let e = read(body, Some(1000), rules(), &budget).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RequestTimeout);
        assert_eq!(started.elapsed(), RATE_WINDOW);
        trickle.abort();
        // A burst, then nothing: the second window sees no progress.
        let (tx, body) = chunks();
        tx.send(Bytes::from(vec![b'x'; 100_000])).expect("open");
        let started = Instant::now();
        let e = read(body, Some(200_000), rules(), &budget)
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::RequestTimeout);
        assert_eq!(started.elapsed(), RATE_WINDOW * 2);
        drop(tx);
        // Near the connection cap the window is a second.
        let (_tx, body) = chunks();
        let pressured = BodyRules {
            pressured: true,
            ..rules()
        };
        let started = Instant::now();
        let e = read(body, Some(10), pressured, &budget).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RequestTimeout);
        assert_eq!(started.elapsed(), PRESSURED_RATE_WINDOW);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unannounced_body_takes_room_as_it_grows() {
        let budget = BodyBudget::new(1 << 20);
        let (tx, body) = chunks();
        for _ in 0..3 {
            tx.send(Bytes::from(vec![b'y'; 50_000])).expect("open");
        }
        drop(tx);
        let b = read(body, None, rules(), &budget).await.expect("read");
        assert_eq!(b.bytes.len(), 150_000);
        assert!(budget.held() >= 150_000 && budget.held() <= 150_000 + STEP + UNIT);
    }
}
