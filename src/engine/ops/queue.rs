//! Engine layer, ops: queue-level actions (create, look up, list, delete, purge, attributes).
//!
//! Rules from docs/protocol.md §6.1, §6.2, §6.12 and §6.13.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::command::attributes::{self, QueueAttributes};
use crate::command::validate;
use crate::command::{
    CreateQueue, CreateQueueResult, DeleteQueue, GetQueueAttributes, GetQueueAttributesResult,
    GetQueueUrl, GetQueueUrlResult, ListQueues, ListQueuesResult, PurgeQueue, RequestContext,
    Scope, SetQueueAttributes,
};
use crate::engine::handle::Engine;
use crate::engine::model::queue::Queue;
use crate::engine::model::registry::COOLOFF_MS;
use crate::engine::options::Regions;
use crate::engine::store::schema::Op;
use crate::error::{ErrorCode, SqsError, SqsResult};

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
            // [E] moto 5's code and text for an empty name (no AWS capture): the name rule's.
            return Err(SqsError::invalid_value(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        // A `.fifo` name without FifoQueue=true is a standard queue with a bad name (§6.2).
        let fifo = attributes::requests_fifo(&c.attributes);
        validate::queue_name(&c.queue_name, fifo)?;
        let validated = attributes::validate(&c.attributes, fifo, true)?;
        validate::tags(&c.tags)?;
        if c.tags.len() > validate::MAX_TAGS {
            // The same limit TagQueue enforces; [E] moto 5's text.
            return Err(SqsError::invalid_value(format!(
                "Too many tags added for queue {}.",
                c.queue_name
            )));
        }
        let now = self.now();
        let scope: &Scope = &ctx.scope;
        let commit = {
            let mut reg = self.lock();
            let settings = self.settings(&reg, scope, &c.queue_name, fifo, validated)?;
            // With --regions any, a queue of this name in another region is this queue.
            let existing = match self.inner.cfg.regions {
                Regions::Scoped => reg.id_of(scope, &c.queue_name),
                Regions::Any => self
                    .lookup(&reg, &scope.account, &scope.region, &c.queue_name)
                    .ok(),
            };
            if let Some(q) = existing.and_then(|id| reg.get(id)) {
                let current = q.attributes().to_map();
                if let Some(s) = settings.iter().find(|s| {
                    let v = s.text();
                    current.get(s.name()).map_or(!v.is_empty(), |cur| *cur != v)
                }) {
                    return Err(SqsError::new(
                        ErrorCode::QueueNameExists,
                        format!(
                            "A queue already exists with the same name and a different value for attribute {}",
                            s.name()
                        ),
                    ));
                }
                // Same queue: nothing to write, but the reply still waits for the commit that
                // created it, in case that one is still in flight.
                self.inner.store.submit(Vec::new())
            } else {
                if self.inner.cfg.enforce_cooloffs
                    && reg
                        .deleted_at(&scope.arn(&c.queue_name))
                        .is_some_and(|at| now < at + COOLOFF_MS)
                {
                    return Err(SqsError::new(
                        ErrorCode::QueueDeletedRecently,
                        "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
                    ));
                }
                if let Some(max) = self.inner.cfg.max_queues
                    && reg.len() >= max
                {
                    // [E] Not an AWS limit, so not AWS's text.
                    return Err(SqsError::new(
                        ErrorCode::OverLimit,
                        format!(
                            "This localsqs has reached its limit of {max} queues. Delete a queue, or start localsqs with a higher --max-queues."
                        ),
                    ));
                }
                let mut attrs = QueueAttributes::defaults(fifo);
                attrs.apply(&settings);
                let tags = c.tags.into_iter().collect();
                let q = Queue::create(
                    reg.next_id(),
                    scope.clone(),
                    c.queue_name.clone(),
                    attrs,
                    tags,
                    now,
                );
                let op = reg.add(q).put_op();
                self.inner.store.submit(vec![op])
            }
        };
        self.commit(commit).await?;
        Ok(CreateQueueResult {
            queue_url: self.queue_url(ctx, scope, &c.queue_name),
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
        let mut scope = Scope::clone(&ctx.scope);
        if let Some(owner) = &c.queue_owner_aws_account_id {
            owner.clone_into(&mut scope.account);
        }
        {
            let reg = self.lock();
            let id = self.lookup(&reg, &scope.account, &scope.region, &c.queue_name)?;
            // `--regions any` may have found it in another region; the URL names no region.
            if let Some(q) = reg.get(id) {
                scope.region.clone_from(&q.scope().region);
            }
        }
        Ok(GetQueueUrlResult {
            queue_url: self.queue_url(ctx, &scope, &c.queue_name),
        })
    }

    pub(super) fn list_queues(
        &self,
        ctx: &RequestContext,
        c: &ListQueues,
    ) -> SqsResult<ListQueuesResult> {
        let prefix = c.queue_name_prefix.as_deref().unwrap_or("");
        let scope: &Scope = &ctx.scope;
        let names: Vec<String> = {
            let reg = self.lock();
            let filtered = |n: &&String| n.starts_with(prefix);
            if self.inner.cfg.regions == Regions::Any {
                // ElasticMQ lists every queue: with --regions any, every region's of the account.
                let mut names: Vec<String> = reg
                    .names_in_account(&scope.account)
                    .filter(filtered)
                    .cloned()
                    .collect();
                names.sort_unstable();
                names.dedup();
                names
            } else {
                reg.names_in(scope).filter(filtered).cloned().collect()
            }
        };
        let (names, next_token) = paginate(names, c.max_results, c.next_token.as_deref())?;
        Ok(ListQueuesResult {
            queue_urls: names
                .iter()
                .map(|n| self.queue_url(ctx, scope, n))
                .collect(),
            next_token,
        })
    }

    pub(super) async fn delete_queue(&self, scope: &Scope, c: &DeleteQueue) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut reg = self.lock();
            let id = self.resolve(&reg, scope, &c.queue_url)?;
            let mut ops = vec![Op::DeleteQueue(id)];
            if let Some(q) = reg.remove(id) {
                reg.tombstone(q.arn(), now);
                ops.push(Op::PutTombstone(q.arn(), now));
                crate::engine::model::task::forget_tasks(reg.tasks_mut(), &q.arn(), 0, &mut ops);
                q.wake();
            }
            self.inner.store.submit(ops)
        };
        self.commit(commit).await
    }

    pub(super) async fn purge_queue(&self, scope: &Scope, c: &PurgeQueue) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut reg = self.lock();
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            if self.inner.cfg.enforce_cooloffs
                && q.last_purge_ms().is_some_and(|at| now < at + COOLOFF_MS)
            {
                return Err(SqsError::new(
                    ErrorCode::PurgeQueueInProgress,
                    format!(
                        "Only one PurgeQueue operation on {} is allowed every 60 seconds.",
                        q.name()
                    ),
                ));
            }
            let mut ops = Vec::new();
            q.purge(now, &mut ops);
            self.inner.store.submit(ops)
        };
        self.commit(commit).await
    }

    pub(super) async fn get_queue_attributes(
        &self,
        scope: &Scope,
        c: &GetQueueAttributes,
    ) -> SqsResult<GetQueueAttributesResult> {
        let now = self.now();
        let (out, commit) = {
            let mut reg = self.lock();
            let id = self.resolve(&reg, scope, &c.queue_url)?;
            attributes::validate_names(&c.attribute_names)?;
            let q = reg.get_mut(id).ok_or_else(SqsError::queue_does_not_exist)?;
            let mut ops = Vec::new();
            q.expire(now, &mut ops);
            q.promote(now);
            let all = c.attribute_names.iter().any(|n| n == "All");
            let wanted = |n: &str| all || c.attribute_names.iter().any(|w| w == n);
            let m = q.messages();
            let computed = [
                ("ApproximateNumberOfMessages", m.ready_count().to_string()),
                (
                    "ApproximateNumberOfMessagesDelayed",
                    m.delayed_count().to_string(),
                ),
                (
                    "ApproximateNumberOfMessagesNotVisible",
                    m.inflight_count().to_string(),
                ),
                ("CreatedTimestamp", q.created_s().to_string()),
                ("LastModifiedTimestamp", q.modified_s().to_string()),
                ("QueueArn", q.arn()),
            ];
            let mut out: Vec<(String, String)> = computed
                .into_iter()
                .filter(|(k, _)| wanted(k))
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            out.extend(
                q.attributes()
                    .to_map()
                    .into_iter()
                    .filter(|(k, _)| wanted(k)),
            );
            out.sort();
            (out, self.inner.store.submit(ops))
        };
        self.commit(commit).await?;
        Ok(GetQueueAttributesResult { attributes: out })
    }

    pub(super) async fn set_queue_attributes(
        &self,
        scope: &Scope,
        c: &SetQueueAttributes,
    ) -> SqsResult<()> {
        let now = self.now();
        let commit = {
            let mut reg = self.lock();
            let q = self.queue(&reg, scope, &c.queue_url)?;
            let (name, fifo) = (q.name().to_owned(), q.is_fifo());
            let validated = attributes::validate(&c.attributes, fifo, false)?;
            let settings = self.settings(&reg, scope, &name, fifo, validated)?;
            let q = self.queue_mut(&mut reg, scope, &c.queue_url)?;
            let op = q.update_attributes(&settings, now);
            self.inner.store.submit(vec![op])
        };
        self.commit(commit).await
    }
}
