//! Tools layer: the fault rules in force on one server, each with its own seeded generator so
//! that a failing test replays exactly, and the decisions they make about a request.
//!
//! FIFO guarantees are never broken: duplicates, reordering and empty receives apply to
//! standard queues only.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use super::rule::{FaultRule, Latency};
use crate::command::{Action, Command, Message};
use crate::engine::ReceiveOrder;
use crate::error::SqsError;

/// Most fault rules active at once: every SQS request is checked against each of them, so an
/// unbounded list would let a client slow the server down and grow its memory.
pub const MAX_RULES: usize = 1000;

/// Most messages kept for duplicate delivery per rule.
const MAX_POOLED: usize = 1000;

struct Active {
    id: String,
    rule: FaultRule,
    rng: fastrand::Rng,
    /// Received messages of standard queues waiting to be handed out again, with their queue.
    pooled: VecDeque<(String, Message)>,
}

/// What to do before executing a request.
#[derive(Debug, Default)]
pub(super) struct Decision {
    /// Sleep this long first.
    pub latency: Option<Duration>,
    /// Answer with this error instead of executing.
    pub error: Option<SqsError>,
    /// Answer this receive with no messages instead of executing.
    pub empty_receive: bool,
}

/// Labels of the injected-fault counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    kind: &'static str,
}

/// The active rules of one server.
pub struct Faults {
    rules: Mutex<Vec<Active>>,
    /// How many rules there are, read without the lock: with none (the usual case) a request
    /// pays one atomic load, not a mutex.
    active: std::sync::atomic::AtomicUsize,
    next_id: AtomicU64,
    injected: Family<KindLabels, Counter>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults").finish_non_exhaustive()
    }
}

fn is_fifo(queue: Option<&str>) -> bool {
    queue.is_some_and(|q| q.ends_with(".fifo"))
}

impl Faults {
    /// No rules.
    #[must_use]
    pub fn new() -> Self {
        Self {
            rules: Mutex::new(Vec::new()),
            active: std::sync::atomic::AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            injected: Family::default(),
        }
    }

    /// Whether any rule is in force.
    pub(super) fn any(&self) -> bool {
        !self.none()
    }

    fn none(&self) -> bool {
        self.active.load(Ordering::Acquire) == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Active>> {
        self.rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The counter family for `/metrics` (`localsqs_faults_injected_total{kind}`).
    pub(crate) fn counter(&self) -> Family<KindLabels, Counter> {
        self.injected.clone()
    }

    fn count(&self, kind: &'static str) {
        self.injected.get_or_create(&KindLabels { kind }).inc();
        tracing::debug!(kind, "fault injected");
    }

    /// Adds a rule and returns its id; refused past [`MAX_RULES`].
    pub fn add(&self, rule: FaultRule) -> Result<String, String> {
        rule.validate()?;
        let mut rules = self.lock();
        if rules.len() >= MAX_RULES {
            return Err(format!(
                "at most {MAX_RULES} fault rules can be active; remove some first"
            ));
        }
        let id = format!("fault-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let rng = rule
            .seed
            .map_or_else(fastrand::Rng::new, fastrand::Rng::with_seed);
        rules.push(Active {
            id: id.clone(),
            rule,
            rng,
            pooled: VecDeque::new(),
        });
        self.active.store(rules.len(), Ordering::Release);
        Ok(id)
    }

    /// Every rule with its id, oldest first.
    #[must_use]
    pub fn list(&self) -> Vec<(String, FaultRule)> {
        self.lock()
            .iter()
            .map(|a| (a.id.clone(), a.rule.clone()))
            .collect()
    }

    /// Removes one rule; whether it existed.
    pub fn remove(&self, id: &str) -> bool {
        let mut rules = self.lock();
        let before = rules.len();
        rules.retain(|a| a.id != id);
        self.active.store(rules.len(), Ordering::Release);
        rules.len() != before
    }

    /// Removes every rule.
    pub fn clear(&self) {
        let mut rules = self.lock();
        rules.clear();
        self.active.store(0, Ordering::Release);
    }
}

/// `reorder` rules: the engine asks, for each receive on a standard queue, whether to take
/// messages in random order.
impl ReceiveOrder for Faults {
    /// When a receive on `queue_name` should take messages in random order: the seed to draw
    /// it from, taken from the matching rule's generator.
    fn seed(&self, queue_name: &str) -> Option<u64> {
        let queue = Some(queue_name);
        if self.none() || is_fifo(queue) {
            return None;
        }
        let seed = self
            .lock()
            .iter_mut()
            .find(|a| a.rule.reorder && a.rule.matches(Action::ReceiveMessage, queue))
            .map(|a| a.rng.u64(..))?;
        self.count("reorder");
        Some(seed)
    }
}

impl Faults {
    /// Decides what happens to a request before it runs.
    pub(super) fn decide(&self, action: Action, command: &Command) -> Decision {
        let mut out = Decision::default();
        if self.none() {
            return out;
        }
        let queue = command.queue_name();
        let mut rules = self.lock();
        if rules.is_empty() {
            return out;
        }
        for a in rules.iter_mut().filter(|a| a.rule.matches(action, queue)) {
            if let Some(l) = a.rule.latency_ms {
                let ms = match l {
                    Latency::Fixed(ms) => ms,
                    Latency::Range([lo, hi]) => a.rng.u64(lo..=hi),
                };
                out.latency = Some(out.latency.unwrap_or_default() + Duration::from_millis(ms));
            }
            if out.error.is_none()
                && let Some(e) = a.rule.error
                && a.rng.f64() < a.rule.error_rate.unwrap_or(1.0)
            {
                out.error = Some(e.to_error());
            }
            if let (Some(rate), Command::ReceiveMessage(r)) = (a.rule.empty_receive_rate, command)
                && !is_fifo(queue)
                && r.wait_time_seconds.unwrap_or(0) == 0
                && a.rng.f64() < rate
            {
                out.empty_receive = true;
            }
        }
        drop(rules);
        if out.latency.is_some() {
            self.count("latency");
        }
        if out.error.is_some() {
            self.count("error");
        } else if out.empty_receive {
            self.count("empty_receive");
        }
        out
    }

    /// After a successful receive of a standard queue: pools some of the messages for a later
    /// duplicate delivery, and adds earlier pooled ones, up to `max` messages in all.
    pub(super) fn after_receive(&self, queue: &str, max: usize, messages: &mut Vec<Message>) {
        if self.none() || is_fifo(Some(queue)) {
            return;
        }
        let mut added = 0;
        let mut rules = self.lock();
        for a in rules
            .iter_mut()
            .filter(|a| a.rule.matches(Action::ReceiveMessage, Some(queue)))
        {
            let Some(rate) = a.rule.duplicate_rate else {
                continue;
            };
            let fresh: Vec<Message> = messages
                .iter()
                .filter(|_| a.rng.f64() < rate)
                .cloned()
                .collect();
            while messages.len() < max {
                let Some(i) = a.pooled.iter().position(|(q, _)| q == queue) else {
                    break;
                };
                if let Some((_, m)) = a.pooled.remove(i) {
                    messages.push(m);
                    added += 1;
                }
            }
            for m in fresh {
                if a.pooled.len() == MAX_POOLED {
                    a.pooled.pop_front();
                }
                a.pooled.push_back((queue.to_owned(), m));
            }
        }
        drop(rules);
        for _ in 0..added {
            self.count("duplicate");
        }
    }

    /// A message deleted through `receipt_handle` is never handed out again.
    pub(super) fn deleted(&self, receipt_handle: &str) {
        if self.none() {
            return;
        }
        for a in self.lock().iter_mut() {
            a.pooled.retain(|(_, m)| m.receipt_handle != receipt_handle);
        }
    }
}

impl Default for Faults {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::super::rule::InjectedError;
    use super::*;
    use crate::command::{ReceiveMessage, SendMessage};
    use crate::error::ErrorCode;

    fn send(queue: &str) -> Command {
        Command::SendMessage(SendMessage {
            queue_url: format!("http://h/000000000000/{queue}"),
            ..SendMessage::default()
        })
    }

    #[test]
    fn errors_follow_the_rate_and_the_seed_replays() {
        let run = || {
            let f = Faults::new();
            f.add(FaultRule {
                error: Some(InjectedError::RequestThrottled),
                error_rate: Some(0.5),
                seed: Some(7),
                ..FaultRule::default()
            })
            .expect("valid");
            (0..200)
                .map(|_| f.decide(Action::SendMessage, &send("q")).error.is_some())
                .collect::<Vec<_>>()
        };
        let first = run();
        let hits = first.iter().filter(|e| **e).count();
        assert!((60..=140).contains(&hits), "{hits} of 200");
        assert_eq!(first, run(), "the same seed gives the same faults");
    }

    #[test]
    fn at_most_max_rules_are_active() {
        let f = Faults::new();
        let rule = || FaultRule {
            error: Some(InjectedError::ServiceUnavailable),
            ..FaultRule::default()
        };
        let ids: Vec<String> = (0..MAX_RULES)
            .map(|_| f.add(rule()).expect("under the limit"))
            .collect();
        let err = f.add(rule()).expect_err("one too many");
        assert_eq!(
            err,
            "at most 1000 fault rules can be active; remove some first"
        );
        assert!(f.remove(&ids[0]));
        f.add(rule()).expect("room again after a removal");
    }

    #[test]
    fn rules_match_queue_and_action() {
        let f = Faults::new();
        f.add(FaultRule {
            queue: Some("a".into()),
            actions: vec!["SendMessage".into()],
            error: Some(InjectedError::ServiceUnavailable),
            ..FaultRule::default()
        })
        .expect("valid");
        let e = f
            .decide(Action::SendMessage, &send("a"))
            .error
            .expect("hit");
        assert_eq!(e.code, ErrorCode::ServiceUnavailable);
        assert!(f.decide(Action::SendMessage, &send("b")).error.is_none());
        let recv = Command::ReceiveMessage(ReceiveMessage {
            queue_url: "http://h/000000000000/a".into(),
            ..ReceiveMessage::default()
        });
        assert!(f.decide(Action::ReceiveMessage, &recv).error.is_none());
    }

    #[test]
    fn duplicates_come_back_later_but_never_on_fifo_queues_or_after_delete() {
        let f = Faults::new();
        f.add(FaultRule {
            duplicate_rate: Some(1.0),
            ..FaultRule::default()
        })
        .expect("valid");
        let msg = |h: &str| Message {
            receipt_handle: h.into(),
            ..Message::default()
        };
        let mut first = vec![msg("h1"), msg("h2")];
        f.after_receive("q", 10, &mut first);
        assert_eq!(first.len(), 2);
        f.deleted("h2");
        let mut later = Vec::new();
        f.after_receive("q", 10, &mut later);
        let handles: Vec<&str> = later.iter().map(|m| m.receipt_handle.as_str()).collect();
        assert_eq!(handles, ["h1"]);
        let mut fifo = vec![msg("f1")];
        f.after_receive("q.fifo", 10, &mut fifo);
        let mut fifo_later = Vec::new();
        f.after_receive("q.fifo", 10, &mut fifo_later);
        assert!(fifo_later.is_empty());
    }
}
