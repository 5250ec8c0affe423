//! The FIFO receive check: SQS lets a receive serve the message groups in any order, so the
//! model does not predict which messages a FIFO receive returns; it checks that the engine's
//! answer is one SQS could give (docs/protocol.md §6.9, §6.10, G-27).

use std::collections::{BTreeMap, HashSet};

use super::model::{Model, Msg};

impl Model {
    /// Checks a FIFO receive the engine made: at most `max` messages; per group, the messages
    /// delivered or moved form a prefix of the group's run of visible messages from its head;
    /// moved ones were past maxReceiveCount and delivered ones not; and
    /// something was served if any group could be.
    pub fn check_fifo_receive(
        &self,
        q: usize,
        max: usize,
        delivered: &[String],
        moved: &[String],
    ) -> Result<(), String> {
        let queue = &self.queues[q];
        let now = self.now;
        if delivered.len() > max {
            return Err(format!(
                "{} messages for MaxNumberOfMessages={max}",
                delivered.len()
            ));
        }
        let mut seen = HashSet::new();
        for id in delivered.iter().chain(moved) {
            if !seen.insert(id) {
                return Err(format!("{id} delivered or moved twice in one receive"));
            }
            if queue.get(id).is_none() {
                return Err(format!("{id} is not in {}", queue.setup.name));
            }
        }
        let limit = queue.redrive(q).map(|(_, l)| l);
        let mut groups: BTreeMap<&str, Vec<&Msg>> = BTreeMap::new();
        for m in &queue.msgs {
            // FIFO messages always have a group.
            groups
                .entry(m.group.as_deref().unwrap_or_default())
                .or_default()
                .push(m);
        }
        let mut servable = false;
        for (g, msgs) in &groups {
            // A group is available when its oldest message is visible; a receive takes the run
            // of visible messages from there, and nothing behind a message that is not visible
            // (docs/protocol.md §6.9). Later messages in flight do not block the head.
            let run = msgs.iter().take_while(|m| m.ready(now)).count();
            servable |= run > 0;
            let touched: Vec<bool> = msgs.iter().map(|m| seen.contains(&m.id)).collect();
            if touched.iter().skip(run).any(|t| *t) {
                return Err(format!("group {g} served past a message not visible"));
            }
            if touched.windows(2).any(|w| !w[0] && w[1]) {
                return Err(format!("group {g} served out of order: {touched:?}"));
            }
            for m in msgs.iter().filter(|m| seen.contains(&m.id)) {
                if !m.ready(now) {
                    return Err(format!("{} served while not visible", m.id));
                }
                let is_moved = moved.contains(&m.id);
                match limit {
                    None if is_moved => return Err(format!("{} moved without a policy", m.id)),
                    Some(l) if is_moved != (m.receive_count >= l) => {
                        return Err(format!(
                            "{} (received {} times, maxReceiveCount {l}) {}",
                            m.id,
                            m.receive_count,
                            if is_moved { "moved" } else { "delivered" }
                        ));
                    }
                    _ => {}
                }
            }
            let order: Vec<&String> = delivered
                .iter()
                .filter(|id| msgs.iter().any(|m| &m.id == *id))
                .collect();
            let expected: Vec<&String> = msgs
                .iter()
                .map(|m| &m.id)
                .filter(|id| delivered.contains(id))
                .collect();
            if order != expected {
                return Err(format!(
                    "group {g} delivered as {order:?}, not {expected:?}"
                ));
            }
        }
        if servable && seen.is_empty() {
            return Err("nothing served although a group was available".into());
        }
        Ok(())
    }
}
