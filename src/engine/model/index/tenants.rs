//! Engine layer, model: the tenants of a fair queue, a standard queue whose messages carry a
//! MessageGroupId, and the order in which a receive serves them (docs/protocol.md §6.17).
//!
//! # The rule
//!
//! * A tenant is a MessageGroupId. Each message without one is a tenant of its own, so it is
//!   never noisy (it has at most one message in flight).
//! * A tenant is **noisy** when it has at least [`NOISY_MIN_IN_FLIGHT`] messages in flight and
//!   more than a tenth of the queue's. Which tenants are noisy is decided once per receive.
//! * A receive takes the oldest ready messages of the quiet tenants first; only when they run
//!   out does it take the noisy tenants' messages, the tenant with fewest in flight first, each
//!   tenant's oldest first. With no noisy tenant it takes the oldest ready messages, as a queue
//!   without group ids does.
//!
//! # The design
//!
//! The index keeps this structure only while the queue holds a message with a group id
//! ([`Tenants::new`] on the first, dropped after the last), so a queue without group ids does
//! no work for it. Every ready message sits in one *bucket*: its tenant's, or the one bucket of
//! the messages without a group id; each bucket is a [`SeqSet`]. `heads` orders the buckets by
//! their oldest ready message, and `busy` the tenants with at least [`NOISY_MIN_IN_FLIGHT`] in
//! flight by that count. A phase change costs a hash lookup and O(log n) set updates.
//!
//! Finding the noisy tenants reads `busy` from the top: at most nine tenants can each hold more
//! than a tenth of the in-flight messages, so it stops after at most ten. The `max` oldest
//! quiet messages all lie in the first `max` quiet buckets of `heads` (each bucket holds its
//! head, and every message of a later bucket is younger than those heads), so a receive visits
//! at most `max` + 9 entries of `heads` and merges at most `max` buckets, taking `max` messages:
//! O((max + 9) · log n), however long a noisy tenant's backlog is.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use super::msg::Phase;
use super::seqset::SeqSet;

/// A tenant with at least this many messages in flight, and more than a tenth of the queue's,
/// is noisy [D: developer guide, "How Amazon SQS fair queues work"].
pub(crate) const NOISY_MIN_IN_FLIGHT: usize = 30;
/// The share of the queue's in-flight messages a noisy tenant exceeds, as a divisor (a tenth).
const NOISY_SHARE_DIVISOR: usize = 10;

/// A bucket: a tenant's name, or `None` for the messages without a group id.
type Key = Option<Arc<str>>;

/// One named tenant.
#[derive(Debug)]
struct Tenant {
    name: Arc<str>,
    /// The name again, behind a thin pointer: each of the tenant's index entries holds one.
    shared: Arc<String>,
    /// Its ready messages.
    ready: SeqSet,
    /// Its messages in flight.
    in_flight: usize,
    /// All its messages.
    messages: usize,
}

/// The tenants of one standard queue (see the module comment).
#[derive(Debug)]
pub(crate) struct Tenants {
    named: HashMap<Arc<str>, Tenant>,
    /// Ready messages without a group id.
    loose: SeqSet,
    /// The oldest ready message of every bucket that has one, and its bucket.
    heads: BTreeMap<u64, Key>,
    /// Tenants with at least [`NOISY_MIN_IN_FLIGHT`] in flight, by that count.
    busy: BTreeSet<(usize, Arc<str>)>,
}

/// The noisy tenants of one receive, fewest in flight first.
#[derive(Debug, Clone)]
pub(crate) struct Noisy(Vec<Arc<str>>);

impl Noisy {
    fn contains(&self, key: &Key) -> bool {
        key.as_ref()
            .is_some_and(|k| self.0.iter().any(|n| Arc::ptr_eq(n, k)))
    }

    /// The tenants' names, fewest in flight first.
    #[cfg(test)]
    pub fn names(&self) -> Vec<&str> {
        self.0.iter().map(|n| &**n).collect()
    }
}

impl Tenants {
    /// Tenants for a queue whose ready messages are `ready`, none of them with a group id.
    pub fn new(ready: &SeqSet) -> Self {
        let loose = ready.clone();
        let mut heads = BTreeMap::new();
        if let Some(first) = loose.first() {
            heads.insert(first, None);
        }
        Self {
            named: HashMap::new(),
            loose,
            heads,
            busy: BTreeSet::new(),
        }
    }

    /// Counts a new message of `group`; answers the group's shared name for its index entry.
    /// The message is placed by [`Tenants::attach`].
    pub fn add(&mut self, group: &str) -> Arc<String> {
        let t = match self.named.get_mut(group) {
            Some(t) => t,
            None => {
                let name: Arc<str> = Arc::from(group);
                self.named.entry(Arc::clone(&name)).or_insert(Tenant {
                    shared: Arc::new(group.to_owned()),
                    name,
                    ready: SeqSet::default(),
                    in_flight: 0,
                    messages: 0,
                })
            }
        };
        t.messages += 1;
        Arc::clone(&t.shared)
    }

    /// Forgets a message of `group` that has been detached. True when no message with a group
    /// id is left, so that the index can drop this structure.
    pub fn remove(&mut self, group: &str) -> bool {
        if let Some(t) = self.named.get_mut(group) {
            t.messages -= 1;
            if t.messages == 0 {
                self.named.remove(group);
            }
        }
        self.named.is_empty()
    }

    /// A message of `group` (`None`: without one) entered `phase`.
    pub fn attach(&mut self, group: Option<&str>, seq: u64, phase: Phase) {
        match phase {
            Phase::Ready => self.change_ready(group, seq, true),
            Phase::InFlight => self.change_in_flight(group, true),
            Phase::Delayed => {}
        }
    }

    /// A message of `group` left `phase`.
    pub fn detach(&mut self, group: Option<&str>, seq: u64, phase: Phase) {
        match phase {
            Phase::Ready => self.change_ready(group, seq, false),
            Phase::InFlight => self.change_in_flight(group, false),
            Phase::Delayed => {}
        }
    }

    fn change_ready(&mut self, group: Option<&str>, seq: u64, insert: bool) {
        let (set, key) = match group {
            None => (&mut self.loose, None),
            Some(g) => match self.named.get_mut(g) {
                Some(t) => (&mut t.ready, Some(Arc::clone(&t.name))),
                None => return,
            },
        };
        let before = set.first();
        if insert {
            set.insert(seq);
        } else {
            set.remove(seq);
        }
        let after = set.first();
        if before != after {
            if let Some(b) = before {
                self.heads.remove(&b);
            }
            if let Some(a) = after {
                self.heads.insert(a, key);
            }
        }
    }

    fn change_in_flight(&mut self, group: Option<&str>, up: bool) {
        let Some(t) = group.and_then(|g| self.named.get_mut(g)) else {
            return;
        };
        if t.in_flight >= NOISY_MIN_IN_FLIGHT {
            self.busy.remove(&(t.in_flight, Arc::clone(&t.name)));
        }
        if up {
            t.in_flight += 1;
        } else {
            t.in_flight -= 1;
        }
        if t.in_flight >= NOISY_MIN_IN_FLIGHT {
            self.busy.insert((t.in_flight, Arc::clone(&t.name)));
        }
    }

    /// The noisy tenants, given the queue's count of messages in flight; `None` when there is
    /// none. Reads at most ten entries of `busy`.
    pub fn noisy(&self, in_flight: usize) -> Option<Noisy> {
        let mut names: Vec<Arc<str>> = self
            .busy
            .iter()
            .rev()
            .take_while(|(n, _)| n * NOISY_SHARE_DIVISOR > in_flight)
            .map(|(_, name)| Arc::clone(name))
            .collect();
        if names.is_empty() {
            return None;
        }
        names.reverse();
        Some(Noisy(names))
    }

    fn bucket(&self, key: &Key) -> Option<&SeqSet> {
        match key {
            None => Some(&self.loose),
            Some(name) => self.named.get(name).map(|t| &t.ready),
        }
    }

    /// Up to `max` ready messages: the oldest of the quiet tenants, then those of the `noisy`
    /// ones, fewest in flight first (see the module comment for the cost).
    pub fn pick(&self, max: usize, noisy: &Noisy) -> Vec<u64> {
        let mut out = Vec::with_capacity(max.min(64));
        let mut runs = Vec::new();
        let mut next = BinaryHeap::new();
        for key in self.heads.values().filter(|k| !noisy.contains(k)).take(max) {
            let Some(set) = self.bucket(key) else {
                continue;
            };
            let mut run = set.iter();
            if let Some(first) = run.next() {
                next.push(Reverse((first, runs.len())));
                runs.push(run);
            }
        }
        while out.len() < max {
            let Some(Reverse((seq, i))) = next.pop() else {
                break;
            };
            out.push(seq);
            if let Some(s) = runs[i].next() {
                next.push(Reverse((s, i)));
            }
        }
        for name in &noisy.0 {
            let Some(t) = self.named.get(name) else {
                continue;
            };
            let room = max - out.len();
            if room == 0 {
                break;
            }
            out.extend(t.ready.iter().take(room));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tenants built from a plan: `(seq, group)` messages, all ready.
    fn tenants(msgs: &[(u64, Option<&str>)]) -> Tenants {
        let mut t = Tenants::new(&SeqSet::default());
        for &(seq, g) in msgs {
            if let Some(g) = g {
                t.add(g);
            }
            t.attach(g, seq, Phase::Ready);
        }
        t
    }

    /// Receives `seq` of `group`: ready → in flight.
    fn take(t: &mut Tenants, group: Option<&str>, seq: u64) {
        t.detach(group, seq, Phase::Ready);
        t.attach(group, seq, Phase::InFlight);
    }

    #[test]
    fn noisy_needs_thirty_in_flight_and_a_tenth_of_the_queue() {
        let mut msgs: Vec<(u64, Option<&str>)> = (1..=100).map(|s| (s, Some("a"))).collect();
        msgs.extend((101..=110).map(|s| (s, Some("b"))));
        msgs.push((111, None));
        let mut t = tenants(&msgs);
        for seq in 1..=29 {
            take(&mut t, Some("a"), seq);
        }
        assert!(t.noisy(29).is_none(), "29 in flight is not enough");
        take(&mut t, Some("a"), 30);
        let noisy = t.noisy(30).expect("30 of 30 is noisy");
        assert_eq!(noisy.names(), ["a"]);
        assert!(t.noisy(300).is_none(), "30 of 300 is not more than a tenth");
        // Quiet tenants first, oldest first; then the noisy one.
        assert_eq!(t.pick(5, &noisy), [101, 102, 103, 104, 105]);
        assert_eq!(
            t.pick(13, &noisy),
            [
                101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 31, 32
            ]
        );
        // Delivered back: a is quiet again.
        t.detach(Some("a"), 30, Phase::InFlight);
        t.attach(Some("a"), 30, Phase::Ready);
        assert!(t.noisy(29).is_none());
    }

    #[test]
    fn several_noisy_tenants_fewest_in_flight_first() {
        let mut msgs: Vec<(u64, Option<&str>)> = (1..=50).map(|s| (s, Some("a"))).collect();
        msgs.extend((51..=90).map(|s| (s, Some("b"))));
        msgs.push((91, Some("c")));
        let mut t = tenants(&msgs);
        for seq in 1..=45 {
            take(&mut t, Some("a"), seq);
        }
        for seq in 51..=85 {
            take(&mut t, Some("b"), seq);
        }
        let noisy = t.noisy(80).expect("both are noisy");
        assert_eq!(noisy.names(), ["b", "a"]);
        assert_eq!(t.pick(4, &noisy), [91, 86, 87, 88]);
        assert_eq!(t.pick(10, &noisy), [91, 86, 87, 88, 89, 90, 46, 47, 48, 49]);
    }

    #[test]
    fn removing_the_last_grouped_message_empties_the_tenants() {
        let mut t = tenants(&[(1, Some("a")), (2, None), (3, Some("b"))]);
        t.detach(Some("a"), 1, Phase::Ready);
        assert!(!t.remove("a"));
        t.detach(Some("b"), 3, Phase::Ready);
        assert!(t.remove("b"), "only ungrouped messages are left");
        assert_eq!(t.heads.len(), 1);
    }
}
