//! Engine layer, model: SNS deliveries that leave the engine (http, https and lambda
//! subscriptions, and confirmation requests), queued in memory for the delivery worker of the
//! tools layer (`tools/sns/`), which takes them, calls the endpoint and retries on the
//! controllable clock. Not stored: a restart drops the deliveries still queued (queues'
//! deliveries are stored with the publish; these are AWS's at-least-once best effort).

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::Notify;

/// Most deliveries held; past it the oldest are dropped (an unreachable endpoint must not
/// grow memory without bound).
pub(crate) const MAX_PENDING: usize = 100_000;

/// Where a delivery goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnsTarget {
    /// POST to this `http://` or `https://` URL.
    Http(String),
    /// A Lambda function (by ARN): a push target of this server whose name matches.
    Lambda(String),
}

/// One delivery for the worker.
#[derive(Debug, Clone)]
pub struct SnsDelivery {
    /// Where it goes.
    pub target: SnsTarget,
    /// The body (envelope, raw message, or Lambda event).
    pub body: String,
    /// Headers to send (`x-amz-sns-*`, `Content-Type`).
    pub headers: Vec<(String, String)>,
    /// The subscription it is for (empty for a confirmation of a subscription now gone).
    pub subscription_arn: String,
    /// The subscription's dead-letter queue ARN, if it has a RedrivePolicy.
    pub dead_letter_arn: Option<String>,
    /// The topic's or subscription's delivery policy (JSON), for retries.
    pub delivery_policy: Option<String>,
    /// What the dead-letter queue gets: the body, and attributes for a raw subscription.
    pub dead_letter_body: String,
    /// Raw subscriptions: the message attributes mapped to SQS attributes in the DLQ.
    pub dead_letter_attributes: crate::command::MessageAttributes,
}

/// The queue of deliveries and the worker's wake-up.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    items: VecDeque<SnsDelivery>,
    notify: Arc<Notify>,
}

impl Outbox {
    /// Queues a delivery and wakes the worker.
    pub fn push(&mut self, d: SnsDelivery) {
        if self.items.len() >= MAX_PENDING {
            self.items.pop_front();
        }
        self.items.push_back(d);
        self.notify.notify_one();
    }

    /// Takes every queued delivery.
    pub fn take(&mut self) -> Vec<SnsDelivery> {
        self.items.drain(..).collect()
    }

    /// What the worker waits on.
    pub fn notify(&self) -> Arc<Notify> {
        Arc::clone(&self.notify)
    }

    /// Drops everything (reset).
    pub fn clear(&mut self) {
        self.items.clear();
    }
}
