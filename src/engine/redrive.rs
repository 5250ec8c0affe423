//! Engine layer: dead-letter queues: RedrivePolicy and RedriveAllowPolicy validation and
//! enforcement, the move of a message during ReceiveMessage, and ListDeadLetterSourceQueues
//! (§6.10 of sqs-protocol.md).

use std::sync::Arc;

use serde_json::{Value, json};

use super::state::{Msg, Queue};
use super::store::{Op, StateRecord, encode};
use super::{Engine, State};
use crate::command::{
    ListDeadLetterSourceQueues, ListDeadLetterSourceQueuesResult, RequestContext, arn_name,
};
use crate::error::{SqsError, SqsResult};

/// Most source ARNs a `byQueue` RedriveAllowPolicy may list.
const MAX_SOURCE_ARNS: usize = 10;

/// maxReceiveCount and dead-letter queue name of a stored (normalised) RedrivePolicy.
#[must_use]
pub fn parse_policy(policy: &str) -> Option<(u32, String)> {
    let v: Value = serde_json::from_str(policy).ok()?;
    let max = v.get("maxReceiveCount")?.as_u64()?;
    let arn = v.get("deadLetterTargetArn")?.as_str()?;
    Some((u32::try_from(max).ok()?, arn_name(arn)?.to_owned()))
}

fn invalid(policy_name: &str, value: &str, reason: &str) -> SqsError {
    SqsError::invalid_param(value, policy_name, reason)
}

/// Reads maxReceiveCount, which clients send as a number or a numeric string.
fn receive_count(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Adds moved messages to the dead-letter queue `dlq`: same id, body, attributes, send time and
/// receive count, plus DeadLetterQueueSourceArn (§6.10, G-26).
pub fn arrive(dlq: &mut Queue, moved: Vec<Msg>, source_arn: &str, now: u64, ops: &mut Vec<Op>) {
    for m in moved {
        let mut rec = Arc::unwrap_or_clone(m.rec);
        rec.extra_mut().dead_letter_source_arn = Some(source_arn.to_owned());
        let state = StateRecord {
            visible_at_ms: now,
            receive_count: m.st.receive_count,
            first_receive_ms: m.st.first_receive_ms,
            last_receive_ms: None,
            nonce: 0,
        };
        let seq = dlq.next_seq;
        ops.push(Op::PutMessage(dlq.id, seq, encode(&rec)));
        ops.push(Op::PutState(dlq.id, seq, encode(&state)));
        dlq.insert(seq, Arc::new(rec), state, now);
    }
    dlq.notify.notify_waiters();
}

impl Engine {
    /// Validates and normalises RedrivePolicy and RedriveAllowPolicy values in a CreateQueue or
    /// SetQueueAttributes request for queue `name` (§6.1, §6.10). RedriveAllowPolicy of the
    /// target is enforced here, when a source names its dead-letter queue.
    pub(super) fn check_policies(
        &self,
        st: &State,
        name: &str,
        fifo: bool,
        attrs: &mut [(String, String)],
    ) -> SqsResult<()> {
        for (k, v) in attrs.iter_mut() {
            if v.is_empty() {
                continue;
            }
            match k.as_str() {
                "RedrivePolicy" => *v = self.check_redrive_policy(st, name, fifo, v)?,
                "RedriveAllowPolicy" => *v = check_allow_policy(v)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn check_redrive_policy(
        &self,
        st: &State,
        name: &str,
        fifo: bool,
        value: &str,
    ) -> SqsResult<String> {
        const P: &str = "RedrivePolicy";
        let v: Value =
            serde_json::from_str(value).map_err(|_| invalid(P, value, "Invalid JSON."))?;
        let missing = |attr: &str| {
            invalid(
                P,
                value,
                &format!("Redrive policy does not contain mandatory attribute: {attr}."),
            )
        };
        let target = v
            .get("deadLetterTargetArn")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("deadLetterTargetArn"))?;
        let count = v
            .get("maxReceiveCount")
            .ok_or_else(|| missing("maxReceiveCount"))?;
        let count = receive_count(count)
            .filter(|n| (1..=1000).contains(n))
            .ok_or_else(|| {
                // [E] wording (LocalStack's).
                invalid(
                    P,
                    value,
                    &format!(
                        "Invalid value for maxReceiveCount: {}, valid values are from 1 to 1000 both inclusive.",
                        count.as_str().map_or_else(|| count.to_string(), str::to_owned)
                    ),
                )
            })?;
        // [E] wordings below.
        let dlq = arn_name(target)
            .and_then(|n| st.by_name.get(n))
            .and_then(|id| st.queues.get(id))
            .filter(|q| self.queue_arn(&q.rec.name) == target)
            .ok_or_else(|| invalid(P, value, "Dead letter target does not exist."))?;
        if dlq.rec.fifo != fifo {
            return Err(invalid(
                P,
                value,
                "Dead-letter queue must be same type of queue as the source.",
            ));
        }
        let source_arn = self.queue_arn(name);
        if !redrive_allowed(dlq, &source_arn) {
            return Err(invalid(
                P,
                value,
                &format!(
                    "Queue {source_arn} is not allowed to use {target} as a dead-letter queue."
                ),
            ));
        }
        Ok(json!({ "deadLetterTargetArn": target, "maxReceiveCount": count }).to_string())
    }

    pub(super) fn list_dead_letter_source_queues(
        &self,
        ctx: &RequestContext,
        c: &ListDeadLetterSourceQueues,
    ) -> SqsResult<ListDeadLetterSourceQueuesResult> {
        let names: Vec<String> = {
            let st = self.lock();
            let id = self.resolve(&st, &c.queue_url)?;
            let dlq_name = &st.queues[&id].rec.name;
            st.queues
                .values()
                .filter(|q| {
                    q.settings
                        .redrive
                        .as_ref()
                        .is_some_and(|(_, n)| n == dlq_name)
                })
                .map(|q| q.rec.name.clone())
                .collect()
        };
        let (names, next_token) =
            super::queue::paginate(names, c.max_results, c.next_token.as_deref())?;
        Ok(ListDeadLetterSourceQueuesResult {
            queue_urls: names.iter().map(|n| self.queue_url(ctx, n)).collect(),
            next_token,
        })
    }
}

/// Whether the dead-letter queue's RedriveAllowPolicy lets `source_arn` use it. No policy
/// behaves as allowAll (§6.1).
fn redrive_allowed(dlq: &Queue, source_arn: &str) -> bool {
    let Some(policy) = dlq
        .rec
        .attributes
        .get("RedriveAllowPolicy")
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
    else {
        return true;
    };
    match policy.get("redrivePermission").and_then(Value::as_str) {
        Some("denyAll") => false,
        Some("byQueue") => policy
            .get("sourceQueueArns")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(source_arn))),
        _ => true,
    }
}

/// Validates a RedriveAllowPolicy and returns it compacted. [E] wordings.
fn check_allow_policy(value: &str) -> SqsResult<String> {
    const P: &str = "RedriveAllowPolicy";
    let v: Value = serde_json::from_str(value).map_err(|_| invalid(P, value, "Invalid JSON."))?;
    let permission = v
        .get("redrivePermission")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            invalid(
                P,
                value,
                "Redrive allow policy does not contain mandatory attribute: redrivePermission.",
            )
        })?;
    let arns = v.get("sourceQueueArns");
    match permission {
        "allowAll" | "denyAll" => {
            if arns.is_some() {
                return Err(invalid(
                    P,
                    value,
                    "Only byQueue redrive permission can have sourceQueueArns.",
                ));
            }
        }
        "byQueue" => {
            let list = arns.and_then(Value::as_array).ok_or_else(|| {
                invalid(
                    P,
                    value,
                    "Redrive allow policy with byQueue permission must contain sourceQueueArns.",
                )
            })?;
            if list.is_empty() || list.len() > MAX_SOURCE_ARNS {
                return Err(invalid(
                    P,
                    value,
                    &format!(
                        "sourceQueueArns must contain between 1 and {MAX_SOURCE_ARNS} queue ARNs."
                    ),
                ));
            }
            if list.iter().any(|a| a.as_str().and_then(arn_name).is_none()) {
                return Err(invalid(
                    P,
                    value,
                    "sourceQueueArns must contain valid queue ARNs.",
                ));
            }
        }
        _ => {
            return Err(invalid(
                P,
                value,
                "Invalid value for redrivePermission. Valid values are allowAll, denyAll and byQueue.",
            ));
        }
    }
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        assert_eq!(
            parse_policy(
                r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}"#
            ),
            Some((3, "dlq".into()))
        );
    }

    #[test]
    fn allow_policies() {
        assert!(check_allow_policy(r#"{"redrivePermission":"allowAll"}"#).is_ok());
        assert!(check_allow_policy(r#"{"redrivePermission":"denyAll"}"#).is_ok());
        assert!(
            check_allow_policy(
                r#"{"redrivePermission":"byQueue","sourceQueueArns":["arn:aws:sqs:us-east-1:000000000000:a"]}"#
            )
            .is_ok()
        );
        assert!(check_allow_policy(r#"{"redrivePermission":"byQueue"}"#).is_err());
        assert!(
            check_allow_policy(r#"{"redrivePermission":"allowAll","sourceQueueArns":[]}"#).is_err()
        );
        assert!(check_allow_policy(r#"{"redrivePermission":"sometimes"}"#).is_err());
        let eleven: Vec<String> = (0..11)
            .map(|i| format!("\"arn:aws:sqs:us-east-1:000000000000:q{i}\""))
            .collect();
        let p = format!(
            r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
            eleven.join(",")
        );
        assert!(check_allow_policy(&p).is_err());
    }
}
