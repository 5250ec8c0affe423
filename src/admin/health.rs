//! Admin layer: health checks: `/health` (liveness and readiness, with the storage state) and
//! LocalStack's `/_localstack/health`, which suites and wait scripts poll; `/_localsqs/about`
//! (which server this is); and `/metrics`.

use serde_json::json;

use super::state::{Admin, Answer, Req, ok_json};
use crate::engine::{Regions, StorageState};
use crate::wire::WireResponse;

/// `GET /health`: live while it answers; ready only while storage commits (then 503, with the
/// state and the reason, so orchestrators and wait scripts stop sending it traffic until it
/// recovers). After a failure, readiness returns only once a commit has succeeded again (or
/// the disk has taken a test write of 1 MiB), never on a mere reopen of the file: on a full
/// disk redb can reopen and write a small commit into space the file already has.
pub fn health(admin: &Admin, _req: &Req<'_>) -> Answer {
    let engine = &admin.engine;
    let mode = if engine.durable() {
        "durable"
    } else {
        "memory"
    };
    let (status, writes, reason) = match engine.storage_state() {
        StorageState::Ready => {
            return Ok(ok_json(&json!({
                "status": "ok",
                "live": true,
                "ready": true,
                "mode": mode,
                "queues": engine.queue_count(),
            })));
        }
        StorageState::Recovering(r) => ("storage recovering", "trying", r),
        StorageState::DeletesOnly(r) => ("storage full", "deletes only", r),
        StorageState::ReadOnly(r) => ("storage read-only", "refused", r),
        StorageState::Failed(r) => ("storage failing", "refused", r),
    };
    Ok(WireResponse::json(
        503,
        &json!({
            "status": status,
            "live": true,
            "ready": false,
            "mode": mode,
            "writes": writes,
            "reason": reason,
        }),
    ))
}

/// `GET /_localsqs/about`: which server this is (`"server": "localsqs"`, its version), where its
/// state lives, and its account, region and region mode. The `clock` and `faults` subcommands
/// ask it first, to say which server answered and to refuse a port that holds something else.
pub fn about(admin: &Admin, _req: &Req<'_>) -> Answer {
    let cfg = admin.engine.config();
    let uptime = std::time::SystemTime::now()
        .duration_since(admin.started_at)
        .map_or(0, |d| d.as_secs());
    Ok(ok_json(&json!({
        "server": "localsqs",
        "version": env!("CARGO_PKG_VERSION"),
        "mode": if admin.engine.durable() { "durable" } else { "memory" },
        "data_dir": cfg.data_dir.as_ref().map(|d| d.display().to_string()),
        "account_id": cfg.account_id,
        "region": cfg.region,
        "regions": match cfg.regions {
            Regions::Scoped => "scoped",
            Regions::Any => "any",
        },
        "pid": std::process::id(),
        "uptime_seconds": uptime,
    })))
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
