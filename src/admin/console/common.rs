//! Admin layer: what the console's endpoints share: the security headers of every console
//! answer, and reading the numbers of a query string.

use std::collections::BTreeMap;

use crate::admin::state::AdminError;
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
