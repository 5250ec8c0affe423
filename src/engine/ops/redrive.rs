//! Engine layer, ops: dead-letter queues: turning a request's attributes into typed settings while
//! checking RedrivePolicy against the queues that exist, the move of a message during
//! ReceiveMessage, and ListDeadLetterSourceQueues (docs/protocol.md §6.1, §6.10).
//!
//! The policies themselves are parsed by `command::redrive`; this module adds the checks that
//! need other queues: the target exists, has the same type, and its RedriveAllowPolicy lets the
//! source use it.

use crate::engine::handle::Engine;

use crate::command::attributes::Setting;
use crate::command::{
    ListDeadLetterSourceQueues, ListDeadLetterSourceQueuesResult, RedrivePolicy, RequestContext,
    Scope,
};
use crate::engine::model::queue::Queue;
use crate::engine::model::registry::Registry;
use crate::engine::store::record::{MessageRecord, StateRecord};
use crate::engine::store::schema::Op;
use crate::error::{SqsError, SqsResult};

/// Adds messages taken from a source queue to its dead-letter queue `dlq`: same id, body,
/// attributes, send time and receive count, plus DeadLetterQueueSourceArn (§6.10, G-26). A
/// FIFO dead-letter queue differs in two ways (AWS developer guide): the message's enqueue
/// time resets, so its retention counts from the move, and its deduplication id becomes its
/// message id, so that two messages that shared one are kept apart.
pub(super) fn arrive(
    dlq: &mut Queue,
    moved: Vec<(MessageRecord, StateRecord)>,
    source_arn: &str,
    now: u64,
    ops: &mut Vec<Op>,
) {
    for (mut rec, state) in moved {
        if dlq.is_fifo() {
            rec.extra_mut().dedup_id = Some(rec.message_id());
            // [E] SentTimestamp is the enqueue time AWS resets; only the retention is [D].
            rec.sent_ms = dlq.send_time(now);
        }
        rec.extra_mut().dead_letter_source_arn = Some(source_arn.to_owned());
        let state = StateRecord {
            visible_at_ms: now,
            receive_count: state.receive_count,
            first_receive_ms: state.first_receive_ms,
            last_receive_ms: None,
            nonce: 0,
        };
        dlq.append(rec, state, now, ops);
    }
    dlq.wake();
}

impl Engine {
    /// Turns the validated attributes of a CreateQueue or SetQueueAttributes request for queue
    /// `name` into typed settings, in request order (§6.1, §6.10). A RedrivePolicy is checked
    /// against its target here, including the target's RedriveAllowPolicy.
    pub(super) fn settings(
        &self,
        reg: &Registry,
        scope: &Scope,
        name: &str,
        fifo: bool,
        validated: Vec<(String, String)>,
    ) -> SqsResult<Vec<Setting>> {
        validated
            .into_iter()
            .map(|(k, v)| {
                if k == "RedrivePolicy" && !v.is_empty() {
                    let policy = RedrivePolicy::parse(&v)?;
                    self.check_target(reg, scope, name, fifo, &policy, &v)?;
                    return Ok(Setting::RedrivePolicy(Some(policy)));
                }
                Setting::parse(&k, v)
            })
            .collect()
    }

    /// Checks that a RedrivePolicy's target exists, has the source's type and accepts the
    /// source; errors quote the policy as sent (`text`). [E] wordings.
    fn check_target(
        &self,
        reg: &Registry,
        scope: &Scope,
        name: &str,
        fifo: bool,
        policy: &RedrivePolicy,
        text: &str,
    ) -> SqsResult<()> {
        let target = &policy.dead_letter_target_arn;
        let invalid = |reason: &str| SqsError::invalid_param(text, "RedrivePolicy", reason);
        // A dead-letter queue must be in its source's account and region; one elsewhere is, from
        // the source's point of view, not there [E: AWS's text for that case is not recorded].
        let dlq = self
            .queue_by_arn(reg, target)
            .and_then(|id| reg.get(id))
            .filter(|q| q.scope() == scope)
            .ok_or_else(|| invalid("Dead letter target does not exist."))?;
        if dlq.is_fifo() != fifo {
            return Err(invalid(
                "Dead-letter queue must be same type of queue as the source.",
            ));
        }
        let source_arn = scope.arn(name);
        // No policy behaves as allowAll (§6.1).
        let allowed = dlq
            .attributes()
            .redrive_allow_policy
            .as_ref()
            .is_none_or(|p| p.allows(&source_arn));
        if !allowed {
            return Err(invalid(&format!(
                "Queue {source_arn} is not allowed to use {target} as a dead-letter queue."
            )));
        }
        Ok(())
    }

    pub(super) fn list_dead_letter_source_queues(
        &self,
        ctx: &RequestContext,
        c: &ListDeadLetterSourceQueues,
    ) -> SqsResult<ListDeadLetterSourceQueuesResult> {
        let names = {
            let reg = self.lock();
            let dlq = self.queue(&reg, &ctx.scope, &c.queue_url)?;
            (reg.dead_letter_sources(&dlq.arn()), dlq.scope().clone())
        };
        let (names, scope) = names;
        let (names, next_token) =
            super::queue::paginate(names, c.max_results, c.next_token.as_deref())?;
        Ok(ListDeadLetterSourceQueuesResult {
            queue_urls: names
                .iter()
                .map(|n| self.queue_url(ctx, &scope, n))
                .collect(),
            next_token,
        })
    }
}
