//! HTTP layer: what every connection task shares: the engine, the front door's options, the
//! hooks it calls around each SQS command, and the admin endpoints.

use std::sync::Arc;

use super::body::BodyBudget;
use super::options::HttpOptions;
use super::slots::Slots;
use crate::admin::state::Admin;
use crate::command::hooks::Hook;
use crate::engine::Engine;

/// The front door's shared state.
pub struct Front {
    /// The engine that runs SQS commands.
    pub engine: Engine,
    /// Listening, limits, origins, signatures, compat.
    pub options: HttpOptions,
    /// Called around every SQS command, in order (fault rules, metrics).
    pub hooks: Vec<Arc<dyn Hook>>,
    /// Every endpoint that is not the SQS API.
    pub admin: Admin,
    /// Connection slots, and the reserve past them.
    pub slots: Slots,
    /// The memory request bodies in flight may hold together.
    pub budget: BodyBudget,
}

impl Front {
    /// The front door for `options`, with its slots and body budget.
    #[must_use]
    pub fn new(
        engine: Engine,
        mut options: HttpOptions,
        hooks: Vec<Arc<dyn Hook>>,
        admin: Admin,
    ) -> Self {
        if let Some(h) = options.queue_host.clone() {
            options.allowed_hosts.add(&h);
        }
        Self {
            slots: Slots::new(options.limits),
            budget: BodyBudget::new(options.max_body_memory),
            engine,
            options,
            hooks,
            admin,
        }
    }
}

impl std::fmt::Debug for Front {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Front")
            .field("options", &self.options)
            .field("hooks", &self.hooks.len())
            .finish_non_exhaustive()
    }
}
