//! Admin layer: health checks: `/health` (liveness and readiness, with the storage state) and
//! LocalStack's `/_localstack/health`, which suites and wait scripts poll.

use serde_json::json;

use super::state::{Admin, Answer, Req, ok_json};
use crate::wire::WireResponse;

/// `GET /health`: live while it answers; ready unless storage is failing (then 503, with the
/// reason, so orchestrators and wait scripts stop sending it traffic until it recovers).
pub fn health(admin: &Admin, _req: &Req<'_>) -> Answer {
    let engine = &admin.engine;
    let mode = if engine.durable() {
        "durable"
    } else {
        "memory"
    };
    Ok(match engine.storage_failure() {
        None => ok_json(&json!({
            "status": "ok",
            "live": true,
            "ready": true,
            "mode": mode,
            "queues": engine.queue_counts().len(),
        })),
        Some(reason) => WireResponse::json(
            503,
            &json!({
                "status": "storage failing",
                "live": true,
                "ready": false,
                "mode": mode,
                "reason": reason,
            }),
        ),
    })
}

/// `GET|HEAD /_localstack/health`: the shape LocalStack answers; suites and wait scripts check
/// `services.sqs`.
pub fn localstack_health(_admin: &Admin, _req: &Req<'_>) -> Answer {
    Ok(ok_json(&json!({
        "services": { "sqs": "running" },
        "edition": "community",
        "version": concat!("localsqs-", env!("CARGO_PKG_VERSION")),
    })))
}

/// `GET /metrics`: the Prometheus text exposition.
pub fn metrics(admin: &Admin, _req: &Req<'_>) -> Answer {
    Ok(WireResponse::new(
        200,
        "text/plain; version=0.0.4; charset=utf-8",
        admin.metrics.render(),
    ))
}
