//! HTTP layer: what one answered request tells the hooks and the debug log: its answer, the
//! queue it addressed, the error it got, the account and region it acted in and, for a
//! receive, how many messages it handed out; and the debug line itself.

use std::sync::Arc;
use std::time::Duration;

use crate::command::{Action, Scope};
use crate::error::ErrorCode;
use crate::wire::{WireRequest, WireResponse};

/// A request answered, with what the hooks and the debug log are told about it.
pub(super) struct Executed {
    pub resp: WireResponse,
    /// The queue addressed, when a hook or the debug log wants it.
    pub queue: Option<String>,
    /// The SQS error answered.
    pub error: Option<ErrorCode>,
    /// The account and region the request acted in, once it was decoded.
    pub scope: Option<Arc<Scope>>,
    /// ReceiveMessage only, and only while debug logging is on: the messages handed out.
    pub received: Option<usize>,
}

impl Executed {
    /// An answer that knows nothing but itself: an admin route's, or a rejected request's.
    pub(super) fn bare(resp: WireResponse) -> Self {
        Self {
            resp,
            queue: None,
            error: None,
            scope: None,
            received: None,
        }
    }
}

/// The debug line of one request: action, queue, error code, account and region, for a
/// receive the number of messages handed out, and the request's id, method, path, status and
/// time. Nothing is formatted while debug logging is off.
pub(super) fn log_request(
    done: &Executed,
    wreq: &WireRequest<'_>,
    request_id: &str,
    elapsed: Duration,
) {
    let scope = done.scope.as_deref();
    tracing::debug!(
        action = %done.resp.action.map_or("-", Action::name),
        queue = %done.queue.as_deref().unwrap_or("-"),
        error = %done.error.map_or("-", ErrorCode::name),
        account = %scope.map_or("-", |s| s.account.as_str()),
        region = %scope.map_or("-", |s| s.region.as_str()),
        messages = done.received,
        request_id = %request_id,
        method = %wreq.method,
        path = %wreq.path,
        status = done.resp.status,
        elapsed_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        "request"
    );
}
