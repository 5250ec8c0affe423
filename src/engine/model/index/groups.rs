//! Engine layer, model: the message groups of one FIFO queue and the order in which a receive
//! serves them (docs/protocol.md §6.9).
//!
//! # The rules
//!
//! * A group is **available** when its oldest undeleted message (its *head*) is visible: not
//!   in flight, not delayed. Later messages of the group being in flight do not matter.
//! * A receive fills its batch group by group, in the order in which the groups became
//!   available: from each it takes the contiguous run of visible messages that starts at the
//!   head, then moves on. A visible message behind an invisible one is not returned.
//! * A group becomes available when its head becomes visible: a new group when its first
//!   message is sent (or its delay ends), an old one when its head's visibility runs out or is
//!   set to 0, or when a delete (or a move to the dead-letter queue) leaves a visible message
//!   at its head. It then goes to the back of the order.
//!
//! # The design
//!
//! Each group keeps its sequence numbers in a `BTreeSet` (the head is the first) and, while it
//! is available, its *place*: `(available_since_ms, tick)`. `available` maps places to group
//! names, so iterating it visits exactly the available groups, oldest first. The tick is a
//! per-queue counter that orders groups made available in the same millisecond in the order the
//! engine saw it happen; the millisecond comes first so that a visibility expiry noticed late
//! (the engine promotes due messages lazily, before each change) still takes its place at the
//! moment the message became visible.
//!
//! The index (`message_index.rs`) calls [`Groups::refresh`] whenever the head of a group may have
//! changed phase or identity: a message attached to a new phase while it is the head, or the
//! head removed. Each call is O(log n). A receive iterates `available` and, per group, the
//! head's run: O(groups visited + messages returned). A group whose head is in flight is not in
//! `available` at all, so however many messages queue up behind it, a receive never looks at
//! them. After a restart, places are rebuilt from the messages' visibility times, in load order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// A place in the availability order: (available since, epoch ms; tick).
type Place = (u64, u64);

/// One message group.
#[derive(Debug)]
struct Group {
    name: Arc<str>,
    /// The name again, behind a thin pointer: each of the group's index entries holds one
    /// (8 bytes instead of the 16 of an `Arc<str>`).
    shared: Arc<String>,
    /// Sequence numbers of the group's undeleted messages, oldest (the head) first.
    seqs: BTreeSet<u64>,
    /// The group's key in [`Groups::available`] while its head is visible.
    place: Option<Place>,
}

/// The message groups of one FIFO queue and their availability order.
#[derive(Debug, Default)]
pub(super) struct Groups {
    groups: HashMap<Arc<str>, Group>,
    /// Available groups, in the order they became available.
    available: BTreeMap<Place, Arc<str>>,
    /// Tie-breaker for groups made available in the same millisecond.
    tick: u64,
}

impl Groups {
    /// Adds message `seq` to `group`; true when it is now the group's head.
    pub fn add(&mut self, group: &str, seq: u64) -> bool {
        let g = match self.groups.get_mut(group) {
            Some(g) => g,
            None => {
                let name: Arc<str> = Arc::from(group);
                self.groups.entry(Arc::clone(&name)).or_insert(Group {
                    shared: Arc::new(group.to_owned()),
                    name,
                    seqs: BTreeSet::new(),
                    place: None,
                })
            }
        };
        g.seqs.insert(seq);
        g.seqs.first() == Some(&seq)
    }

    /// The group's shared name, while it has messages.
    pub fn interned(&self, group: &str) -> Option<Arc<String>> {
        self.groups.get(group).map(|g| Arc::clone(&g.shared))
    }

    /// The group's head: its oldest undeleted message.
    pub fn head(&self, group: &str) -> Option<u64> {
        self.groups.get(group).and_then(|g| g.seqs.first().copied())
    }

    /// Whether `seq` is the head of `group`.
    pub fn is_head(&self, group: &str, seq: u64) -> bool {
        self.groups
            .get(group)
            .is_some_and(|g| g.seqs.first() == Some(&seq))
    }

    /// Removes message `seq` from `group`. True when it was the head and the group still has
    /// messages, i.e. when the caller must [`Groups::refresh`] the group.
    pub fn remove(&mut self, group: &str, seq: u64) -> bool {
        let Some(g) = self.groups.get_mut(group) else {
            return false;
        };
        let was_head = g.seqs.first() == Some(&seq);
        g.seqs.remove(&seq);
        if g.seqs.is_empty() {
            if let Some(p) = g.place {
                self.available.remove(&p);
            }
            self.groups.remove(group);
            return false;
        }
        was_head
    }

    /// Re-reads whether `group` is available, `visible(seq)` telling whether a message is
    /// visible. A group that becomes available goes to the back of the order as of `since`;
    /// one that stays available keeps its place. True when the group has just become available.
    pub fn refresh(&mut self, group: &str, since: u64, visible: impl Fn(u64) -> bool) -> bool {
        let Some(g) = self.groups.get_mut(group) else {
            return false;
        };
        let head_visible = g.seqs.first().is_some_and(|&s| visible(s));
        match (head_visible, g.place) {
            (true, None) => {
                self.tick += 1;
                let place = (since, self.tick);
                g.place = Some(place);
                self.available.insert(place, Arc::clone(&g.name));
                true
            }
            (false, Some(place)) => {
                self.available.remove(&place);
                g.place = None;
                false
            }
            _ => false,
        }
    }

    /// Up to `max` messages to hand out: available groups in order, from each the run of
    /// visible messages starting at its head, stopping at the first message outside the scan
    /// window (`in_window`).
    pub fn pick(
        &self,
        max: usize,
        visible: impl Fn(u64) -> bool,
        in_window: impl Fn(u64) -> bool,
    ) -> Vec<u64> {
        let mut out = Vec::new();
        for name in self.available.values() {
            if out.len() >= max {
                break;
            }
            let Some(g) = self.groups.get(name) else {
                continue;
            };
            for &s in &g.seqs {
                if out.len() >= max || !in_window(s) || !visible(s) {
                    break;
                }
                out.push(s);
            }
        }
        out
    }

    /// How many groups are available.
    #[cfg(test)]
    pub fn available_count(&self) -> usize {
        self.available.len()
    }

    /// Forgets every group.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.available.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_follows_availability() {
        let mut g = Groups::default();
        let all = |_: u64| true;
        assert!(g.add("a", 1));
        assert!(g.refresh("a", 10, all));
        assert!(g.add("b", 2));
        assert!(g.refresh("b", 10, all));
        assert!(!g.add("a", 3));
        // Already available: keeps its place.
        assert!(!g.refresh("a", 20, all));
        assert_eq!(g.pick(10, all, all), vec![1, 3, 2]);
        // a's head in flight: a is skipped, even though 3 is visible.
        assert!(!g.refresh("a", 20, |s| s != 1));
        assert_eq!(g.pick(10, |s| s != 1, all), vec![2]);
        // Head removed: a comes back, behind b.
        assert!(g.remove("a", 1));
        assert!(g.refresh("a", 30, all));
        assert_eq!(g.pick(10, all, all), vec![2, 3]);
        assert_eq!(g.pick(1, all, all), vec![2]);
        // The window stops a run and skips a group whose head is outside it.
        assert_eq!(g.pick(10, all, |s| s <= 2), vec![2]);
        // Removing the last message drops the group.
        assert!(!g.remove("a", 3));
        assert_eq!(g.available_count(), 1);
        g.clear();
        assert_eq!(g.available_count(), 0);
    }
}
