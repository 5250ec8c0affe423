//! HTTP layer: an Amazon SNS request's journey, once `wire::Api::detect` has named SNS:
//! `wire::sns::decode` → `Engine::execute_sns` → `wire::sns::encode`, in the request's account
//! and region. SNS requests do not pass through the SQS hooks (fault rules are SQS's).

use super::front::Front;
use crate::command::RequestContext;
use crate::command::sns::{SnsError, SnsErrorCode};
use crate::engine::SnsCaller;
use crate::wire::{self, WireRequest, WireResponse};

/// Decodes, runs and encodes one SNS request.
pub(super) async fn execute(
    front: &Front,
    req: &WireRequest<'_>,
    request_id: &str,
) -> WireResponse {
    let d = match wire::sns::decode(req, request_id) {
        Ok(d) => d,
        Err(rejected) => return rejected,
    };
    let engine = &front.engine;
    if let Some(reason) = engine.storage_failure() {
        let err = SnsError::new(
            SnsErrorCode::ServiceUnavailable,
            format!("Storage is failing: {reason}"),
        );
        return wire::sns::error_response(&err, request_id);
    }
    let ctx = RequestContext {
        scope: engine.scope_for(d.access_key.as_deref(), d.region.as_deref()),
        base_url: d.base_url,
        trace_header: d.trace_header,
    };
    let caller = SnsCaller { signed: d.signed };
    let result = engine.execute_sns(&ctx, caller, d.command).await;
    wire::sns::encode(d.action, &result, request_id)
}
