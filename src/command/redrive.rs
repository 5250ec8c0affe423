//! Command layer: dead-letter queues: the typed RedrivePolicy and RedriveAllowPolicy, the ARN
//! helper they share, and the requests and results of ListDeadLetterSourceQueues and the message
//! move tasks (docs/protocol.md §6.1, §6.10, §6.11).
//!
//! A policy arrives and is stored as JSON text; it is parsed once, here, into a typed value, and
//! rendered back to AWS's normalised JSON for GetQueueAttributes. Imports neither `wire` nor
//! `engine`.

use serde_json::{Value, json};

use crate::error::{SqsError, SqsResult};

/// Most source ARNs a `byQueue` RedriveAllowPolicy may list.
pub const MAX_SOURCE_ARNS: usize = 10;

/// The queue name at the end of an SQS ARN (`arn:aws:sqs:region:account:name`).
#[must_use]
pub fn arn_name(arn: &str) -> Option<&str> {
    let rest = arn.strip_prefix("arn:")?;
    let parts: Vec<&str> = rest.splitn(5, ':').collect();
    match parts.as_slice() {
        [_partition, "sqs", _region, _account, name] if !name.is_empty() => Some(name),
        _ => None,
    }
}

/// Whether `s` has the shape of an ARN, `arn:<partition>:<service>:<region>:<account>:<resource>`
/// (of any service: one that names no queue of ours is the engine's "does not exist").
#[must_use]
pub fn is_arn(s: &str) -> bool {
    let parts: Vec<&str> = s.splitn(6, ':').collect();
    matches!(parts.as_slice(), ["arn", partition, service, _region, _account, resource]
        if !partition.is_empty() && !service.is_empty() && !resource.is_empty())
}

fn invalid(policy_name: &str, value: &str, reason: &str) -> SqsError {
    SqsError::invalid_param(value, policy_name, reason)
}

/// A queue's RedrivePolicy: where messages go after too many receives (§6.10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedrivePolicy {
    /// ARN of the dead-letter queue.
    pub dead_letter_target_arn: String,
    /// Receives after which the next receive moves the message instead, 1–1000.
    pub max_receive_count: u32,
}

impl RedrivePolicy {
    /// Attribute name, as it appears in errors.
    const NAME: &'static str = "RedrivePolicy";

    /// Parses a RedrivePolicy as clients send it (maxReceiveCount as a number or a numeric
    /// string). A deadLetterTargetArn that is not an ARN is refused here, before anything is
    /// looked up; whether the target exists and may be used is the engine's check. Wordings:
    /// the missing-attribute one is AWS's [V: AWS's answer quoted in
    /// crossplane-contrib/provider-aws #443]; the others are [E] (LocalStack's, and
    /// Eucalyptus's `Invalid value for deadLetterTargetArn.`).
    pub fn parse(text: &str) -> SqsResult<Self> {
        let v: Value =
            serde_json::from_str(text).map_err(|_| invalid(Self::NAME, text, "Invalid JSON."))?;
        let missing = |attr: &str| {
            invalid(
                Self::NAME,
                text,
                &format!("Redrive policy does not contain mandatory attribute: {attr}."),
            )
        };
        let target = v
            .get("deadLetterTargetArn")
            .ok_or_else(|| missing("deadLetterTargetArn"))?;
        let count = v
            .get("maxReceiveCount")
            .ok_or_else(|| missing("maxReceiveCount"))?;
        let max_receive_count = receive_count(count)
            .filter(|n| (1..=1000).contains(n))
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                invalid(
                    Self::NAME,
                    text,
                    &format!(
                        "Invalid value for maxReceiveCount: {}, valid values are from 1 to 1000 both inclusive.",
                        count.as_str().map_or_else(|| count.to_string(), str::to_owned)
                    ),
                )
            })?;
        let target = target
            .as_str()
            .filter(|t| is_arn(t))
            .ok_or_else(|| invalid(Self::NAME, text, "Invalid value for deadLetterTargetArn."))?;
        Ok(Self {
            dead_letter_target_arn: target.to_owned(),
            max_receive_count,
        })
    }

    /// The dead-letter queue's name, taken from its ARN.
    #[must_use]
    pub fn dead_letter_queue_name(&self) -> Option<&str> {
        arn_name(&self.dead_letter_target_arn)
    }

    /// AWS's normalised form: `{"deadLetterTargetArn":"…","maxReceiveCount":N}`.
    #[must_use]
    pub fn to_json(&self) -> String {
        json!({
            "deadLetterTargetArn": self.dead_letter_target_arn,
            "maxReceiveCount": self.max_receive_count,
        })
        .to_string()
    }
}

/// Reads maxReceiveCount, which clients send as a number or a numeric string.
fn receive_count(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Which source queues a dead-letter queue accepts (`redrivePermission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedrivePermission {
    /// `allowAll`: any source queue (also the behaviour without a policy).
    AllowAll,
    /// `denyAll`: none.
    DenyAll,
    /// `byQueue`: the queues in `sourceQueueArns`.
    ByQueue,
}

impl RedrivePermission {
    /// The wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowAll => "allowAll",
            Self::DenyAll => "denyAll",
            Self::ByQueue => "byQueue",
        }
    }
}

/// A dead-letter queue's RedriveAllowPolicy (§6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedriveAllowPolicy {
    /// Which sources are allowed.
    pub permission: RedrivePermission,
    /// The allowed source ARNs; only for [`RedrivePermission::ByQueue`], 1–10 of them.
    pub source_queue_arns: Vec<String>,
}

impl RedriveAllowPolicy {
    /// Attribute name, as it appears in errors.
    const NAME: &'static str = "RedriveAllowPolicy";

    /// Parses and checks a RedriveAllowPolicy. [E] wordings.
    pub fn parse(text: &str) -> SqsResult<Self> {
        let bad = |reason: &str| invalid(Self::NAME, text, reason);
        let v: Value = serde_json::from_str(text).map_err(|_| bad("Invalid JSON."))?;
        let permission = v
            .get("redrivePermission")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                bad("Redrive allow policy does not contain mandatory attribute: redrivePermission.")
            })?;
        let arns = v.get("sourceQueueArns");
        let (permission, source_queue_arns) = match permission {
            "allowAll" | "denyAll" => {
                if arns.is_some() {
                    return Err(bad(
                        "Only byQueue redrive permission can have sourceQueueArns.",
                    ));
                }
                let p = if permission == "allowAll" {
                    RedrivePermission::AllowAll
                } else {
                    RedrivePermission::DenyAll
                };
                (p, Vec::new())
            }
            "byQueue" => {
                let list = arns.and_then(Value::as_array).ok_or_else(|| {
                    bad("Redrive allow policy with byQueue permission must contain sourceQueueArns.")
                })?;
                if list.is_empty() || list.len() > MAX_SOURCE_ARNS {
                    return Err(bad(&format!(
                        "sourceQueueArns must contain between 1 and {MAX_SOURCE_ARNS} queue ARNs."
                    )));
                }
                let arns: Option<Vec<String>> = list
                    .iter()
                    .map(|a| {
                        a.as_str()
                            .filter(|a| arn_name(a).is_some())
                            .map(str::to_owned)
                    })
                    .collect();
                let arns =
                    arns.ok_or_else(|| bad("sourceQueueArns must contain valid queue ARNs."))?;
                (RedrivePermission::ByQueue, arns)
            }
            _ => {
                return Err(bad(
                    "Invalid value for redrivePermission. Valid values are allowAll, denyAll and byQueue.",
                ));
            }
        };
        Ok(Self {
            permission,
            source_queue_arns,
        })
    }

    /// Whether the source queue `source_arn` may use the queue with this policy.
    #[must_use]
    pub fn allows(&self, source_arn: &str) -> bool {
        match self.permission {
            RedrivePermission::AllowAll => true,
            RedrivePermission::DenyAll => false,
            RedrivePermission::ByQueue => self.source_queue_arns.iter().any(|a| a == source_arn),
        }
    }

    /// AWS's normalised form: `redrivePermission`, then `sourceQueueArns` for byQueue.
    #[must_use]
    pub fn to_json(&self) -> String {
        let mut v = json!({ "redrivePermission": self.permission.as_str() });
        if self.permission == RedrivePermission::ByQueue {
            v["sourceQueueArns"] = json!(self.source_queue_arns);
        }
        v.to_string()
    }
}

/// `ListDeadLetterSourceQueues` request.
#[derive(Debug, Clone, Default)]
pub struct ListDeadLetterSourceQueues {
    /// The dead-letter queue URL.
    pub queue_url: String,
    /// Pagination token.
    pub next_token: Option<String>,
    /// Page size.
    pub max_results: Option<i64>,
}

/// `ListDeadLetterSourceQueues` result (`queueUrls` in JSON).
#[derive(Debug, Clone, Default)]
pub struct ListDeadLetterSourceQueuesResult {
    /// Source queue URLs.
    pub queue_urls: Vec<String>,
    /// Present when more remain.
    pub next_token: Option<String>,
}

/// `StartMessageMoveTask` request.
#[derive(Debug, Clone, Default)]
pub struct StartMessageMoveTask {
    /// ARN of the dead-letter queue to move from.
    pub source_arn: String,
    /// Destination ARN; absent means each message's original source.
    pub destination_arn: Option<String>,
    /// Rate limit, up to 500.
    pub max_number_of_messages_per_second: Option<i64>,
}

/// `StartMessageMoveTask` result.
#[derive(Debug, Clone, Default)]
pub struct StartMessageMoveTaskResult {
    /// Opaque handle (§4).
    pub task_handle: String,
}

/// `CancelMessageMoveTask` request.
#[derive(Debug, Clone, Default)]
pub struct CancelMessageMoveTask {
    /// The handle from `StartMessageMoveTask`.
    pub task_handle: String,
}

/// `CancelMessageMoveTask` result.
#[derive(Debug, Clone, Default)]
pub struct CancelMessageMoveTaskResult {
    /// Messages moved before the cancel.
    pub approximate_number_of_messages_moved: i64,
}

/// `ListMessageMoveTasks` request.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasks {
    /// ARN of the dead-letter queue.
    pub source_arn: String,
    /// 1–10, default 1.
    pub max_results: Option<i64>,
}

/// One task in `ListMessageMoveTasks`.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasksResultEntry {
    /// Only for RUNNING tasks.
    pub task_handle: Option<String>,
    /// RUNNING, COMPLETED, CANCELLING, CANCELLED or FAILED.
    pub status: String,
    /// Source ARN.
    pub source_arn: String,
    /// Destination ARN, when one was given.
    pub destination_arn: Option<String>,
    /// Rate limit, when one was given.
    pub max_number_of_messages_per_second: Option<i64>,
    /// Moved so far.
    pub approximate_number_of_messages_moved: i64,
    /// To move in total.
    pub approximate_number_of_messages_to_move: Option<i64>,
    /// Only for FAILED tasks.
    pub failure_reason: Option<String>,
    /// Epoch milliseconds.
    pub started_timestamp: i64,
}

/// `ListMessageMoveTasks` result.
#[derive(Debug, Clone, Default)]
pub struct ListMessageMoveTasksResult {
    /// Most recent first.
    pub results: Vec<ListMessageMoveTasksResultEntry>,
}

#[cfg(test)]
mod tests {
    use crate::command::redrive::*;

    #[test]
    fn arns() {
        assert_eq!(
            arn_name("arn:aws:sqs:us-east-1:000000000000:dlq"),
            Some("dlq")
        );
        assert_eq!(
            arn_name("arn:aws:sqs:us-east-1:000000000000:d.fifo"),
            Some("d.fifo")
        );
        assert_eq!(arn_name("arn:aws:sns:us-east-1:000000000000:t"), None);
        assert_eq!(arn_name("dlq"), None);
    }

    #[test]
    fn redrive_policies_parse_and_normalise() {
        let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let p = RedrivePolicy::parse(&format!(
            r#"{{"maxReceiveCount": "3", "deadLetterTargetArn": "{arn}"}}"#
        ))
        .unwrap();
        assert_eq!(p.max_receive_count, 3);
        assert_eq!(p.dead_letter_queue_name(), Some("dlq"));
        assert_eq!(
            p.to_json(),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":3}}"#)
        );
        let e = RedrivePolicy::parse(r#"{"deadLetterTargetArn":"x"}"#).unwrap_err();
        assert_eq!(
            e.message,
            r#"Value {"deadLetterTargetArn":"x"} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: maxReceiveCount."#
        );
        let e = RedrivePolicy::parse(r#"{"deadLetterTargetArn":"x","maxReceiveCount":"0"}"#)
            .unwrap_err();
        assert!(
            e.message
                .ends_with("Invalid value for maxReceiveCount: 0, valid values are from 1 to 1000 both inclusive."),
            "{}",
            e.message
        );
        assert!(
            RedrivePolicy::parse(r#"{"deadLetterTargetArn":"x","maxReceiveCount":1001}"#).is_err()
        );
        assert!(RedrivePolicy::parse(r#"{"maxReceiveCount":1}"#).is_err());
        // Not an ARN: refused before any lookup.
        for target in [r#""dlq""#, r#""arn:aws:sqs:us-east-1:000000000000""#, "7"] {
            let text = format!(r#"{{"deadLetterTargetArn":{target},"maxReceiveCount":1}}"#);
            assert_eq!(
                RedrivePolicy::parse(&text).unwrap_err().message,
                format!(
                    "Value {text} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn."
                )
            );
        }
        // An ARN of another service parses; the engine finds no such queue.
        assert!(
            RedrivePolicy::parse(
                r#"{"deadLetterTargetArn":"arn:aws:sns:us-east-1:000000000000:t","maxReceiveCount":1}"#
            )
            .is_ok()
        );
    }

    #[test]
    fn arn_shapes() {
        assert!(is_arn("arn:aws:sqs:us-east-1:000000000000:dlq"));
        assert!(is_arn("arn:aws:s3:::bucket"));
        assert!(is_arn("arn:aws:sqs:us-east-1:000000000000:a:b"));
        assert!(!is_arn("dlq"));
        assert!(!is_arn("arn:aws:sqs:us-east-1:000000000000"));
        assert!(!is_arn("arn::sqs:us-east-1:000000000000:dlq"));
        assert!(!is_arn("arn:aws:sqs:us-east-1:000000000000:"));
        assert!(!is_arn("http://localhost:9324/000000000000/dlq"));
    }

    #[test]
    fn allow_policies() {
        let ok = |t: &str| RedriveAllowPolicy::parse(t).unwrap();
        assert_eq!(
            ok(r#"{"redrivePermission":"allowAll"}"#).permission,
            RedrivePermission::AllowAll
        );
        assert!(!ok(r#"{"redrivePermission":"denyAll"}"#).allows("a"));
        let a = "arn:aws:sqs:us-east-1:000000000000:a";
        let by_queue = format!(r#"{{"sourceQueueArns":["{a}"],"redrivePermission":"byQueue"}}"#);
        let p = ok(&by_queue);
        assert!(p.allows(a));
        assert!(!p.allows("arn:aws:sqs:us-east-1:000000000000:b"));
        assert_eq!(
            p.to_json(),
            format!(r#"{{"redrivePermission":"byQueue","sourceQueueArns":["{a}"]}}"#)
        );
        let err = |t: &str| RedriveAllowPolicy::parse(t).is_err();
        assert!(err(r#"{"redrivePermission":"byQueue"}"#));
        assert!(err(
            r#"{"redrivePermission":"allowAll","sourceQueueArns":[]}"#
        ));
        assert!(err(r#"{"redrivePermission":"sometimes"}"#));
        assert!(err(
            r#"{"redrivePermission":"byQueue","sourceQueueArns":["nope"]}"#
        ));
        let eleven: Vec<String> = (0..11)
            .map(|i| format!("\"arn:aws:sqs:us-east-1:000000000000:q{i}\""))
            .collect();
        assert!(err(&format!(
            r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
            eleven.join(",")
        )));
    }
}
