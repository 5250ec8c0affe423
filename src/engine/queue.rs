//! Engine layer: queue-level actions (create, look up, list, delete, attributes).
//!
//! Rules from §6.1, §6.2 and §6.12 of sqs-protocol.md.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::Engine;
use super::state::Queue;
use super::store::{Op, QueueRecord};
use crate::command::attributes;
use crate::command::{
    CreateQueue, CreateQueueResult, DeleteQueue, GetQueueAttributes, GetQueueAttributesResult,
    GetQueueUrl, GetQueueUrlResult, ListQueues, ListQueuesResult, PurgeQueue, RequestContext,
    SetQueueAttributes,
};
use crate::error::{ErrorCode, SqsError, SqsResult};

/// AWS's cool-off after DeleteQueue and PurgeQueue (§6.13).
const COOLOFF_MS: u64 = 60_000;

/// One page of queue names, sorted, for ListQueues and ListDeadLetterSourceQueues (§6.12):
/// up to 1,000 names, and a NextToken only when MaxResults was given and more remain.
pub(super) fn paginate(
    mut names: Vec<String>,
    max_results: Option<i64>,
    next_token: Option<&str>,
) -> SqsResult<(Vec<String>, Option<String>)> {
    if let Some(m) = max_results
        && !(1..=1000).contains(&m)
    {
        // [E] wording.
        return Err(SqsError::invalid_param(
            &m.to_string(),
            "MaxResults",
            "MaxResults must be an integer between 1 and 1000.",
        ));
    }
    if let Some(t) = next_token {
        let after = URL_SAFE_NO_PAD
            .decode(t)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| SqsError::invalid_param(t, "NextToken", "Invalid token."))?;
        names.retain(|n| *n > after);
    }
    names.sort_unstable();
    let limit = max_results.map_or(1000, |m| usize::try_from(m).unwrap_or(1000));
    let more = names.len() > limit;
    names.truncate(limit);
    let token = (more && max_results.is_some())
        .then(|| names.last().map(|n| URL_SAFE_NO_PAD.encode(n)))
        .flatten();
    Ok((names, token))
}

impl Engine {
    pub(super) async fn create_queue(
        &self,
        ctx: &RequestContext,
        c: CreateQueue,
    ) -> SqsResult<CreateQueueResult> {
        if c.queue_name.is_empty() {
            return Err(SqsError::missing("QueueName"));
        }
        // A `.fifo` name without FifoQueue=true is a standard queue with a bad name (§6.2).
        let fifo = attributes::requests_fifo(&c.attributes);
        crate::command::validate::queue_name(&c.queue_name, fifo)?;
        let mut validated = attributes::validate(&c.attributes, fifo, true)?;
        crate::command::validate::tags(&c.tags)?;
        let now = self.now();
        let commit = {
            let mut st = self.lock();
            self.check_policies(&st, &c.queue_name, fifo, &mut validated)?;
            if let Some(id) = st.by_name.get(&c.queue_name) {
                let q = &st.queues[id];
                if let Some((name, _)) = validated.iter().find(|(k, v)| {
                    q.rec
                        .attributes
                        .get(k)
                        .map_or(!v.is_empty(), |cur| cur != v)
                }) {
                    return Err(SqsError::new(
                        ErrorCode::QueueNameExists,
                        format!(
                            "A queue already exists with the same name and a different value for attribute {name}"
                        ),
                    ));
                }
                // Same queue: nothing to write, but the reply still waits for the commit that
                // created it, in case that one is still in flight.
                self.inner.store.submit(Vec::new())
            } else {
                if self.inner.cfg.enforce_cooloffs
                    && st
                        .tombstones
                        .get(&c.queue_name)
                        .is_some_and(|&at| now < at + COOLOFF_MS)
                {
                    return Err(SqsError::new(
                        ErrorCode::QueueDeletedRecently,
                        "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
                    ));
                }
                let mut attrs = attributes::defaults(fifo);
                attributes::apply(&mut attrs, &validated);
                let rec = QueueRecord {
                    name: c.queue_name.clone(),
                    fifo,
                    tags: c.tags.into_iter().collect(),
                    created_s: now / 1000,
                    modified_s: now / 1000,
                    last_purge_ms: None,
                    dedup_per_group: fifo
                        && attrs
                            .get("DeduplicationScope")
                            .is_some_and(|v| v == "messageGroup"),
                    attributes: attrs,
                };
                let id = st.next_queue_id;
                st.next_queue_id += 1;
                let q = Queue::new(id, rec);
                let op = q.put_op();
                st.by_name.insert(c.queue_name.clone(), id);
                st.queues.insert(id, q);
                self.inner.store.submit(vec![op])
            }
        };
        self.commit(commit).await?;
        Ok(CreateQueueResult {
            queue_url: self.queue_url(ctx, &c.queue_name),
        })
    }

    pub(super) fn get_queue_url(
        &self,
        ctx: &RequestContext,
        c: &GetQueueUrl,
    ) -> SqsResult<GetQueueUrlResult> {
        if c.queue_name.is_empty() {
            return Err(SqsError::missing("QueueName"));
        }
        if c.queue_owner_aws_account_id
            .as_deref()
            .is_some_and(|a| a != self.inner.cfg.account_id)
        {
            return Err(SqsError::queue_does_not_exist());
        }
        let st = self.lock();
        if !st.by_name.contains_key(&c.queue_name) {
            return Err(SqsError::queue_does_not_exist());
        }
        Ok(GetQueueUrlResult {
            queue_url: self.queue_url(ctx, &c.queue_name),
        })
    }

    pub(super) fn list_queues(
        &self,
        ctx: &RequestContext,
        c: &ListQueues,
    ) -> SqsResult<ListQueuesResult> {
        let prefix = c.queue_name_prefix.as_deref().unwrap_or("");
        let names: Vec<String> = self
            .lock()
            .by_name
            .keys()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect();
        let (names, next_token) = paginate(names, c.max_results, c.next_token.as_deref())?;
        Ok(ListQueuesResult {
            queue_urls: names.iter().map(|n| self.queue_url(ctx, n)).collect(),
            next_token,
        })
    }

    pub(super) async fn delete_queue(&self, c: &DeleteQueue) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut st = self.lock();
            let id = self.resolve(&st, &c.queue_url)?;
            let mut ops = vec![Op::DeleteQueue(id)];
            if let Some(q) = st.queues.remove(&id) {
                st.by_name.remove(&q.rec.name);
                st.tombstones.insert(q.rec.name.clone(), now);
                ops.push(Op::PutTombstone(q.rec.name.clone(), now));
                q.notify.notify_waiters();
            }
            self.inner.store.submit(ops)
        };
        self.commit(commit).await
    }

    pub(super) async fn purge_queue(&self, c: &PurgeQueue) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut st = self.lock();
            let q = self.queue_mut(&mut st, &c.queue_url)?;
            if self.inner.cfg.enforce_cooloffs
                && q.rec.last_purge_ms.is_some_and(|at| now < at + COOLOFF_MS)
            {
                return Err(SqsError::new(
                    ErrorCode::PurgeQueueInProgress,
                    format!(
                        "Only one PurgeQueue operation on {} is allowed every 60 seconds.",
                        q.rec.name
                    ),
                ));
            }
            q.clear();
            q.fifo.clear();
            q.rec.last_purge_ms = Some(now);
            self.inner
                .store
                .submit(vec![Op::ClearQueue(q.id), Op::ClearDedup(q.id), q.put_op()])
        };
        self.commit(commit).await
    }

    pub(super) async fn get_queue_attributes(
        &self,
        c: &GetQueueAttributes,
    ) -> SqsResult<GetQueueAttributesResult> {
        let now = self.now();
        let (out, commit) = {
            let mut st = self.lock();
            let id = self.resolve(&st, &c.queue_url)?;
            attributes::validate_names(&c.attribute_names)?;
            let q = st
                .queues
                .get_mut(&id)
                .ok_or_else(SqsError::queue_does_not_exist)?;
            let mut ops = Vec::new();
            q.expire(now, &mut ops);
            q.promote(now);
            let all = c.attribute_names.iter().any(|n| n == "All");
            let wanted = |n: &str| all || c.attribute_names.iter().any(|w| w == n);
            let mut out: Vec<(String, String)> = Vec::new();
            let computed = [
                ("ApproximateNumberOfMessages", q.ready.len().to_string()),
                ("ApproximateNumberOfMessagesDelayed", q.delayed.to_string()),
                (
                    "ApproximateNumberOfMessagesNotVisible",
                    q.inflight.to_string(),
                ),
                ("CreatedTimestamp", q.rec.created_s.to_string()),
                ("LastModifiedTimestamp", q.rec.modified_s.to_string()),
                ("QueueArn", self.queue_arn(&q.rec.name)),
            ];
            for (k, v) in computed {
                if wanted(k) {
                    out.push((k.to_owned(), v));
                }
            }
            for (k, v) in &q.rec.attributes {
                if wanted(k) {
                    out.push((k.clone(), v.clone()));
                }
            }
            out.sort();
            (out, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(GetQueueAttributesResult { attributes: out })
    }

    pub(super) async fn set_queue_attributes(&self, c: &SetQueueAttributes) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut st = self.lock();
            let q = self.queue_mut(&mut st, &c.queue_url)?;
            let (name, fifo) = (q.rec.name.clone(), q.rec.fifo);
            let mut validated = attributes::validate(&c.attributes, fifo, false)?;
            self.check_policies(&st, &name, fifo, &mut validated)?;
            let q = self.queue_mut(&mut st, &c.queue_url)?;
            attributes::apply(&mut q.rec.attributes, &validated);
            q.rec.modified_s = now / 1000;
            q.refresh_settings();
            if q.rec.fifo && validated.iter().any(|(k, _)| k == "DelaySeconds") {
                q.redelay(now);
            }
            // A shorter wait or delay may make messages receivable sooner for parked polls.
            q.notify.notify_waiters();
            self.inner.store.submit(vec![q.put_op()])
        };
        self.commit(commit).await
    }
}
