//! A closed-loop SendMessage load spread round-robin over a list of queues that keeps the start
//! time and latency of every request, so that latency can be cut into time windows (W13:
//! during a PurgeQueue or a DeleteQueue) and spread over many queues (the queue-count sweep),
//! which the driver's one-queue, one-window histograms cannot do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::driver::{self, Metrics, Tgt};
use crate::http::Proto;
use crate::sqs::{self, Entry};

/// What the load sends.
#[derive(Debug, Clone)]
pub struct Load {
    pub proto: Proto,
    pub conns: usize,
    pub body_len: usize,
    pub urls: Arc<Vec<String>>,
}

/// Every request of a load.
#[derive(Debug, Default)]
pub struct Log {
    /// (start since the load began, latency in µs) of every acknowledged SendMessage.
    pub reqs: Vec<(Duration, u64)>,
    /// Acknowledged sends per queue, in the order of `Load::urls`.
    pub acked: Vec<u64>,
    pub problems: Vec<String>,
}

impl Log {
    /// Acknowledged sends over all queues.
    pub fn total(&self) -> u64 {
        self.acked.iter().sum()
    }

    /// msgs/s and latency percentiles (`<prefix>p50_ms`, …) of the requests that started in
    /// `[from, to)` (times since the load began).
    pub fn window(&self, from: Duration, to: Duration, prefix: &str) -> Metrics {
        let mut h = driver::hist();
        for &(_, us) in self.reqs.iter().filter(|(s, _)| *s >= from && *s < to) {
            h.saturating_record(us.max(1));
        }
        let mut m = Metrics::new();
        let secs = to.saturating_sub(from).as_secs_f64();
        if secs > 0.0 {
            m.insert(format!("{prefix}msgs_per_s"), h.len() as f64 / secs);
        }
        driver::add_percentiles(&mut m, prefix, &h);
        m
    }
}

/// What one sender worker hands back: its requests (start, µs) and the problems it saw.
type WorkerLog = (Vec<(Duration, u64)>, Vec<String>);

/// A running load: stop it with [`Running::stop`].
pub struct Running {
    pub started: Instant,
    stop: Arc<AtomicBool>,
    acked: Arc<Vec<AtomicU64>>,
    workers: Vec<tokio::task::JoinHandle<WorkerLog>>,
}

impl Running {
    /// Time since the load began.
    pub fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Stops the workers and collects every request.
    pub async fn stop(self) -> Log {
        self.stop.store(true, Ordering::SeqCst);
        let mut log = Log::default();
        for w in self.workers {
            match w.await {
                Ok((reqs, problems)) => {
                    log.reqs.extend(reqs);
                    log.problems.extend(problems);
                }
                Err(e) => log.problems.push(format!("sender panicked: {e}")),
            }
        }
        log.acked = self
            .acked
            .iter()
            .map(|a| a.load(Ordering::SeqCst))
            .collect();
        log
    }
}

/// Starts `load.conns` connections sending to `t` until stopped (or `limit` has passed).
pub async fn start(t: Tgt, load: &Load, limit: Duration) -> Result<Running, String> {
    if load.urls.is_empty() {
        return Err("sender: no queue to send to".into());
    }
    let mut conns = Vec::with_capacity(load.conns);
    for _ in 0..load.conns {
        conns.push(t.connect(load.proto).await?);
    }
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Vec<AtomicU64>> =
        Arc::new(load.urls.iter().map(|_| AtomicU64::new(0)).collect());
    let body = Arc::new(sqs::body(0, 0, load.body_len));
    let workers = conns
        .into_iter()
        .enumerate()
        .map(|(w, mut c)| {
            let (stop, acked, body, urls) = (
                Arc::clone(&stop),
                Arc::clone(&acked),
                Arc::clone(&body),
                Arc::clone(&load.urls),
            );
            let (p, step) = (load.proto, load.conns);
            tokio::spawn(async move {
                let mut reqs = Vec::new();
                let mut problems = Vec::new();
                let mut i = w % urls.len();
                while !stop.load(Ordering::Relaxed) && started.elapsed() < limit {
                    let e = Entry {
                        group: None,
                        dedup: None,
                        body: &body,
                    };
                    let req = sqs::send(p, &urls[i], &e);
                    let t0 = Instant::now();
                    let res = c.call(&req, Duration::from_secs(30)).await;
                    let us = u64::try_from(t0.elapsed().as_micros()).unwrap_or(u64::MAX);
                    match res
                        .map_err(|e| e.to_string())
                        .and_then(|r| sqs::check_send(p, &r))
                    {
                        Ok(()) => {
                            reqs.push((t0 - started, us));
                            acked[i].fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            problems.push(format!("SendMessage to queue #{i}: {e}"));
                            break;
                        }
                    }
                    i = (i + step) % urls.len();
                }
                (reqs, problems)
            })
        })
        .collect();
    Ok(Running {
        started,
        stop,
        acked,
        workers,
    })
}

/// Creates `n` standard queues named `<prefix>-<i>` over `conns` connections; returns their URLs
/// in order.
pub async fn create_queues(
    t: Tgt,
    p: Proto,
    prefix: &str,
    n: usize,
    conns: usize,
) -> Result<Vec<String>, String> {
    let base = driver::queue_name(prefix, false);
    let attrs = [("VisibilityTimeout", driver::VISIBILITY_S.to_string())];
    let mut tasks = Vec::new();
    for w in 0..conns.clamp(1, n.max(1)) {
        let mut c = t.connect(p).await?;
        let (base, attrs) = (base.clone(), attrs.clone());
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for i in (w..n).step_by(conns.max(1)) {
                let req = sqs::create_queue(p, &format!("{base}-{i}"), &attrs);
                let r = c.call(&req, Duration::from_secs(30)).await?;
                if r.status != 200 {
                    return Err(format!("CreateQueue #{i}: {}", sqs::describe(&r)));
                }
                out.push((i, sqs::parse_queue_url(p, &r)?));
            }
            Ok::<_, String>(out)
        }));
    }
    let mut urls = vec![String::new(); n];
    for task in tasks {
        for (i, u) in task.await.map_err(|e| e.to_string())?? {
            urls[i] = u;
        }
    }
    Ok(urls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_count_only_their_requests() {
        let ms = Duration::from_millis;
        let log = Log {
            reqs: vec![
                (ms(10), 1000),
                (ms(20), 1000),
                (ms(1500), 9000),
                (ms(1600), 7000),
            ],
            acked: vec![4],
            problems: Vec::new(),
        };
        let before = log.window(ms(0), ms(1000), "");
        assert_eq!(before.get("msgs_per_s"), Some(&2.0));
        assert!((before["p99_ms"] - 1.0).abs() < 0.01, "{before:?}");
        let during = log.window(ms(1000), ms(2000), "x_");
        assert!((during["x_p99_ms"] - 9.0).abs() < 0.01, "{during:?}");
        assert!((during["x_p50_ms"] - 7.0).abs() < 0.01, "{during:?}");
        assert!(!log.window(ms(3000), ms(4000), "").contains_key("p99_ms"));
        assert_eq!(log.total(), 4);
    }
}
