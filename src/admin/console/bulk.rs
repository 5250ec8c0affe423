//! Admin layer: the console's actions on selected messages, by id and without receiving them:
//!
//! - `POST /_localsqs/queues/<name>/messages/delete` with `{"ids": [...]}` deletes them;
//! - `POST /_localsqs/queues/<name>/messages/move` with `{"ids": [...], "to": "<queue name or
//!   URL>", "group_id": "…"}` moves them to another queue: each is sent to the target (a new
//!   message id, its body and attributes kept) and deleted from the source in one commit
//!   (`Engine::move_by_ids`). A FIFO target needs a group id for every message: one without
//!   its own gets `group_id`; without that, nothing moves and the answer says why.
//!
//! Both take at most 1,000 ids and answer `{"done": [...], "missing": [...]}` (for a move,
//! `done` pairs each id with the message's id in the target).

use serde::Deserialize;
use serde_json::json;

use super::common::{queue_of, segments};
use crate::admin::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::engine::{BULK_MAX_IDS, BulkOutcome, MoveTarget};
use crate::error::ErrorCode;

/// The body of a bulk request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bulk {
    /// Message ids.
    ids: Vec<String>,
    /// Move only: the target queue, by name (in the source's account and region) or URL.
    #[serde(default)]
    to: Option<String>,
    /// Move only: the group id of messages without one, for a FIFO target.
    #[serde(default)]
    group_id: Option<String>,
}

/// `POST /_localsqs/queues/<name>/messages/{delete,move}`.
pub async fn bulk(admin: &Admin, r: &Req<'_>) -> Answer {
    let req = r.wire;
    let (name, what) = match segments(req.path)[..] {
        [name, "messages", what @ ("delete" | "move")] => (name, what),
        _ => return Err(AdminError::not_found("no such console path")),
    };
    let b: Bulk = serde_json::from_slice(req.body).map_err(|e| {
        AdminError::bad_request(format!(
            "the body must be {{\"ids\": [message ids]{}}}: {e}",
            if what == "move" {
                ", \"to\": queue, \"group_id\": optional"
            } else {
                ""
            }
        ))
    })?;
    if b.ids.len() > BULK_MAX_IDS {
        return Err(AdminError::bad_request(format!(
            "at most {BULK_MAX_IDS} message ids per request, not {}",
            b.ids.len()
        )));
    }
    let (scope, _, url) = queue_of(admin, req, name)?;
    let outcome = if what == "delete" {
        admin.engine.delete_by_ids(&scope, &url, &b.ids).await
    } else {
        let to =
            b.to.as_deref()
                .filter(|t| !t.is_empty())
                .ok_or_else(|| AdminError::bad_request("a move needs \"to\": the target queue"))?;
        let target = MoveTarget {
            queue_url: to,
            group_id: b.group_id.as_deref(),
        };
        admin.engine.move_by_ids(&scope, &url, &b.ids, target).await
    };
    match outcome {
        Ok(o) => Ok(ok_json(&answer(&o, what))),
        Err(e) if e.code == ErrorCode::QueueDoesNotExist => Err(AdminError::not_found(format!(
            "no queue {:?} to move to",
            b.to.unwrap_or_default()
        ))),
        Err(e) if e.code.spec().status < 500 => Err(AdminError::bad_request(e.message)),
        Err(e) => Err(AdminError::internal(e.message)),
    }
}

fn answer(o: &BulkOutcome, what: &str) -> serde_json::Value {
    if what == "delete" {
        let done: Vec<&str> = o.done.iter().map(|(id, _)| id.as_str()).collect();
        json!({ "done": done, "missing": o.missing })
    } else {
        let done: Vec<_> = o
            .done
            .iter()
            .map(|(from, to)| json!({ "id": from, "new_id": to }))
            .collect();
        json!({ "done": done, "missing": o.missing })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::admin::console::test_support::{admin, body, call, create, ctx, get, send};
    use crate::admin::routes::Route;
    use crate::admin::state::Admin;
    use crate::command::{Command, MessageAttributeValue, MessageToSend, SendMessage};
    use crate::wire::WireResponse;

    async fn post(s: &Admin, path: &str, b: &Value) -> WireResponse {
        let text = b.to_string();
        let mut req = get(path, None);
        req.method = "POST";
        req.body = text.as_bytes();
        call(s, Route::ConsoleBulk, &req).await
    }

    async fn listed(s: &Admin, queue: &str) -> Vec<Value> {
        let path = format!("/_localsqs/queues/{queue}/messages");
        let v = body(&call(s, Route::ConsoleMessages, &get(&path, None)).await);
        v["messages"].as_array().cloned().unwrap_or_default()
    }

    fn ids(ms: &[Value]) -> Vec<String> {
        ms.iter()
            .map(|m| m["id"].as_str().expect("id").to_owned())
            .collect()
    }

    #[tokio::test]
    async fn selected_messages_are_deleted_and_the_rest_stay() {
        let s = admin();
        create(&s, "q", &[]).await;
        send(&s, "q", &["a", "b", "c", "d"]).await;
        let all = ids(&listed(&s, "q").await);
        let chosen = json!({ "ids": [all[0], all[2], "not-an-id", all[0]] });
        let resp = post(&s, "/_localsqs/queues/q/messages/delete", &chosen).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        let v = body(&resp);
        assert_eq!(v["done"], json!([all[0], all[2]]));
        assert_eq!(
            v["missing"],
            json!(["not-an-id", all[0]]),
            "a repeat is missing"
        );
        let left: Vec<String> = listed(&s, "q")
            .await
            .iter()
            .map(|m| m["body"].as_str().expect("body").to_owned())
            .collect();
        assert_eq!(left, ["b", "d"]);
        let again = post(
            &s,
            "/_localsqs/queues/q/messages/delete",
            &json!({ "ids": [all[0]] }),
        )
        .await;
        assert_eq!(body(&again)["missing"], json!([all[0]]));
        let bad = post(
            &s,
            "/_localsqs/queues/q/messages/delete",
            &json!({ "id": "x" }),
        )
        .await;
        assert_eq!(bad.status, 400);
        let many: Vec<String> = (0..1001).map(|i| i.to_string()).collect();
        let too_many = post(
            &s,
            "/_localsqs/queues/q/messages/delete",
            &json!({ "ids": many }),
        )
        .await;
        assert_eq!(too_many.status, 400);
        let nowhere = post(
            &s,
            "/_localsqs/queues/nope/messages/delete",
            &json!({ "ids": [] }),
        )
        .await;
        assert_eq!(nowhere.status, 404);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn a_move_sends_to_the_target_and_deletes_from_the_source() {
        let s = admin();
        create(&s, "src", &[]).await;
        create(&s, "dst", &[]).await;
        create(&s, "jobs.fifo", &[("FifoQueue", "true")]).await;
        let m = SendMessage {
            queue_url: "src".into(),
            message: MessageToSend {
                message_body: "with attributes".into(),
                message_attributes: [(
                    "kind".to_owned(),
                    MessageAttributeValue::string("String", "order"),
                )]
                .into(),
                ..MessageToSend::default()
            },
        };
        s.engine
            .execute(&ctx(), Command::SendMessage(m))
            .await
            .expect("sends");
        send(&s, "src", &["plain", "stays"]).await;
        let all = ids(&listed(&s, "src").await);
        let moved = json!({ "ids": [all[0], all[1]], "to": "dst" });
        let resp = post(&s, "/_localsqs/queues/src/messages/move", &moved).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        let v = body(&resp);
        assert_eq!(v["done"][0]["id"], all[0].as_str());
        assert_ne!(v["done"][0]["new_id"], all[0].as_str(), "a new message id");
        let src = listed(&s, "src").await;
        assert_eq!(ids(&src), [all[2].clone()]);
        let dst = listed(&s, "dst").await;
        assert_eq!(dst.len(), 2);
        assert_eq!(dst[0]["body"], "with attributes");
        assert_eq!(
            dst[0]["message_attributes"]["kind"]["string_value"],
            "order"
        );
        assert_eq!(dst[0]["receive_count"], 0);
        assert_eq!(dst[0]["state"], "visible");

        // To a FIFO queue: a message without a group needs one from the request.
        let to_fifo = json!({ "ids": [all[2]], "to": "jobs.fifo" });
        let refused = post(&s, "/_localsqs/queues/src/messages/move", &to_fifo).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(refused.body.contains("MessageGroupId"), "{}", refused.body);
        assert_eq!(listed(&s, "src").await.len(), 1, "nothing moved");
        let with_group = json!({ "ids": [all[2]], "to": "jobs.fifo", "group_id": "moved" });
        let resp = post(&s, "/_localsqs/queues/src/messages/move", &with_group).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        let fifo = listed(&s, "jobs.fifo").await;
        assert_eq!(fifo[0]["group_id"], "moved");
        assert!(fifo[0]["sequence_number"].is_string());
        assert!(listed(&s, "src").await.is_empty());

        let same = post(
            &s,
            "/_localsqs/queues/dst/messages/move",
            &json!({ "ids": [], "to": "dst" }),
        )
        .await;
        assert_eq!(same.status, 400);
        let missing = post(
            &s,
            "/_localsqs/queues/dst/messages/move",
            &json!({ "ids": [], "to": "gone" }),
        )
        .await;
        assert_eq!(missing.status, 404);
        let no_target = post(
            &s,
            "/_localsqs/queues/dst/messages/move",
            &json!({ "ids": [] }),
        )
        .await;
        assert_eq!(no_target.status, 400);
        s.engine.close().await;
    }
}
