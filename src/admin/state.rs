//! Admin layer: what every admin endpoint is handed: the [`Admin`] state (the engine and the
//! tools), the request ([`Req`]), and the one result shape ([`Answer`]) with its one error shape
//! ([`AdminError`], rendered as `{"error": "…"}`).

use std::sync::Arc;

use serde_json::json;

use crate::engine::Engine;
use crate::tools::clock::ControlledClock;
use crate::tools::faults::Faults;
use crate::tools::init::InitHooks;
use crate::tools::metrics::Metrics;
use crate::tools::push::PushTargets;
use crate::tools::setup::Setup;
use crate::wire::{WireRequest, WireResponse};

/// The engine and the tools the admin endpoints drive.
pub struct Admin {
    /// The engine.
    pub engine: Engine,
    /// `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Fault rules (`/_localsqs/faults`).
    pub faults: Arc<Faults>,
    /// The clock users can move (`/_localsqs/clock`).
    pub clock: Arc<ControlledClock>,
    /// Push targets (`/_localsqs/push`).
    pub push: Arc<PushTargets>,
    /// What the server started with (config file and builder), restored by a reset.
    pub startup: Setup,
    /// The init hooks and where they stand (`/_localstack/init`).
    pub init: Arc<InitHooks>,
    /// When the server started (uptimes in `/_localsqs/about`, `/_localstack/info`).
    pub started_at: std::time::SystemTime,
    /// This run's id (LocalStack's `session_id` in `/_localstack/info`).
    pub session_id: String,
    /// LocalStack's conventions (`--compat localstack`): its developer endpoint answers as
    /// LocalStack's does.
    pub localstack: bool,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin").finish_non_exhaustive()
    }
}

/// An admin request: the HTTP request's parts, and how to answer.
#[derive(Debug, Clone, Copy)]
pub struct Req<'a> {
    /// Method, path, query, body and the base URL of queue URLs.
    pub wire: &'a WireRequest<'a>,
    /// Whether the client's `Accept` asks for JSON.
    pub accept_json: bool,
    /// Whether the caller proved who it is, or the server requires nothing: only the console's
    /// page is served to others, and without data.
    pub authorized: bool,
    /// The request id the answer carries.
    pub request_id: &'a str,
}

/// Every admin handler's result.
pub type Answer = Result<WireResponse, AdminError>;

/// Why an admin request failed: a status and a message, answered as `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminError {
    /// HTTP status.
    pub status: u16,
    /// What went wrong, for a person.
    pub message: String,
}

impl AdminError {
    /// 400: the request is wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
        }
    }

    /// 404: what it names does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: 404,
            message: message.into(),
        }
    }

    /// 500: the server could not do it.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: 500,
            message: message.into(),
        }
    }

    /// The answer: `{"error": "<message>"}` with the status.
    #[must_use]
    pub fn into_response(self) -> WireResponse {
        WireResponse::json(self.status, &json!({ "error": self.message }))
    }
}

/// A 200 `application/json` answer.
#[must_use]
pub fn ok_json(body: &serde_json::Value) -> WireResponse {
    WireResponse::json(200, body)
}
