//! Engine layer, model: one SNS topic with its subscriptions and, for a FIFO topic, its
//! deduplication window and sequence numbers (docs/sns.md §4–§6). Converted to and from the
//! store's records (`store/sns.rs`); the compiled filter policy and the raw-delivery flag of a
//! subscription are derived from its attributes and never stored.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use foldhash::HashMap;

use crate::command::Scope;
use crate::command::sns::filter::FilterPolicy;
use crate::engine::store::record::ScopeRecord;
use crate::engine::store::sns_record::{SnsDedupRecord, SnsOp, SubscriptionRecord, TopicRecord};

/// A FIFO topic's first sequence number is above this (§2, [V] values; the counter reading
/// is [E]).
pub(crate) const SEQUENCE_BASE: u128 = 10_000_000_000_000_000_000;
/// How far apart consecutive sequence numbers of a topic are.
pub(crate) const SEQUENCE_STEP: u128 = 1000;
/// The FIFO deduplication window (§6.6).
pub(crate) const DEDUP_WINDOW_MS: u64 = 300_000;

/// One subscription.
#[derive(Debug, Clone)]
pub(crate) struct Subscription {
    /// Its ARN.
    pub arn: String,
    /// Protocol.
    pub protocol: String,
    /// Endpoint.
    pub endpoint: String,
    /// The subscriber's account.
    pub owner: String,
    /// Set attributes.
    pub attributes: BTreeMap<String, String>,
    /// Waiting for confirmation with this token.
    pub pending_token: Option<String>,
    /// `ConfirmationWasAuthenticated`.
    pub authenticated: bool,
    /// Subscribe order.
    pub order: u64,
    /// The compiled FilterPolicy, when it has one.
    pub filter: Option<Arc<FilterPolicy>>,
    /// `RawMessageDelivery=true`.
    pub raw: bool,
}

impl Subscription {
    /// A subscription from its stored record.
    pub fn from_record(arn: String, r: SubscriptionRecord) -> Self {
        let mut s = Self {
            arn,
            protocol: r.protocol,
            endpoint: r.endpoint,
            owner: r.owner,
            attributes: r.attributes,
            pending_token: r.pending_token,
            authenticated: r.authenticated,
            order: r.order,
            filter: None,
            raw: false,
        };
        s.refresh();
        s
    }

    /// Derives the filter and the raw flag again after its attributes changed.
    pub fn refresh(&mut self) {
        self.raw = self.attr("RawMessageDelivery") == Some("true");
        let body = self.attr("FilterPolicyScope") == Some("MessageBody");
        self.filter = self
            .attr("FilterPolicy")
            .and_then(|p| FilterPolicy::compile(p, body).ok())
            .map(Arc::new);
    }

    /// An attribute's stored value.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    /// Whether it is confirmed (deliveries go only to confirmed subscriptions).
    pub fn confirmed(&self) -> bool {
        self.pending_token.is_none()
    }

    /// The op that stores it.
    pub fn put(&self, topic_arn: &str) -> SnsOp {
        SnsOp::PutSubscription(
            self.arn.clone(),
            SubscriptionRecord {
                topic_arn: topic_arn.to_owned(),
                protocol: self.protocol.clone(),
                endpoint: self.endpoint.clone(),
                owner: self.owner.clone(),
                attributes: self.attributes.clone(),
                pending_token: self.pending_token.clone(),
                authenticated: self.authenticated,
                order: self.order,
            },
        )
    }
}

/// One topic.
#[derive(Debug, Clone)]
pub(crate) struct Topic {
    /// Its ARN.
    pub arn: String,
    /// Its name.
    pub name: String,
    /// Its account and region.
    pub scope: Scope,
    /// FIFO or standard.
    pub fifo: bool,
    /// Set attributes.
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// Subscriptions in subscribe order; shared with publishes that read them outside the lock.
    pub subscriptions: Arc<Vec<Subscription>>,
    /// Bumped by every change that alters what a publish delivers.
    pub generation: u64,
    /// FIFO: remembered publishes by deduplication key, and their expiry order.
    dedup: HashMap<String, SnsDedupRecord>,
    expiry: VecDeque<(u64, String)>,
    /// FIFO: the latest sequence number issued.
    pub last_sequence: u128,
    /// Subscriptions deleted so far.
    pub deleted_subscriptions: u64,
    /// Messages published (for `/metrics`; not stored).
    pub published: u64,
    /// Messages delivered to subscriptions (for `/metrics`; not stored).
    pub delivered: u64,
}

impl Topic {
    /// A new topic.
    pub fn new(arn: String, name: String, scope: Scope, fifo: bool) -> Self {
        Self {
            arn,
            name,
            scope,
            fifo,
            attributes: BTreeMap::new(),
            tags: BTreeMap::new(),
            subscriptions: Arc::new(Vec::new()),
            generation: 0,
            dedup: HashMap::default(),
            expiry: VecDeque::new(),
            last_sequence: SEQUENCE_BASE,
            deleted_subscriptions: 0,
            published: 0,
            delivered: 0,
        }
    }

    /// A topic from its stored record (subscriptions and dedup entries are added after).
    pub fn from_record(arn: String, r: TopicRecord) -> Self {
        let mut t = Self::new(arn, r.name, r.scope.into(), r.fifo);
        t.attributes = r.attributes;
        t.tags = r.tags;
        t.last_sequence = r.last_sequence.max(SEQUENCE_BASE);
        t.deleted_subscriptions = r.deleted_subscriptions;
        t
    }

    /// The op that stores it.
    pub fn put(&self) -> SnsOp {
        SnsOp::PutTopic(
            self.arn.clone(),
            TopicRecord {
                name: self.name.clone(),
                scope: ScopeRecord::from(self.scope.clone()),
                fifo: self.fifo,
                attributes: self.attributes.clone(),
                tags: self.tags.clone(),
                last_sequence: self.last_sequence,
                deleted_subscriptions: self.deleted_subscriptions,
            },
        )
    }

    /// An attribute's stored value.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    /// The subscriptions, to change them (a publish reading the old list keeps it).
    pub fn subscriptions_mut(&mut self) -> &mut Vec<Subscription> {
        self.generation += 1;
        Arc::make_mut(&mut self.subscriptions)
    }

    /// Forgets expired deduplication entries, pushing the ops that delete them and, when any
    /// went, the op that keeps the latest sequence number.
    pub fn prune(&mut self, now: u64, ops: &mut Vec<crate::engine::store::schema::Op>) {
        let mut pruned = false;
        while let Some((at, _)) = self.expiry.front() {
            if *at > now {
                break;
            }
            let Some((_, key)) = self.expiry.pop_front() else {
                break;
            };
            if self.dedup.get(&key).is_some_and(|r| r.expires_ms <= now) {
                self.dedup.remove(&key);
                ops.push(crate::engine::store::schema::Op::Sns(SnsOp::DeleteDedup(
                    self.arn.clone(),
                    key,
                )));
                pruned = true;
            }
        }
        if pruned {
            ops.push(crate::engine::store::schema::Op::Sns(self.put()));
        }
    }

    /// The original publish a deduplication key names, within its window.
    pub fn duplicate_of(&self, key: &str, now: u64) -> Option<&SnsDedupRecord> {
        self.dedup.get(key).filter(|r| r.expires_ms > now)
    }

    /// Remembers a publish (loaded or new).
    pub fn remember(&mut self, key: String, rec: SnsDedupRecord) {
        self.last_sequence = self.last_sequence.max(rec.sequence_number);
        self.expiry.push_back((rec.expires_ms, key.clone()));
        self.dedup.insert(key, rec);
    }

    /// The next sequence number.
    pub fn next_sequence(&mut self) -> u128 {
        self.last_sequence += SEQUENCE_STEP;
        self.last_sequence
    }

    /// (confirmed, pending) subscriptions.
    pub fn counts(&self) -> (usize, usize) {
        let confirmed = self.subscriptions.iter().filter(|s| s.confirmed()).count();
        (confirmed, self.subscriptions.len() - confirmed)
    }
}
