//! One virtual client of the driver: its send → receive → delete loop on one keep-alive
//! connection, and the checks it makes on every message it receives (tags, FIFO order, body
//! length, end-to-end age).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{Cfg, Mode, Progress, hist};
use crate::http::{Conn, Req, Resp};
use crate::sqs::{self, Entry};

/// State the workers of one run share: bounds, counters, FIFO expectations, problems found.
pub(super) struct Shared {
    pub(super) url: String,
    pub(super) cfg: Cfg,
    pub(super) base: Instant,
    pub(super) warm_end: Instant,
    pub(super) deadline: Instant,
    pub(super) issued: AtomicU64,
    pub(super) stop: AtomicBool,
    pub(super) fifo_next: Vec<AtomicU32>,
    pub(super) fixed: Option<Req>,
    pub(super) problems: Mutex<Vec<String>>,
    pub(super) progress: Arc<Progress>,
    /// Drain: consecutive empty receives seen by all workers.
    pub(super) empties: AtomicU32,
}

impl Shared {
    pub(super) fn problem(&self, p: String) {
        self.stop.store(true, Ordering::SeqCst);
        let mut v = self
            .problems
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if v.len() < 20 {
            v.push(p);
        }
    }
}

/// What one worker measured and saw.
pub(super) struct WorkerOut {
    pub(super) hists: BTreeMap<&'static str, Histogram<u64>>,
    pub(super) age: Histogram<u64>,
    pub(super) msgs_window: u64,
    pub(super) reqs_window: u64,
    pub(super) msgs_total: u64,
    pub(super) reqs_total: u64,
    pub(super) receives: u64,
    pub(super) empty_receives: u64,
    pub(super) sent: Vec<u64>,
    pub(super) received: Vec<u64>,
    pub(super) last_done: Option<Instant>,
}

impl WorkerOut {
    fn new() -> Self {
        WorkerOut {
            hists: BTreeMap::new(),
            age: hist(),
            msgs_window: 0,
            reqs_window: 0,
            msgs_total: 0,
            reqs_total: 0,
            receives: 0,
            empty_receives: 0,
            sent: Vec::new(),
            received: Vec::new(),
            last_done: None,
        }
    }

    fn req(&mut self, sh: &Shared, op: &'static str, t0: Instant, t1: Instant) {
        self.reqs_total += 1;
        if t1 >= sh.warm_end && t1 <= sh.deadline {
            self.reqs_window += 1;
            let us = u64::try_from((t1 - t0).as_micros()).unwrap_or(u64::MAX);
            self.hists
                .entry(op)
                .or_insert_with(hist)
                .saturating_record(us.max(1));
        }
    }

    fn msgs(&mut self, sh: &Shared, n: u64, t1: Instant) {
        self.msgs_total += n;
        sh.progress.acked.fetch_add(n, Ordering::Relaxed);
        if t1 >= sh.warm_end && t1 <= sh.deadline {
            self.msgs_window += n;
            self.last_done = Some(self.last_done.map_or(t1, |l| l.max(t1)));
        }
    }
}

fn us_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_micros()).unwrap_or(u64::MAX)
}

async fn call(conn: &mut Conn, sh: &Shared, req: &Req) -> Option<Resp> {
    match conn.call(req, sh.cfg.timeout).await {
        Ok(r) => Some(r),
        Err(e) => {
            sh.problem(format!("transport error on {}: {e}", req.target));
            None
        }
    }
}

/// Checks the received messages: tags, FIFO order, ages, body length.
fn take_messages(sh: &Shared, out: &mut WorkerOut, msgs: &[sqs::Msg], done: Instant) {
    let now_us = u64::try_from((done - sh.base).as_micros()).unwrap_or(u64::MAX);
    let in_window = done >= sh.warm_end && done <= sh.deadline;
    for m in msgs {
        let Some((tag, ts)) = sqs::parse_body(&m.body) else {
            if sh.cfg.track {
                sh.problem(format!(
                    "received a body the bench did not send: {:?}",
                    m.body.chars().take(40).collect::<String>()
                ));
            }
            continue;
        };
        if m.body.len() != sh.cfg.body_len && sh.cfg.mode != Mode::Drain {
            sh.problem(format!(
                "message {tag:x} came back with {} bytes, sent {}",
                m.body.len(),
                sh.cfg.body_len
            ));
        }
        if in_window {
            out.age
                .saturating_record(now_us.saturating_sub(ts).max(1) & 0xffff_ffff_ffff);
        }
        if sh.cfg.track {
            out.received.push(tag);
        }
        if sh.cfg.fifo.is_some() {
            fifo_check(sh, tag);
        }
    }
}

fn fifo_check(sh: &Shared, tag: u64) {
    let g = usize::try_from(tag >> 32).unwrap_or(usize::MAX);
    let k = u32::try_from(tag & 0xffff_ffff).unwrap_or(u32::MAX);
    let Some(next) = sh.fifo_next.get(g) else {
        sh.problem(format!("FIFO message of unknown group {g}"));
        return;
    };
    if let Err(expected) = next.compare_exchange(k, k + 1, Ordering::SeqCst, Ordering::SeqCst) {
        sh.problem(format!(
            "FIFO order violated in group {g}: received #{k}, expected #{expected}"
        ));
    }
}

pub(super) async fn worker(w: usize, mut conn: Conn, sh: Arc<Shared>) -> WorkerOut {
    let cfg = &sh.cfg;
    let p = cfg.proto;
    let mut out = WorkerOut::new();
    let mut counter: u64 = 0;
    let my_groups: Vec<u32> = cfg.fifo.map_or_else(Vec::new, |f| {
        (u32::try_from(w).unwrap_or(0)..f.groups)
            .step_by(cfg.conns.max(1))
            .collect()
    });
    let mut group_seq = vec![0u32; my_groups.len()];
    let mut gi = 0usize;
    loop {
        if Instant::now() >= sh.deadline || sh.stop.load(Ordering::Relaxed) {
            break;
        }
        if cfg.mode != Mode::Drain {
            let n = cfg.batch as u64;
            if sh.issued.fetch_add(n, Ordering::Relaxed) >= cfg.max_msgs {
                break;
            }
            // Send.
            let mut tags = Vec::with_capacity(cfg.batch);
            let req = if let Some(f) = &sh.fixed {
                f.clone()
            } else {
                let sent_us = us_since(sh.base);
                let mut bodies = Vec::with_capacity(cfg.batch);
                let mut groups = Vec::with_capacity(cfg.batch);
                let mut dedups = Vec::with_capacity(cfg.batch);
                for _ in 0..cfg.batch {
                    let tag = if cfg.fifo.is_some() {
                        if my_groups.is_empty() {
                            break;
                        }
                        let g = my_groups[gi % my_groups.len()];
                        let k = group_seq[gi % my_groups.len()];
                        group_seq[gi % my_groups.len()] += 1;
                        gi += 1;
                        groups.push(format!("g{g}"));
                        dedups.push(format!("d{g}-{k}"));
                        (u64::from(g) << 32) | u64::from(k)
                    } else {
                        counter += 1;
                        ((w as u64) << 40) | counter
                    };
                    tags.push(tag);
                    bodies.push(sqs::body(tag, sent_us, cfg.body_len));
                }
                if bodies.is_empty() {
                    break;
                }
                let content = cfg.fifo.is_some_and(|f| f.content_dedup);
                let entries: Vec<Entry<'_>> = bodies
                    .iter()
                    .enumerate()
                    .map(|(i, b)| Entry {
                        group: groups.get(i).map(String::as_str),
                        dedup: if content {
                            None
                        } else {
                            dedups.get(i).map(String::as_str)
                        },
                        body: b,
                    })
                    .collect();
                if cfg.batch == 1 {
                    sqs::send(p, &sh.url, &entries[0])
                } else {
                    sqs::send_batch(p, &sh.url, &entries)
                }
            };
            let t0 = Instant::now();
            let Some(r) = call(&mut conn, &sh, &req).await else {
                break;
            };
            let t1 = Instant::now();
            let checked = if cfg.batch == 1 {
                sqs::check_send(p, &r)
            } else {
                sqs::check_batch(p, &r, cfg.batch).map(|_| ())
            };
            if let Err(e) = checked {
                sh.problem(format!("{}: {e}", req.target));
                break;
            }
            let op = if cfg.batch == 1 {
                "SendMessage"
            } else {
                "SendMessageBatch"
            };
            out.req(&sh, op, t0, t1);
            if cfg.track {
                out.sent.extend_from_slice(&tags);
            }
            if cfg.mode == Mode::SendOnly {
                out.msgs(&sh, n, t1);
                continue;
            }
        }
        // Receive.
        let req = sqs::receive(p, &sh.url, cfg.batch, None);
        let t0 = Instant::now();
        let Some(r) = call(&mut conn, &sh, &req).await else {
            break;
        };
        let t1 = Instant::now();
        out.req(&sh, "ReceiveMessage", t0, t1);
        out.receives += 1;
        let msgs = match sqs::parse_receive(p, &r) {
            Ok(m) => m,
            Err(e) => {
                sh.problem(format!("ReceiveMessage: {e}"));
                break;
            }
        };
        if msgs.is_empty() {
            out.empty_receives += 1;
            if cfg.mode == Mode::Drain {
                if sh.empties.fetch_add(1, Ordering::SeqCst) >= 3 * cfg.conns as u32 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            continue;
        }
        if cfg.mode == Mode::Drain {
            sh.empties.store(0, Ordering::SeqCst);
            if sh.issued.fetch_add(msgs.len() as u64, Ordering::Relaxed) >= cfg.max_msgs {
                sh.stop.store(true, Ordering::SeqCst);
            }
        }
        take_messages(&sh, &mut out, &msgs, t1);
        // Delete.
        let (req, op) = if msgs.len() == 1 {
            (sqs::delete(p, &sh.url, &msgs[0].handle), "DeleteMessage")
        } else {
            let hs: Vec<&str> = msgs.iter().map(|m| m.handle.as_str()).collect();
            (sqs::delete_batch(p, &sh.url, &hs), "DeleteMessageBatch")
        };
        let t0 = Instant::now();
        let Some(r) = call(&mut conn, &sh, &req).await else {
            break;
        };
        let t1 = Instant::now();
        let checked = if msgs.len() == 1 {
            if r.status == 200 {
                Ok(())
            } else {
                Err(sqs::describe(&r))
            }
        } else {
            sqs::check_batch(p, &r, msgs.len()).map(|_| ())
        };
        if let Err(e) = checked {
            sh.problem(format!("{op}: {e}"));
            break;
        }
        out.req(&sh, op, t0, t1);
        out.msgs(&sh, msgs.len() as u64, t1);
    }
    out
}
