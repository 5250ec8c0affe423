//! Admin layer: what the console's endpoints share: the security headers of every console
//! answer, reading the numbers of a query string, and finding the queue a path and its
//! `?region=&account=` name.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::admin::routes::QUEUES_PATH;
use crate::admin::state::{Admin, AdminError};
use crate::engine::{QueueCounts, Scope};
use crate::wire::{self, WireRequest, WireResponse};

/// The Content-Security-Policy of every console answer: nothing but this origin, no inline
/// script or style, no framing.
pub const CSP: &str = "default-src 'self'; base-uri 'none'; object-src 'none'; \
                       frame-ancestors 'none'; form-action 'self'";

/// Adds the headers every console answer carries.
pub fn headers(resp: &mut WireResponse) {
    resp.headers.extend([
        ("cache-control", "no-cache".to_owned()),
        ("content-security-policy", CSP.to_owned()),
        ("x-content-type-options", "nosniff".to_owned()),
        ("referrer-policy", "no-referrer".to_owned()),
    ]);
}

/// The query string's fields, or the 400 naming what is wrong.
pub(super) fn query_fields(req: &WireRequest<'_>) -> Result<BTreeMap<String, String>, AdminError> {
    wire::form_fields(req.query, &[]).map_err(|e| AdminError::bad_request(e.message))
}

/// A non-negative number field, `default` when absent, at most `max`.
pub(super) fn number(
    fields: &BTreeMap<String, String>,
    name: &str,
    default: usize,
    max: usize,
) -> Result<usize, AdminError> {
    match fields.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => v.parse::<usize>().map(|n| n.min(max)).map_err(|_| {
            AdminError::bad_request(format!("{name} must be a whole number >= 0, not {v:?}"))
        }),
    }
}

/// The segments below `/_localsqs/queues/`.
pub(super) fn segments(path: &str) -> Vec<&str> {
    path.strip_prefix(QUEUES_PATH)
        .unwrap_or_default()
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

/// The account and region a console request names (`?region=&account=`), else the
/// configured ones.
pub(super) fn scope_of(admin: &Admin, req: &WireRequest<'_>) -> Scope {
    let f = crate::wire::form_fields(req.query, &[]).unwrap_or_default();
    let mut scope = Scope::clone(&admin.engine.default_scope());
    if let Some(r) = f.get("region").filter(|r| !r.is_empty()) {
        r.clone_into(&mut scope.region);
    }
    if let Some(a) = f.get("account").filter(|a| !a.is_empty()) {
        a.clone_into(&mut scope.account);
    }
    scope
}

/// The queue URL the console addresses a queue by: the form that names its region.
pub(super) fn url_of(req: &WireRequest<'_>, scope: &Scope, name: &str) -> String {
    format!(
        "{}/queue/{}/{}/{name}",
        req.base_url, scope.region, scope.account
    )
}

/// The counts of queue `name` in `scope`, if it exists.
pub(super) fn counts_of(admin: &Admin, scope: &Scope, name: &str) -> Option<QueueCounts> {
    admin
        .engine
        .queue_counts()
        .into_iter()
        .find(|c| c.name == name && c.scope == *scope)
}

/// 404 for a queue that does not exist.
pub(super) fn no_queue(name: &str) -> AdminError {
    AdminError::not_found(format!("no queue named {name:?}"))
}

/// Messages on one page (or matches in one step of a search) unless the request asks
/// otherwise, and the most it may ask for.
pub(super) const PAGE: usize = 50;
pub(super) const PAGE_MAX: usize = 500;

/// The queue's counts as a page shows them.
pub(super) fn counts_json(c: &QueueCounts) -> Value {
    json!({ "visible": c.visible, "in_flight": c.in_flight, "delayed": c.delayed })
}

/// The queue a console request names, its counts and the URL it is addressed by.
pub(super) fn queue_of(
    admin: &Admin,
    req: &WireRequest<'_>,
    name: &str,
) -> Result<(Scope, QueueCounts, String), AdminError> {
    let scope = scope_of(admin, req);
    let counts = counts_of(admin, &scope, name).ok_or_else(|| no_queue(name))?;
    let url = url_of(req, &scope, name);
    Ok((scope, counts, url))
}
