//! Admin layer: push targets over HTTP (`/_localsqs/push`): list (with their last
//! invocations), add, remove one, remove all.

use serde_json::json;

use super::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::command::{Command, GetQueueUrl, RequestContext};
use crate::tools::push::PushTarget;

/// `GET /_localsqs/push`: targets with their counters and last invocations.
pub fn list(admin: &Admin, _req: &Req<'_>) -> Answer {
    Ok(ok_json(&json!({ "targets": admin.push.list() })))
}

/// `POST /_localsqs/push`: adds a target reading an existing queue, answers its id.
pub async fn add(admin: &Admin, req: &Req<'_>) -> Answer {
    let target: PushTarget = serde_json::from_slice(req.wire.body)
        .map_err(|e| AdminError::bad_request(format!("not a push target: {e}")))?;
    if !target.command.is_empty() {
        // A target that runs a program would let any client reach the port run any program
        // as the server's user: only whoever starts the server may declare one.
        return Err(AdminError {
            status: 403,
            message: "A push target that runs a program can only be declared by whoever starts \
                      the server: in the --config file ([[queue.push]] command = [...]) or \
                      through the Rust API (Server::push). Over HTTP, give a url target."
                .to_owned(),
        });
    }
    target.validate().map_err(AdminError::bad_request)?;
    let lookup = Command::GetQueueUrl(GetQueueUrl {
        queue_name: target.queue.clone(),
        ..GetQueueUrl::default()
    });
    if admin
        .engine
        .execute(
            &RequestContext::new(String::new(), admin.engine.default_scope()),
            lookup,
        )
        .await
        .is_err()
    {
        return Err(AdminError::bad_request(format!(
            "queue {} does not exist",
            target.queue
        )));
    }
    let id = admin.push.add(target).map_err(AdminError::bad_request)?;
    Ok(ok_json(&json!({ "id": id })))
}

/// `DELETE /_localsqs/push`: removes every target.
pub fn clear(admin: &Admin, _req: &Req<'_>) -> Answer {
    admin.push.clear();
    Ok(ok_json(&json!({ "removed": "all" })))
}

/// `DELETE /_localsqs/push/<id>`: removes one target.
pub fn remove(admin: &Admin, req: &Req<'_>) -> Answer {
    let id = req.wire.path.rsplit('/').next().unwrap_or_default();
    if admin.push.remove(id) {
        Ok(ok_json(&json!({ "removed": id })))
    } else {
        Err(AdminError::not_found(format!("no push target {id}")))
    }
}
