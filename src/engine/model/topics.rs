//! Engine layer, model: every SNS topic (by ARN, so by account, region and name) and the index
//! from a subscription's ARN to its topic. Guarded by the engine lock with the queues, so a
//! publish and its deliveries change both in one step.

use foldhash::HashMap;

use super::outbox::Outbox;
use super::topic::{Subscription, Topic};
use crate::command::Scope;
use crate::engine::store::sns::LoadedSns;

/// All topics.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    by_arn: HashMap<String, Topic>,
    /// Subscription ARN → topic ARN.
    sub_topic: HashMap<String, String>,
    /// The next subscription's order number.
    next_order: u64,
    /// Deliveries for the tools layer's worker (http, https, lambda).
    pub outbox: Outbox,
}

impl Topics {
    /// The topics, subscriptions and deduplication entries read back from the store.
    pub fn from_loaded(loaded: LoadedSns) -> Self {
        let mut t = Self::default();
        for (arn, rec) in loaded.topics {
            t.insert(Topic::from_record(arn, rec));
        }
        let mut subs = loaded.subscriptions;
        subs.sort_by_key(|(_, r)| r.order);
        for (arn, rec) in subs {
            let topic = rec.topic_arn.clone();
            if t.by_arn.contains_key(&topic) {
                t.add_subscription(&topic, Subscription::from_record(arn, rec));
            }
        }
        for (topic, key, rec) in loaded.dedup {
            if let Some(topic) = t.by_arn.get_mut(&topic) {
                topic.remember(key, rec);
            }
        }
        t
    }

    /// How many topics there are.
    pub fn len(&self) -> usize {
        self.by_arn.len()
    }

    /// A topic by ARN.
    pub fn get(&self, arn: &str) -> Option<&Topic> {
        self.by_arn.get(arn)
    }

    /// A topic by ARN, to change it.
    pub fn get_mut(&mut self, arn: &str) -> Option<&mut Topic> {
        self.by_arn.get_mut(arn)
    }

    /// Adds a topic (new or loaded).
    pub fn insert(&mut self, t: Topic) {
        self.by_arn.insert(t.arn.clone(), t);
    }

    /// Removes a topic and forgets its subscriptions.
    pub fn remove(&mut self, arn: &str) -> Option<Topic> {
        let t = self.by_arn.remove(arn)?;
        for s in t.subscriptions.iter() {
            self.sub_topic.remove(&s.arn);
        }
        Some(t)
    }

    /// The ARNs of the topics in `scope`, sorted.
    pub fn arns_in(&self, scope: &Scope) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .by_arn
            .values()
            .filter(|t| t.scope == *scope)
            .map(|t| t.arn.as_str())
            .collect();
        v.sort_unstable();
        v
    }

    /// Every topic, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Topic> {
        self.by_arn.values()
    }

    /// The topic a subscription belongs to.
    pub fn topic_of(&self, sub_arn: &str) -> Option<&str> {
        self.sub_topic.get(sub_arn).map(String::as_str)
    }

    /// A subscription and its topic.
    pub fn subscription(&self, sub_arn: &str) -> Option<(&Topic, &Subscription)> {
        let t = self.by_arn.get(self.sub_topic.get(sub_arn)?)?;
        let s = t.subscriptions.iter().find(|s| s.arn == sub_arn)?;
        Some((t, s))
    }

    /// Adds a subscription to a topic that exists, numbering it when it is new.
    pub fn add_subscription(&mut self, topic_arn: &str, mut s: Subscription) {
        let Some(t) = self.by_arn.get_mut(topic_arn) else {
            return;
        };
        if s.order == 0 {
            self.next_order += 1;
            s.order = self.next_order;
        }
        self.next_order = self.next_order.max(s.order);
        self.sub_topic.insert(s.arn.clone(), topic_arn.to_owned());
        t.subscriptions_mut().push(s);
    }

    /// Removes a subscription; answers it with its topic's ARN.
    pub fn remove_subscription(&mut self, sub_arn: &str) -> Option<(String, Subscription)> {
        let topic_arn = self.sub_topic.remove(sub_arn)?;
        let t = self.by_arn.get_mut(&topic_arn)?;
        let i = t.subscriptions.iter().position(|s| s.arn == sub_arn)?;
        let s = t.subscriptions_mut().remove(i);
        t.deleted_subscriptions += 1;
        Some((topic_arn, s))
    }

    /// Drops everything (reset).
    pub fn clear(&mut self) {
        self.by_arn.clear();
        self.sub_topic.clear();
        self.outbox.clear();
    }
}
