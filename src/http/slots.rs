//! HTTP layer: connection slots. At most `--max-connections` connections are served at once;
//! further clients wait in the listen backlog. Two things keep that cap from locking people
//! out:
//!
//! - **A reserve.** Past the cap, a few more connections ([`RESERVE`]) are accepted for the
//!   endpoints an operator needs at once (`/health`, `/metrics`, the admin routes): any SQS
//!   request on them is answered 503 and the connection closed, so a health check answers even
//!   when every slot is taken.
//! - **Parked long polls give way.** When every slot is taken, the oldest parked long polls are
//!   answered early with no messages (clients poll again, and SQS itself may answer a long poll
//!   empty), and answers to long polls close their connection while the server is crowded, so
//!   the slots they held go to the clients waiting.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;

use super::conn::{ConnectionLimits, Gauge, usable_connections};

/// Connections accepted past the cap, for health checks and admin endpoints only.
pub const RESERVE: usize = 32;
/// Parked long polls answered early each time the slots run out.
const RELEASE_BATCH: usize = 64;
/// At most one early release per this interval.
const RELEASE_INTERVAL: Duration = Duration::from_millis(100);
/// How long a new connection waits for a slot that released long polls are giving back,
/// before it settles for the reserve.
const RELEASED_WAIT: Duration = Duration::from_millis(200);

/// The connection slots of one server.
#[derive(Debug)]
pub struct Slots {
    main: Arc<Semaphore>,
    reserve: Arc<Semaphore>,
    gauge: Arc<Gauge>,
    limits: ConnectionLimits,
    last_release: std::sync::Mutex<Option<Instant>>,
}

/// A connection's slot: the whole API, or the reserve (health and admin only).
#[derive(Debug)]
pub(super) enum Slot {
    /// One of the `--max-connections` slots.
    Main(#[allow(dead_code)] OwnedSemaphorePermit),
    /// One of the [`RESERVE`] slots past the cap.
    Reserve(#[allow(dead_code)] OwnedSemaphorePermit),
}

impl Slot {
    /// Whether the connection may only reach the health and admin endpoints.
    pub(super) fn reserved(&self) -> bool {
        matches!(self, Slot::Reserve(_))
    }
}

impl Slots {
    /// Slots for `limits` (the cap lowered to what the file-descriptor limit allows).
    #[must_use]
    pub fn new(mut limits: ConnectionLimits) -> Self {
        limits.max_connections = usable_connections(limits.max_connections + RESERVE)
            .saturating_sub(RESERVE)
            .max(1);
        Self {
            main: Arc::new(Semaphore::new(limits.max_connections)),
            reserve: Arc::new(Semaphore::new(RESERVE)),
            gauge: Gauge::new(limits),
            limits,
            last_release: std::sync::Mutex::new(None),
        }
    }

    /// The limits, with the cap the process can honour.
    pub(super) fn limits(&self) -> ConnectionLimits {
        self.limits
    }

    /// Counts open connections and signals pressure.
    pub(super) fn gauge(&self) -> &Arc<Gauge> {
        &self.gauge
    }

    /// Whether every main slot is taken.
    #[must_use]
    pub fn crowded(&self) -> bool {
        self.main.available_permits() == 0
    }

    /// Whether more than three quarters of the main slots are taken.
    pub(super) fn pressured(&self) -> bool {
        self.gauge.is_pressured()
    }

    /// Waits for a slot; `release` is asked to free slots held by parked long polls when there
    /// is none. `None` when the server stops.
    pub(super) async fn acquire(
        &self,
        mut stop: watch::Receiver<bool>,
        release: impl Fn(usize) -> usize,
    ) -> Option<Slot> {
        if let Ok(p) = Arc::clone(&self.main).try_acquire_owned() {
            return Some(Slot::Main(p));
        }
        if self.release_some(&release) > 0 {
            // The polls just answered close their connections: a slot is on its way.
            let main = Arc::clone(&self.main).acquire_owned();
            if let Ok(Ok(p)) = tokio::time::timeout(RELEASED_WAIT, main).await {
                return Some(Slot::Main(p));
            }
        }
        if let Ok(p) = Arc::clone(&self.reserve).try_acquire_owned() {
            return Some(Slot::Reserve(p));
        }
        loop {
            tokio::select! {
                p = Arc::clone(&self.main).acquire_owned() => return p.ok().map(Slot::Main),
                p = Arc::clone(&self.reserve).acquire_owned() => return p.ok().map(Slot::Reserve),
                r = stop.changed() => if r.is_err() || *stop.borrow() { return None },
                () = tokio::time::sleep(RELEASE_INTERVAL) => {
                    self.release_some(&release);
                }
            }
        }
    }

    /// Asks `release` to answer some parked long polls early (at most once per
    /// [`RELEASE_INTERVAL`]); how many it answered.
    fn release_some(&self, release: &impl Fn(usize) -> usize) -> usize {
        let mut last = self
            .last_release
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        if last.is_none_or(|t| now.duration_since(t) >= RELEASE_INTERVAL) {
            *last = Some(now);
            drop(last);
            release(RELEASE_BATCH)
        } else {
            0
        }
    }
}
