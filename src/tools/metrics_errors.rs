//! Tools layer: the errors the SQS API answered, by action and code, for `/metrics`
//! (`localsqs_request_errors_total{action, code}`). One atomic per (action, code) pair, made up
//! front, so counting an error takes no lock and allocates nothing; a scrape writes the pairs
//! that occurred.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;

use crate::command::Action;
use crate::error::ErrorCode;

/// The `action` label of errors answered before an action was known (an unknown or missing
/// `Action`).
pub const NO_ACTION: &str = "(none)";

/// Labels of the error counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    action: &'static str,
    code: &'static str,
}

/// Errors answered, by action (one row more for no action) and code.
#[derive(Debug)]
pub(super) struct ErrorCounts {
    cells: Vec<AtomicU64>,
}

impl ErrorCounts {
    pub(super) fn new() -> Self {
        let n = (Action::COUNT + 1) * ErrorCode::ALL.len();
        Self {
            cells: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn cell(action: Option<Action>, code: ErrorCode) -> usize {
        let row = action.map_or(Action::COUNT, |a| a as usize);
        row * ErrorCode::ALL.len() + code as usize
    }

    /// Counts one error.
    pub(super) fn count(&self, action: Option<Action>, code: ErrorCode) {
        if let Some(c) = self.cells.get(Self::cell(action, code)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many errors of this action and code were answered.
    #[cfg(test)]
    fn get(&self, action: Option<Action>, code: ErrorCode) -> u64 {
        self.cells[Self::cell(action, code)].load(Ordering::Relaxed)
    }
}

/// The collector of a shared [`ErrorCounts`].
#[derive(Debug)]
pub(super) struct ErrorSeries(pub(super) std::sync::Arc<ErrorCounts>);

impl Collector for ErrorSeries {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "localsqs_request_errors",
            "SQS API requests answered with an error, by action and error code.",
            None,
            ConstCounter::new(0u64).metric_type(),
        )?;
        let actions = Action::ALL.iter().map(|a| (Some(*a), a.name()));
        for (action, action_name) in actions.chain([(None, NO_ACTION)]) {
            for code in ErrorCode::ALL {
                let n = self.0.cells[ErrorCounts::cell(action, *code)].load(Ordering::Relaxed);
                if n == 0 {
                    continue;
                }
                let labels = ErrorLabels {
                    action: action_name,
                    code: code.name(),
                };
                ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_has_its_own_cell() {
        let e = ErrorCounts::new();
        e.count(Some(Action::ReceiveMessage), ErrorCode::QueueDoesNotExist);
        e.count(Some(Action::ReceiveMessage), ErrorCode::QueueDoesNotExist);
        e.count(None, ErrorCode::InternalError);
        let last = Action::ALL[Action::ALL.len() - 1];
        let last_code = ErrorCode::ALL[ErrorCode::ALL.len() - 1];
        e.count(Some(last), last_code);
        assert_eq!(
            e.get(Some(Action::ReceiveMessage), ErrorCode::QueueDoesNotExist),
            2
        );
        assert_eq!(
            e.get(Some(Action::SendMessage), ErrorCode::QueueDoesNotExist),
            0
        );
        assert_eq!(e.get(None, ErrorCode::InternalError), 1);
        assert_eq!(e.get(Some(last), last_code), 1);
        assert_eq!(
            e.cells
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .sum::<u64>(),
            4
        );
    }
}
