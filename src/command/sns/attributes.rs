//! Command layer, SNS: topic and subscription attributes: which names exist, which values they
//! take, how they are stored and shown (docs/sns.md §4.2, §4.3, §5.2, §5.3). Texts are AWS's
//! where recorded; unrecorded cases are marked [E].

use super::error::{SnsError, SnsResult};
use super::filter::FilterPolicy;

/// Topic attributes that are stored as given (besides FifoTopic, which is the topic's kind).
const TOPIC_SETTABLE: &[&str] = &[
    "DisplayName",
    "Policy",
    "DeliveryPolicy",
    "SignatureVersion",
    "TracingConfig",
    "KmsMasterKeyId",
    "ContentBasedDeduplication",
    "FifoThroughputScope",
    "ArchivePolicy",
];

/// Delivery-status logging attributes: `<Proto><Kind>` (§4.2), stored and echoed.
fn is_feedback(name: &str) -> bool {
    ["HTTP", "Lambda", "SQS", "Firehose", "Application"]
        .iter()
        .filter_map(|p| name.strip_prefix(p))
        .any(|k| {
            matches!(
                k,
                "SuccessFeedbackRoleArn" | "SuccessFeedbackSampleRate" | "FailureFeedbackRoleArn"
            )
        })
}

/// Checks one topic attribute of CreateTopic (`creating`) or SetTopicAttributes on a topic of
/// this kind; answers the value to store, or `None` for an empty DeliveryPolicy (removed).
pub fn topic_attribute(
    name: &str,
    value: &str,
    creating: bool,
    fifo: bool,
) -> SnsResult<Option<String>> {
    let bad_value = || SnsError::invalid_parameter(&format!("Attributes Reason: {name}"));
    match name {
        "FifoTopic" if !creating => Err(SnsError::invalid_parameter("AttributeName")),
        "SignatureVersion" if !matches!(value, "1" | "2") => Err(bad_value()),
        "TracingConfig" if !matches!(value, "PassThrough" | "Active") => Err(bad_value()),
        "ContentBasedDeduplication" if !matches!(value, "true" | "false") => Err(bad_value()),
        // [E] moto: ContentBasedDeduplication is refused on a standard topic.
        "ContentBasedDeduplication" if !fifo => Err(SnsError::invalid_parameter(
            "Content-based deduplication can only be set for FIFO topics",
        )),
        "FifoThroughputScope" if !matches!(value, "Topic" | "MessageGroup") => Err(bad_value()),
        "DeliveryPolicy" | "Policy" if !value.is_empty() && !is_json_object(value) => {
            Err(SnsError::invalid_parameter(&format!(
                "Attributes Reason: {name}: failed to parse JSON."
            )))
        }
        "DeliveryPolicy" if value.is_empty() => Ok(None),
        n if TOPIC_SETTABLE.contains(&n) || is_feedback(n) => Ok(Some(value.to_owned())),
        // [E] unrecorded; the SetTopicAttributes text for a read-only or unknown name.
        _ => Err(SnsError::invalid_parameter("AttributeName")),
    }
}

fn is_json_object(s: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(s).is_ok_and(|v| v.is_object())
}

/// The Policy of a new topic, compact and in AWS's key order (§4.3, [V]).
#[must_use]
pub fn default_policy(topic_arn: &str, account: &str) -> String {
    format!(
        r#"{{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{{"AWS":"*"}},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"{topic_arn}","Condition":{{"StringEquals":{{"AWS:SourceOwner":"{account}"}}}}}}]}}"#
    )
}

/// EffectiveDeliveryPolicy of a topic without DeliveryPolicy (§4.3, [V] 2024).
pub const DEFAULT_EFFECTIVE_DELIVERY_POLICY: &str = r#"{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}"#;

/// The protocols Subscribe accepts (§5.1).
pub const PROTOCOLS: &[&str] = &[
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "sqs",
    "application",
    "lambda",
    "firehose",
];

/// What a subscription attribute is checked against.
#[derive(Debug, Clone, Copy)]
pub struct SubscriptionKind<'a> {
    /// The subscription's protocol.
    pub protocol: &'a str,
    /// Whether the topic is FIFO.
    pub fifo_topic: bool,
    /// Whether the endpoint is a FIFO queue.
    pub fifo_endpoint: bool,
    /// The FilterPolicyScope in force (for checking a FilterPolicy against it).
    pub body_scope: bool,
}

/// Checks one subscription attribute; `prefix` is `Invalid parameter: Attributes Reason: ` in
/// Subscribe and `Invalid parameter: ` in SetSubscriptionAttributes (§5.3). Answers the value
/// to store (`RawMessageDelivery` lower-cased), or `None` for an empty FilterPolicy (removed).
pub fn subscription_attribute(
    name: &str,
    value: &str,
    prefix: &str,
    kind: SubscriptionKind<'_>,
) -> SnsResult<Option<String>> {
    let err = |reason: String| SnsError::invalid(format!("{prefix}{reason}"));
    match name {
        "RawMessageDelivery" => {
            let v = value.to_ascii_lowercase();
            if v == "true" || v == "false" {
                Ok(Some(v))
            } else {
                Err(err(format!(
                    "RawMessageDelivery: Invalid value [{value}]. Must be true or false."
                )))
            }
        }
        "FilterPolicyScope" => match value {
            "MessageAttributes" | "MessageBody" => Ok(Some(value.to_owned())),
            _ => Err(err(format!(
                "FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"
            ))),
        },
        "FilterPolicy" if value.is_empty() => Ok(None),
        "FilterPolicy" => {
            FilterPolicy::compile(value, kind.body_scope).map_err(|e| match e {
                super::filter::PolicyError::Whole(text) => SnsError::invalid(text),
                super::filter::PolicyError::Reason(text) => err(format!("FilterPolicy: {text}")),
            })?;
            Ok(Some(value.to_owned()))
        }
        "RedrivePolicy" => {
            let v: serde_json::Value = serde_json::from_str(value)
                .map_err(|e| err(format!("RedrivePolicy: failed to parse JSON. {e}")))?;
            let target = v
                .get("deadLetterTargetArn")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            let parts: Vec<&str> = target.split(':').collect();
            if parts.len() != 6 || parts[0] != "arn" || parts[2] != "sqs" {
                return Err(err(
                    "RedrivePolicy: deadLetterTargetArn is an invalid arn".into()
                ));
            }
            if kind.fifo_topic && kind.fifo_endpoint && !target.ends_with(".fifo") {
                return Err(err(
                    "RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."
                        .into(),
                ));
            }
            Ok(Some(value.to_owned()))
        }
        "DeliveryPolicy" if matches!(kind.protocol, "http" | "https") => {
            if is_json_object(value) {
                Ok(Some(value.to_owned()))
            } else {
                Err(err("DeliveryPolicy: failed to parse JSON.".into()))
            }
        }
        "SubscriptionRoleArn" | "ReplayPolicy" => Ok(Some(value.to_owned())),
        _ => Err(SnsError::invalid_parameter("AttributeName")),
    }
}

/// Normalises a subscription attribute value for comparing a repeated Subscribe with the
/// existing subscription (§5.1): the default FilterPolicyScope equals its absence.
#[must_use]
pub fn same_subscription_attribute(name: &str, stored: Option<&str>, given: &str) -> bool {
    match (name, stored) {
        ("RawMessageDelivery", None) => given.eq_ignore_ascii_case("false"),
        ("RawMessageDelivery", Some(s)) => s.eq_ignore_ascii_case(given),
        ("FilterPolicyScope", None) => given == "MessageAttributes",
        ("FilterPolicy", None) => given.is_empty(),
        (_, Some(s)) => s == given,
        (_, None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqs() -> SubscriptionKind<'static> {
        SubscriptionKind {
            protocol: "sqs",
            fifo_topic: false,
            fifo_endpoint: false,
            body_scope: false,
        }
    }

    #[test]
    fn subscription_attribute_texts() {
        let set = "Invalid parameter: ";
        assert_eq!(
            subscription_attribute("RawMessageDelivery", "TrUe", set, sqs()).unwrap(),
            Some("true".into())
        );
        let e = subscription_attribute("RawMessageDelivery", "test-ValUe", set, sqs()).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid parameter: RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false."
        );
        let e = subscription_attribute("Nope", "1", set, sqs()).unwrap_err();
        assert_eq!(e.message, "Invalid parameter: AttributeName");
        let e = subscription_attribute(
            "RedrivePolicy",
            r#"{"deadLetterTargetArn":"x"}"#,
            "Invalid parameter: Attributes Reason: ",
            sqs(),
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Invalid parameter: Attributes Reason: RedrivePolicy: deadLetterTargetArn is an invalid arn"
        );
        assert!(same_subscription_attribute(
            "FilterPolicyScope",
            None,
            "MessageAttributes"
        ));
        assert!(same_subscription_attribute(
            "RawMessageDelivery",
            Some("true"),
            "True"
        ));
    }

    #[test]
    fn topic_attributes() {
        assert_eq!(
            topic_attribute("DisplayName", "d", true, false).unwrap(),
            Some("d".into())
        );
        assert!(topic_attribute("FifoTopic", "true", false, true).is_err());
        assert!(topic_attribute("SignatureVersion", "3", true, false).is_err());
        assert_eq!(
            topic_attribute("DeliveryPolicy", "", false, false).unwrap(),
            None
        );
        assert!(topic_attribute("SQSSuccessFeedbackRoleArn", "arn", true, false).is_ok());
        assert!(default_policy("arn:t", "1").contains(r#""Resource":"arn:t""#));
    }
}
