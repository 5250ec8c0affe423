//! Tools layer: fault-injection rules as users write them (a JSON body of
//! `/_localsqs/faults`, a `[[fault]]` table of the config file, the Rust API), and their
//! validation.

use serde::{Deserialize, Serialize};

use crate::command::Action;
use crate::error::{ErrorCode, SqsError};

/// The AWS errors a rule may answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InjectedError {
    /// 403 `RequestThrottled`: SDKs retry it with back-off.
    RequestThrottled,
    /// 403 `OverLimit`.
    OverLimit,
    /// 400 `KMS.ThrottlingException`.
    KmsThrottled,
    /// 500 `InternalError`: SDKs retry it.
    InternalError,
    /// 503 `ServiceUnavailable`: SDKs retry it.
    ServiceUnavailable,
}

impl InjectedError {
    pub(super) fn to_error(self) -> SqsError {
        let (code, text) = match self {
            Self::RequestThrottled => (ErrorCode::RequestThrottled, "Rate exceeded."),
            Self::OverLimit => (ErrorCode::OverLimit, "Request would exceed a limit."),
            Self::KmsThrottled => (ErrorCode::KmsThrottled, "Rate exceeded."),
            Self::InternalError => (
                ErrorCode::InternalError,
                "We encountered an internal error. Please try again.",
            ),
            Self::ServiceUnavailable => (
                ErrorCode::ServiceUnavailable,
                "The service is unavailable. Please try again shortly.",
            ),
        };
        SqsError::new(code, text)
    }
}

/// A fixed delay or a range to draw one from, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Latency {
    /// Always this many milliseconds.
    Fixed(u64),
    /// Uniformly between the two bounds, inclusive.
    Range([u64; 2]),
}

/// A fault rule as users write it (JSON body, config file `[[fault]]`, Rust API).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    /// Only requests addressing this queue (by name); every queue when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Only these actions (wire names); every action when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Answer with this error instead of acting...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<InjectedError>,
    /// ...for this share of matching requests (default 1 when `error` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// Wait this long before answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
    /// Standard queues: this share of received messages is handed out again by a later
    /// receive while still in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_rate: Option<f64>,
    /// Standard queues: receives take messages in random order.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reorder: bool,
    /// Standard queues: this share of short-poll receives answers empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_receive_rate: Option<f64>,
    /// Seed of the rule's generator (random when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl FaultRule {
    /// Checks ranges and names; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        for a in &self.actions {
            if Action::from_name(a).is_none() {
                return Err(format!("unknown action {a:?} in actions"));
            }
        }
        let rates = [
            ("error_rate", self.error_rate),
            ("duplicate_rate", self.duplicate_rate),
            ("empty_receive_rate", self.empty_receive_rate),
        ];
        for (name, rate) in rates {
            if rate.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
                return Err(format!("{name} must be between 0 and 1"));
            }
        }
        if self.error_rate.is_some() && self.error.is_none() {
            return Err("error_rate needs an error".into());
        }
        if let Some(Latency::Range([lo, hi])) = self.latency_ms
            && lo > hi
        {
            return Err("latency_ms range must be [min, max]".into());
        }
        let does_something = self.error.is_some()
            || self.latency_ms.is_some()
            || self.duplicate_rate.is_some()
            || self.reorder
            || self.empty_receive_rate.is_some();
        if !does_something {
            return Err(
                "a rule needs error, latency_ms, duplicate_rate, reorder or empty_receive_rate"
                    .into(),
            );
        }
        Ok(())
    }

    pub(super) fn matches(&self, action: Action, queue: Option<&str>) -> bool {
        (self.actions.is_empty() || self.actions.iter().any(|a| a == action.name()))
            && self.queue.as_deref().is_none_or(|q| queue == Some(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_validated() {
        let bad = |r: FaultRule| r.validate().unwrap_err();
        assert!(bad(FaultRule::default()).contains("needs"));
        assert!(
            bad(FaultRule {
                error_rate: Some(2.0),
                error: Some(InjectedError::OverLimit),
                ..FaultRule::default()
            })
            .contains("between 0 and 1")
        );
        assert!(
            bad(FaultRule {
                actions: vec!["Nope".into()],
                reorder: true,
                ..FaultRule::default()
            })
            .contains("Nope")
        );
    }
}
