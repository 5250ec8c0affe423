//! Engine layer, model: the registry of every queue (by id, and by account, region and name),
//! deleted-queue tombstones and message move tasks: everything the engine lock guards.
//!
//! The name index and the queues are changed together only here, so a name always resolves to
//! a queue that exists. Names are indexed per scope (account and region), so a lookup borrows
//! the request's strings and allocates nothing.

use super::polls::Polls;
use foldhash::HashMap;

use super::queue::Queue;
use super::task::Task;
use super::topics::Topics;
use crate::command::Scope;
use crate::engine::store::cache::BodyCache;
use crate::engine::store::packed::PackedRecord;

/// AWS's cool-off after DeleteQueue and PurgeQueue (§6.13): how long a tombstone (and a
/// queue's last purge) matters.
pub(crate) const COOLOFF_MS: u64 = 60_000;

/// All queues, tombstones and move tasks.
#[derive(Debug)]
pub(crate) struct Registry {
    /// Account → region → name → id: looked up with borrowed strings, so resolving a queue
    /// URL allocates nothing.
    by_name: HashMap<String, HashMap<String, HashMap<String, u64>>>,
    queues: HashMap<u64, Queue>,
    /// Every queue's id, ascending: what the sweep walks a chunk at a time. Walking the map
    /// instead touches every queue's ~800-byte slot, about 3 µs each on a virtual machine once
    /// they have left the caches (170 ms for 50,000 queues).
    order: Vec<u64>,
    next_queue_id: u64,
    /// Deleted queues' ARNs → deletion time (epoch ms).
    tombstones: HashMap<String, u64>,
    /// Message move tasks, oldest first.
    tasks: Vec<Task>,
    /// Durable mode: the records kept in memory (`store/cache.rs`).
    cache: BodyCache,
    /// The long polls parked now, oldest first.
    pub polls: Polls,
    /// SNS's topics and subscriptions.
    topics: Topics,
}

impl Registry {
    /// No queues yet; a durable engine keeps about `cache_bytes` of message records in memory.
    pub fn new(cache_bytes: usize) -> Self {
        Self {
            by_name: HashMap::default(),
            queues: HashMap::default(),
            order: Vec::new(),
            next_queue_id: 1,
            tombstones: HashMap::default(),
            tasks: Vec::new(),
            cache: BodyCache::new(cache_bytes),
            polls: Polls::default(),
            topics: Topics::default(),
        }
    }

    /// Notes that the record of message `seq` of queue `queue`, written by store job `job`, is
    /// held in memory.
    pub fn cache_record(&mut self, queue: u64, seq: u64, job: u64, rec: &PackedRecord) {
        self.cache.note(queue, seq, job, rec);
    }

    /// Drops the oldest records from memory while the cache is over budget, as far as store
    /// jobs up to `committed` have made them durable.
    pub fn evict_records(&mut self, committed: u64) {
        let queues = &mut self.queues;
        self.cache.evict(committed, |q, seq| {
            if let Some(q) = queues.get_mut(&q) {
                q.make_cold(seq);
            }
        });
    }

    /// Bytes of records the cache counts as held in memory.
    pub fn cached_bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// Keeps ids up to `id` from being given to new queues (a deleted queue whose rows are
    /// still being removed on disk).
    pub fn reserve_id(&mut self, id: u64) {
        self.next_queue_id = self.next_queue_id.max(id + 1);
    }

    /// Up to `max` queue ids from `start` on, ascending.
    pub fn ids_from(&self, start: u64, max: usize) -> &[u64] {
        let from = self.order.partition_point(|&id| id < start);
        &self.order[from..self.order.len().min(from + max)]
    }

    /// How many queues there are.
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// The id the next new queue gets (ids are never reused within a run).
    pub fn next_id(&self) -> u64 {
        self.next_queue_id
    }

    /// Adds a queue (new or loaded).
    pub fn add(&mut self, q: Queue) -> &mut Queue {
        let id = q.id();
        self.next_queue_id = self.next_queue_id.max(id + 1);
        let scope = q.scope();
        self.by_name
            .entry(scope.account.clone())
            .or_default()
            .entry(scope.region.clone())
            .or_default()
            .insert(q.name().to_owned(), id);
        // New queues take ever larger ids; only a load may add them out of order.
        if self.order.last().is_none_or(|&last| last < id) {
            self.order.push(id);
        } else if let Err(at) = self.order.binary_search(&id) {
            self.order.insert(at, id);
        }
        self.queues.entry(id).insert_entry(q).into_mut()
    }

    /// Removes a queue (DeleteQueue).
    pub fn remove(&mut self, id: u64) -> Option<Queue> {
        let q = self.queues.remove(&id)?;
        if let Ok(at) = self.order.binary_search(&id) {
            self.order.remove(at);
        }
        let scope = q.scope();
        if let Some(regions) = self.by_name.get_mut(&scope.account) {
            if let Some(names) = regions.get_mut(&scope.region) {
                names.remove(q.name());
                if names.is_empty() {
                    regions.remove(&scope.region);
                }
            }
            if regions.is_empty() {
                self.by_name.remove(&scope.account);
            }
        }
        Some(q)
    }

    /// The id of the queue called `name` in `scope`.
    pub fn id_of(&self, scope: &Scope, name: &str) -> Option<u64> {
        self.id_in(&scope.account, &scope.region, name)
    }

    /// The id of the queue called `name` in this account and region.
    pub fn id_in(&self, account: &str, region: &str, name: &str) -> Option<u64> {
        self.by_name.get(account)?.get(region)?.get(name).copied()
    }

    /// Every queue called `name`, in any account and region: `(account, region, id)`, in no
    /// particular order. For a lookup that missed, so it may cost a walk over the scopes.
    pub fn holders<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (&'a str, &'a str, u64)> {
        self.by_name.iter().flat_map(move |(account, regions)| {
            regions.iter().filter_map(move |(region, names)| {
                names
                    .get(name)
                    .map(|&id| (account.as_str(), region.as_str(), id))
            })
        })
    }

    /// The names of the queues of `account` in every region, in no particular order.
    pub fn names_in_account<'a>(&'a self, account: &str) -> impl Iterator<Item = &'a String> {
        self.by_name
            .get(account)
            .into_iter()
            .flat_map(|regions| regions.values().flat_map(HashMap::keys))
    }

    /// A queue by id.
    pub fn get(&self, id: u64) -> Option<&Queue> {
        self.queues.get(&id)
    }

    /// A queue by id, to change it.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Queue> {
        self.queues.get_mut(&id)
    }

    /// Every queue, in no particular order.
    pub fn queues(&self) -> impl Iterator<Item = &Queue> {
        self.queues.values()
    }

    /// Every queue, to change them.
    pub fn queues_mut(&mut self) -> impl Iterator<Item = &mut Queue> {
        self.queues.values_mut()
    }

    /// The names of the queues in `scope`, in no particular order.
    pub fn names_in(&self, scope: &Scope) -> impl Iterator<Item = &String> {
        self.by_name
            .get(&scope.account)
            .and_then(|regions| regions.get(&scope.region))
            .into_iter()
            .flat_map(HashMap::keys)
    }

    /// Names of the queues whose RedrivePolicy targets the queue with ARN `dlq_arn` (they are
    /// in its scope: a dead-letter queue must be in its source's account and region).
    pub fn dead_letter_sources(&self, dlq_arn: &str) -> Vec<String> {
        self.queues()
            .filter(|q| {
                q.attributes()
                    .redrive_policy
                    .as_ref()
                    .is_some_and(|p| p.dead_letter_target_arn == dlq_arn)
            })
            .map(|q| q.name().to_owned())
            .collect()
    }

    /// Remembers when the queue with this ARN was deleted.
    pub fn tombstone(&mut self, arn: String, at: u64) {
        self.tombstones.insert(arn, at);
    }

    /// Forgets tombstones older than `before` (epoch ms); returns the ARNs forgotten.
    pub fn prune_tombstones(&mut self, before: u64) -> Vec<String> {
        let old: Vec<String> = self
            .tombstones
            .iter()
            .filter(|&(_, &at)| at < before)
            .map(|(arn, _)| arn.clone())
            .collect();
        for arn in &old {
            self.tombstones.remove(arn);
        }
        old
    }

    /// How many tombstones are kept.
    pub fn tombstone_count(&self) -> usize {
        self.tombstones.len()
    }

    /// When the queue with this ARN was last deleted (epoch ms).
    pub fn deleted_at(&self, arn: &str) -> Option<u64> {
        self.tombstones.get(arn).copied()
    }

    /// Move tasks, oldest first.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Move tasks, to add to or change them.
    pub fn tasks_mut(&mut self) -> &mut Vec<Task> {
        &mut self.tasks
    }

    /// Forgets every queue, tombstone and task (the reset endpoint). Queue ids keep counting.
    pub fn clear(&mut self) {
        self.queues.clear();
        self.order.clear();
        self.by_name.clear();
        self.tombstones.clear();
        self.tasks.clear();
        self.topics.clear();
    }

    /// SNS's topics.
    pub fn topics(&self) -> &Topics {
        &self.topics
    }

    /// SNS's topics, to change them.
    pub fn topics_mut(&mut self) -> &mut Topics {
        &mut self.topics
    }
}
