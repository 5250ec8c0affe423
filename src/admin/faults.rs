//! Admin layer: the fault-injection rules over HTTP (`/_localsqs/faults`): list, add, remove
//! one, remove all.

use serde_json::json;

use super::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::tools::faults::FaultRule;

/// `GET /_localsqs/faults`: every rule with its id.
pub fn list(admin: &Admin, _req: &Req<'_>) -> Answer {
    let rules: Vec<serde_json::Value> = admin
        .faults
        .list()
        .into_iter()
        .map(|(id, rule)| {
            let mut v = serde_json::to_value(rule).unwrap_or_default();
            v["id"] = json!(id);
            v
        })
        .collect();
    Ok(ok_json(&json!({ "faults": rules })))
}

/// `POST /_localsqs/faults`: adds a rule, answers its id.
pub fn add(admin: &Admin, req: &Req<'_>) -> Answer {
    let rule: FaultRule = serde_json::from_slice(req.wire.body)
        .map_err(|e| AdminError::bad_request(format!("not a fault rule: {e}")))?;
    let id = admin.faults.add(rule).map_err(AdminError::bad_request)?;
    Ok(ok_json(&json!({ "id": id })))
}

/// `DELETE /_localsqs/faults`: removes every rule.
pub fn clear(admin: &Admin, _req: &Req<'_>) -> Answer {
    admin.faults.clear();
    Ok(ok_json(&json!({ "removed": "all" })))
}

/// `DELETE /_localsqs/faults/<id>`: removes one rule.
pub fn remove(admin: &Admin, req: &Req<'_>) -> Answer {
    let id = req.wire.path.rsplit('/').next().unwrap_or_default();
    if admin.faults.remove(id) {
        Ok(ok_json(&json!({ "removed": id })))
    } else {
        Err(AdminError::not_found(format!("no fault rule {id}")))
    }
}
