//! Command layer: a queue's attributes, typed, and the settings that change them
//! (docs/protocol.md §6.1).
//!
//! The engine keeps a [`QueueAttributes`] per queue and reads its fields on hot paths; the
//! name → text form exists only at the edges: GetQueueAttributes, CreateQueue's comparison with
//! an existing queue, and the stored queue record. Imports neither `wire` nor `engine`.

use std::collections::BTreeMap;

use super::check::{bad_value, unknown};
use crate::command::redrive::{RedriveAllowPolicy, RedrivePolicy};
use crate::error::SqsResult;

/// Stored attributes of a queue rendered as text, by name. Only values that are set appear.
pub type AttributeMap = BTreeMap<String, String>;

/// DeduplicationScope of a FIFO queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeduplicationScope {
    /// `queue`.
    Queue,
    /// `messageGroup`.
    MessageGroup,
}

/// FifoThroughputLimit of a FIFO queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FifoThroughputLimit {
    /// `perQueue`.
    PerQueue,
    /// `perMessageGroupId`.
    PerMessageGroupId,
}

/// The attributes only FIFO queues have; all four are always set on a FIFO queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FifoAttributes {
    /// FifoQueue (`true`; kept as given).
    pub fifo_queue: bool,
    /// ContentBasedDeduplication.
    pub content_based_deduplication: bool,
    /// DeduplicationScope.
    pub deduplication_scope: DeduplicationScope,
    /// FifoThroughputLimit.
    pub throughput_limit: FifoThroughputLimit,
}

/// KMS server-side encryption: a key and the data-key reuse period that comes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kms {
    /// KmsMasterKeyId (never empty).
    pub master_key_id: String,
    /// KmsDataKeyReusePeriodSeconds (300 unless set).
    pub data_key_reuse_period_seconds: u32,
}

/// A queue's writable attributes, typed. Which ones are set follows AWS (§6.1): the five
/// numbers and SqsManagedSseEnabled always; the KMS pair together; the FIFO four on FIFO queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueAttributes {
    /// DelaySeconds.
    pub delay_seconds: u32,
    /// MaximumMessageSize, bytes.
    pub maximum_message_size: u32,
    /// MessageRetentionPeriod, seconds.
    pub message_retention_period: u32,
    /// ReceiveMessageWaitTimeSeconds.
    pub receive_message_wait_time_seconds: u32,
    /// VisibilityTimeout, seconds.
    pub visibility_timeout: u32,
    /// SqsManagedSseEnabled.
    pub sqs_managed_sse_enabled: bool,
    /// KmsMasterKeyId and KmsDataKeyReusePeriodSeconds.
    pub kms: Option<Kms>,
    /// Policy, a JSON object kept as sent.
    pub policy: Option<String>,
    /// RedrivePolicy.
    pub redrive_policy: Option<RedrivePolicy>,
    /// RedriveAllowPolicy.
    pub redrive_allow_policy: Option<RedriveAllowPolicy>,
    /// FIFO queues only.
    pub fifo: Option<FifoAttributes>,
}

/// One written attribute, typed. Made from a value [`validate`](super::check::validate) normalised (or from a stored
/// one), so parsing it cannot meet a value out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// DelaySeconds.
    DelaySeconds(u32),
    /// MaximumMessageSize.
    MaximumMessageSize(u32),
    /// MessageRetentionPeriod.
    MessageRetentionPeriod(u32),
    /// ReceiveMessageWaitTimeSeconds.
    ReceiveMessageWaitTimeSeconds(u32),
    /// VisibilityTimeout.
    VisibilityTimeout(u32),
    /// SqsManagedSseEnabled.
    SqsManagedSseEnabled(bool),
    /// KmsMasterKeyId; `None` (an empty value) removes the key.
    KmsMasterKeyId(Option<String>),
    /// KmsDataKeyReusePeriodSeconds.
    KmsDataKeyReusePeriodSeconds(u32),
    /// Policy; `None` removes it.
    Policy(Option<String>),
    /// RedrivePolicy; `None` removes it.
    RedrivePolicy(Option<RedrivePolicy>),
    /// RedriveAllowPolicy; `None` removes it.
    RedriveAllowPolicy(Option<RedriveAllowPolicy>),
    /// FifoQueue.
    FifoQueue(bool),
    /// ContentBasedDeduplication.
    ContentBasedDeduplication(bool),
    /// DeduplicationScope.
    DeduplicationScope(DeduplicationScope),
    /// FifoThroughputLimit.
    FifoThroughputLimit(FifoThroughputLimit),
}

fn non_empty(v: String) -> Option<String> {
    (!v.is_empty()).then_some(v)
}

impl Setting {
    /// Parses a normalised value. The two redrive policies go through
    /// [`RedrivePolicy::parse`] and [`RedriveAllowPolicy::parse`], whose errors are AWS's.
    pub fn parse(name: &str, value: String) -> SqsResult<Setting> {
        let num = |v: &str| v.parse::<u32>().map_err(|_| bad_value(name));
        let flag = |v: &str| match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(bad_value(name)),
        };
        Ok(match name {
            "DelaySeconds" => Setting::DelaySeconds(num(&value)?),
            "MaximumMessageSize" => Setting::MaximumMessageSize(num(&value)?),
            "MessageRetentionPeriod" => Setting::MessageRetentionPeriod(num(&value)?),
            "ReceiveMessageWaitTimeSeconds" => Setting::ReceiveMessageWaitTimeSeconds(num(&value)?),
            "VisibilityTimeout" => Setting::VisibilityTimeout(num(&value)?),
            "KmsDataKeyReusePeriodSeconds" => Setting::KmsDataKeyReusePeriodSeconds(num(&value)?),
            "SqsManagedSseEnabled" => Setting::SqsManagedSseEnabled(flag(&value)?),
            "FifoQueue" => Setting::FifoQueue(flag(&value)?),
            "ContentBasedDeduplication" => Setting::ContentBasedDeduplication(flag(&value)?),
            "KmsMasterKeyId" => Setting::KmsMasterKeyId(non_empty(value)),
            "Policy" => Setting::Policy(non_empty(value)),
            "RedrivePolicy" => Setting::RedrivePolicy(match non_empty(value) {
                Some(v) => Some(RedrivePolicy::parse(&v)?),
                None => None,
            }),
            "RedriveAllowPolicy" => Setting::RedriveAllowPolicy(match non_empty(value) {
                Some(v) => Some(RedriveAllowPolicy::parse(&v)?),
                None => None,
            }),
            "DeduplicationScope" => Setting::DeduplicationScope(match value.as_str() {
                "queue" => DeduplicationScope::Queue,
                "messageGroup" => DeduplicationScope::MessageGroup,
                _ => return Err(bad_value(name)),
            }),
            "FifoThroughputLimit" => Setting::FifoThroughputLimit(match value.as_str() {
                "perQueue" => FifoThroughputLimit::PerQueue,
                "perMessageGroupId" => FifoThroughputLimit::PerMessageGroupId,
                _ => return Err(bad_value(name)),
            }),
            _ => return Err(unknown(name)),
        })
    }

    /// The attribute's name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Setting::DelaySeconds(_) => "DelaySeconds",
            Setting::MaximumMessageSize(_) => "MaximumMessageSize",
            Setting::MessageRetentionPeriod(_) => "MessageRetentionPeriod",
            Setting::ReceiveMessageWaitTimeSeconds(_) => "ReceiveMessageWaitTimeSeconds",
            Setting::VisibilityTimeout(_) => "VisibilityTimeout",
            Setting::SqsManagedSseEnabled(_) => "SqsManagedSseEnabled",
            Setting::KmsMasterKeyId(_) => "KmsMasterKeyId",
            Setting::KmsDataKeyReusePeriodSeconds(_) => "KmsDataKeyReusePeriodSeconds",
            Setting::Policy(_) => "Policy",
            Setting::RedrivePolicy(_) => "RedrivePolicy",
            Setting::RedriveAllowPolicy(_) => "RedriveAllowPolicy",
            Setting::FifoQueue(_) => "FifoQueue",
            Setting::ContentBasedDeduplication(_) => "ContentBasedDeduplication",
            Setting::DeduplicationScope(_) => "DeduplicationScope",
            Setting::FifoThroughputLimit(_) => "FifoThroughputLimit",
        }
    }

    /// The value as GetQueueAttributes shows it; empty for a removal.
    #[must_use]
    pub fn text(&self) -> String {
        match self {
            Setting::DelaySeconds(n)
            | Setting::MaximumMessageSize(n)
            | Setting::MessageRetentionPeriod(n)
            | Setting::ReceiveMessageWaitTimeSeconds(n)
            | Setting::VisibilityTimeout(n)
            | Setting::KmsDataKeyReusePeriodSeconds(n) => n.to_string(),
            Setting::SqsManagedSseEnabled(b)
            | Setting::FifoQueue(b)
            | Setting::ContentBasedDeduplication(b) => b.to_string(),
            Setting::KmsMasterKeyId(s) | Setting::Policy(s) => s.clone().unwrap_or_default(),
            Setting::RedrivePolicy(p) => p.as_ref().map(RedrivePolicy::to_json).unwrap_or_default(),
            Setting::RedriveAllowPolicy(p) => p
                .as_ref()
                .map(RedriveAllowPolicy::to_json)
                .unwrap_or_default(),
            Setting::DeduplicationScope(s) => match s {
                DeduplicationScope::Queue => "queue".into(),
                DeduplicationScope::MessageGroup => "messageGroup".into(),
            },
            Setting::FifoThroughputLimit(l) => match l {
                FifoThroughputLimit::PerQueue => "perQueue".into(),
                FifoThroughputLimit::PerMessageGroupId => "perMessageGroupId".into(),
            },
        }
    }
}

impl QueueAttributes {
    /// The attributes a new queue starts with (§6.1, as AWS returns them).
    #[must_use]
    pub fn defaults(fifo: bool) -> Self {
        Self {
            delay_seconds: 0,
            maximum_message_size: 1_048_576,
            message_retention_period: 345_600,
            receive_message_wait_time_seconds: 0,
            visibility_timeout: 30,
            sqs_managed_sse_enabled: true,
            kms: None,
            policy: None,
            redrive_policy: None,
            redrive_allow_policy: None,
            fifo: fifo.then_some(FifoAttributes {
                fifo_queue: true,
                content_based_deduplication: false,
                deduplication_scope: DeduplicationScope::Queue,
                throughput_limit: FifoThroughputLimit::PerQueue,
            }),
        }
    }

    /// Applies settings in request order, with AWS's side effects: a KMS key turns SQS-managed
    /// SSE off and brings the data-key reuse period (default 300) with it; without a key the
    /// period is dropped; removing the key removes the period (§6.1).
    pub fn apply(&mut self, settings: &[Setting]) {
        for s in settings {
            self.set(s.clone());
        }
    }

    fn set(&mut self, s: Setting) {
        match s {
            Setting::DelaySeconds(n) => self.delay_seconds = n,
            Setting::MaximumMessageSize(n) => self.maximum_message_size = n,
            Setting::MessageRetentionPeriod(n) => self.message_retention_period = n,
            Setting::ReceiveMessageWaitTimeSeconds(n) => self.receive_message_wait_time_seconds = n,
            Setting::VisibilityTimeout(n) => self.visibility_timeout = n,
            Setting::SqsManagedSseEnabled(b) => self.sqs_managed_sse_enabled = b,
            Setting::KmsMasterKeyId(None) => self.kms = None,
            Setting::KmsMasterKeyId(Some(key)) => {
                self.sqs_managed_sse_enabled = false;
                match &mut self.kms {
                    Some(k) => k.master_key_id = key,
                    None => {
                        self.kms = Some(Kms {
                            master_key_id: key,
                            data_key_reuse_period_seconds: 300,
                        });
                    }
                }
            }
            Setting::KmsDataKeyReusePeriodSeconds(n) => {
                if let Some(k) = &mut self.kms {
                    k.data_key_reuse_period_seconds = n;
                }
            }
            Setting::Policy(p) => self.policy = p,
            Setting::RedrivePolicy(p) => self.redrive_policy = p,
            Setting::RedriveAllowPolicy(p) => self.redrive_allow_policy = p,
            Setting::FifoQueue(b) => self.fifo_mut(|f| f.fifo_queue = b),
            Setting::ContentBasedDeduplication(b) => {
                self.fifo_mut(|f| f.content_based_deduplication = b);
            }
            Setting::DeduplicationScope(d) => self.fifo_mut(|f| f.deduplication_scope = d),
            Setting::FifoThroughputLimit(l) => self.fifo_mut(|f| f.throughput_limit = l),
        }
    }

    /// Changes a FIFO attribute; [`validate`](super::check::validate) refuses them on standard queues.
    fn fifo_mut(&mut self, change: impl FnOnce(&mut FifoAttributes)) {
        if let Some(f) = &mut self.fifo {
            change(f);
        }
    }

    /// Every set attribute as a setting, in no particular order.
    fn settings(&self) -> Vec<Setting> {
        let mut out = vec![
            Setting::DelaySeconds(self.delay_seconds),
            Setting::MaximumMessageSize(self.maximum_message_size),
            Setting::MessageRetentionPeriod(self.message_retention_period),
            Setting::ReceiveMessageWaitTimeSeconds(self.receive_message_wait_time_seconds),
            Setting::VisibilityTimeout(self.visibility_timeout),
            Setting::SqsManagedSseEnabled(self.sqs_managed_sse_enabled),
        ];
        if let Some(k) = &self.kms {
            out.push(Setting::KmsMasterKeyId(Some(k.master_key_id.clone())));
            out.push(Setting::KmsDataKeyReusePeriodSeconds(
                k.data_key_reuse_period_seconds,
            ));
        }
        if let Some(p) = &self.policy {
            out.push(Setting::Policy(Some(p.clone())));
        }
        if let Some(p) = &self.redrive_policy {
            out.push(Setting::RedrivePolicy(Some(p.clone())));
        }
        if let Some(p) = &self.redrive_allow_policy {
            out.push(Setting::RedriveAllowPolicy(Some(p.clone())));
        }
        if let Some(f) = &self.fifo {
            out.push(Setting::FifoQueue(f.fifo_queue));
            out.push(Setting::ContentBasedDeduplication(
                f.content_based_deduplication,
            ));
            out.push(Setting::DeduplicationScope(f.deduplication_scope));
            out.push(Setting::FifoThroughputLimit(f.throughput_limit));
        }
        out
    }

    /// The set attributes as text, by name: what GetQueueAttributes shows and the store keeps.
    #[must_use]
    pub fn to_map(&self) -> AttributeMap {
        self.settings()
            .into_iter()
            .map(|s| (s.name().to_owned(), s.text()))
            .collect()
    }

    /// Reads back a map [`QueueAttributes::to_map`] wrote; `fifo` is the queue's type.
    pub fn from_map(map: &AttributeMap, fifo: bool) -> SqsResult<Self> {
        let mut a = Self::defaults(fifo);
        let mut kms_period = None;
        for (name, value) in map {
            match Setting::parse(name, value.clone())? {
                // Set the pair directly: `apply` would drop a period read before its key.
                Setting::KmsMasterKeyId(key) => {
                    a.kms = key.map(|master_key_id| Kms {
                        master_key_id,
                        data_key_reuse_period_seconds: 300,
                    });
                }
                Setting::KmsDataKeyReusePeriodSeconds(n) => kms_period = Some(n),
                s => a.set(s),
            }
        }
        if let (Some(k), Some(n)) = (&mut a.kms, kms_period) {
            k.data_key_reuse_period_seconds = n;
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use crate::command::attributes::check::validate;
    use crate::command::attributes::settings::*;

    fn settings(name: &str, value: &str) -> Vec<Setting> {
        validate(&[(name.into(), value.into())], false, false)
            .unwrap()
            .into_iter()
            .map(|(k, v)| Setting::parse(&k, v).unwrap())
            .collect()
    }

    #[test]
    fn kms_side_effects() {
        let mut a = QueueAttributes::defaults(false);
        a.apply(&settings("KmsMasterKeyId", "testKeyId"));
        let m = a.to_map();
        assert_eq!(m["SqsManagedSseEnabled"], "false");
        assert_eq!(m["KmsDataKeyReusePeriodSeconds"], "300");
        a.apply(&settings("KmsDataKeyReusePeriodSeconds", "0600"));
        assert_eq!(a.to_map()["KmsDataKeyReusePeriodSeconds"], "600");
        assert_eq!(QueueAttributes::from_map(&a.to_map(), false).unwrap(), a);
        a.apply(&settings("KmsMasterKeyId", ""));
        let m = a.to_map();
        assert!(!m.contains_key("KmsMasterKeyId"));
        assert!(!m.contains_key("KmsDataKeyReusePeriodSeconds"));
        assert_eq!(m["SqsManagedSseEnabled"], "false");
        // Without a key the period is not kept.
        a.apply(&settings("KmsDataKeyReusePeriodSeconds", "600"));
        assert!(!a.to_map().contains_key("KmsDataKeyReusePeriodSeconds"));
    }

    #[test]
    fn maps_round_trip_with_aws_texts() {
        let fifo = QueueAttributes::defaults(true);
        let m = fifo.to_map();
        let want = [
            ("ContentBasedDeduplication", "false"),
            ("DeduplicationScope", "queue"),
            ("DelaySeconds", "0"),
            ("FifoQueue", "true"),
            ("FifoThroughputLimit", "perQueue"),
            ("MaximumMessageSize", "1048576"),
            ("MessageRetentionPeriod", "345600"),
            ("ReceiveMessageWaitTimeSeconds", "0"),
            ("SqsManagedSseEnabled", "true"),
            ("VisibilityTimeout", "30"),
        ];
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
        assert_eq!(QueueAttributes::from_map(&m, true).unwrap(), fifo);
        let mut std = QueueAttributes::defaults(false);
        std.apply(&[
            Setting::Policy(Some(r#"{"Version": "2012-10-17"}"#.into())),
            Setting::parse(
                "RedrivePolicy",
                r#"{"maxReceiveCount":"5","deadLetterTargetArn":"arn:aws:sqs:r:1:d"}"#.into(),
            )
            .unwrap(),
        ]);
        let m = std.to_map();
        assert_eq!(m["Policy"], r#"{"Version": "2012-10-17"}"#);
        assert_eq!(
            m["RedrivePolicy"],
            r#"{"deadLetterTargetArn":"arn:aws:sqs:r:1:d","maxReceiveCount":5}"#
        );
        assert!(!m.contains_key("FifoQueue"));
        assert_eq!(QueueAttributes::from_map(&m, false).unwrap(), std);
        let mut bad = m.clone();
        bad.insert("QueueArn".into(), "x".into());
        assert!(QueueAttributes::from_map(&bad, false).is_err());
    }
}
