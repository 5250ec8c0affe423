//! Admin layer: the console's view of one queue: `GET /_localsqs/queues/<name>` (its counts,
//! URL and ARN), `GET /_localsqs/queues/<name>/messages` (a page of its messages, in queue
//! order, with their state, built from `Engine::inspect`, which changes no visibility and no
//! receive count; with `body=` or `attribute=`, a search, `search.rs`); and
//! `DELETE /_localsqs/queues/<name>/messages/<id>`, which deletes one message by id.

use serde_json::{Value, json};

use super::common::{
    PAGE, PAGE_MAX, counts_json, counts_of, no_queue, number, query_fields, queue_of, scope_of,
    segments, url_of,
};
use super::render::{BODY_LIMIT, inspected, state_filter, state_name};
use super::search;
use crate::admin::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::command::{Command, GetQueueUrl, Reply, RequestContext};
use crate::engine::PeekState;
use crate::wire::WireRequest;

/// `GET /_localsqs/queues/<name>[/messages]`.
pub async fn messages(admin: &Admin, r: &Req<'_>) -> Answer {
    let req = r.wire;
    match segments(req.path)[..] {
        [name] => summary(admin, req, name).await.map(|v| ok_json(&v)),
        [name, "messages"] if search::wanted(req)? => {
            search::search(admin, req, name).map(|v| ok_json(&v))
        }
        [name, "messages"] => page(admin, req, name).map(|v| ok_json(&v)),
        _ => Err(AdminError::not_found("no such console path")),
    }
}

/// A queue's counts, and the URL and ARN clients address it by: the URL GetQueueUrl answers
/// a client of this host signing for the queue's account and region.
async fn summary(admin: &Admin, req: &WireRequest<'_>, name: &str) -> Result<Value, AdminError> {
    let scope = scope_of(admin, req);
    let c = counts_of(admin, &scope, name).ok_or_else(|| no_queue(name))?;
    let ctx = RequestContext::new(&req.base_url, std::sync::Arc::new(scope.clone()));
    let ask = Command::GetQueueUrl(GetQueueUrl {
        queue_name: name.to_owned(),
        queue_owner_aws_account_id: None,
    });
    let url = match admin.engine.execute(&ctx, ask).await {
        Ok(Reply::GetQueueUrl(r)) => r.queue_url,
        _ => return Err(no_queue(name)),
    };
    Ok(json!({
        "name": c.name,
        "url": url,
        "arn": scope.arn(name),
        "account": scope.account,
        "region": scope.region,
        "fifo": name.ends_with(".fifo"),
        "visible": c.visible,
        "in_flight": c.in_flight,
        "delayed": c.delayed,
        "now_ms": admin.clock.state().now_ms,
    }))
}

/// `DELETE /_localsqs/queues/<name>/messages/<message id>`: deletes one message by id,
/// whatever its state, without receiving it first (which would count a receive).
pub async fn delete(admin: &Admin, r: &Req<'_>) -> Answer {
    let req = r.wire;
    let [name, "messages", id] = segments(req.path)[..] else {
        return Err(AdminError::not_found("no such console path"));
    };
    let scope = scope_of(admin, req);
    if counts_of(admin, &scope, name).is_none() {
        return Err(no_queue(name));
    }
    let url = url_of(req, &scope, name);
    match admin.engine.delete_by_id(&scope, &url, id).await {
        Ok(true) => Ok(ok_json(&json!({ "deleted": id }))),
        Ok(false) => Err(AdminError::not_found(format!(
            "no message {id:?} in {name}"
        ))),
        Err(e) => Err(AdminError::internal(e.message)),
    }
}

/// What a page of messages is asked for.
struct PageQuery {
    state: Option<PeekState>,
    offset: usize,
    limit: usize,
    id: Option<String>,
    body_limit: usize,
}

fn page_query(req: &WireRequest<'_>) -> Result<PageQuery, AdminError> {
    let f = query_fields(req)?;
    let id = f.get("id").filter(|v| !v.is_empty()).cloned();
    Ok(PageQuery {
        state: state_filter(f.get("state").map(String::as_str))?,
        offset: number(&f, "offset", 0, usize::MAX)?,
        limit: number(&f, "limit", PAGE, PAGE_MAX)?.max(1),
        body_limit: if id.is_some() {
            usize::MAX
        } else {
            number(&f, "body_limit", BODY_LIMIT, usize::MAX)?
        },
        id,
    })
}

fn page(admin: &Admin, req: &WireRequest<'_>, name: &str) -> Result<Value, AdminError> {
    let q = page_query(req)?;
    let (scope, counts, url) = queue_of(admin, req, name)?;
    let now = admin.clock.state().now_ms;
    let (total, found) = admin
        .engine
        .inspect(&scope, &url, q.state, q.id.as_deref(), q.offset, q.limit)
        .map_err(|e| AdminError::not_found(e.message))?;
    let messages: Vec<Value> = found
        .iter()
        .map(|i| inspected(i, now, q.body_limit))
        .collect();
    Ok(json!({
        "queue": name,
        "state": q.state.map_or("all", state_name),
        "total": total,
        "offset": q.offset,
        "limit": q.limit,
        "counts": counts_json(&counts),
        "now_ms": now,
        "time_left_exact": true,
        "messages": messages,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::console::test_support::{BASE, admin, body, call, create, ctx, get, send};
    use crate::admin::routes::Route;
    use crate::command::{
        Command, MessageAttributeValue, MessageToSend, ReceiveMessage, SendMessage,
    };

    const URL: &str = "/_localsqs/queues/q/messages";

    async fn receive(s: &Admin, queue: &str, n: i64) {
        let c = ReceiveMessage {
            queue_url: queue.into(),
            max_number_of_messages: Some(n),
            ..ReceiveMessage::default()
        };
        s.engine
            .execute(&ctx(), Command::ReceiveMessage(c))
            .await
            .expect("receives");
    }

    async fn list(s: &Admin, query: &str) -> Value {
        let resp = call(s, Route::ConsoleMessages, &get(URL, Some(query))).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        body(&resp)
    }

    fn bodies(v: &Value) -> Vec<&str> {
        v["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["body"].as_str().expect("body"))
            .collect()
    }

    #[tokio::test]
    async fn messages_page_in_queue_order_without_receiving_them() {
        let s = admin();
        create(&s, "q", &[]).await;
        let sent: Vec<String> = (0..120).map(|i| format!("m{i:03}")).collect();
        send(
            &s,
            "q",
            &sent.iter().map(String::as_str).collect::<Vec<_>>(),
        )
        .await;
        let first = list(&s, "limit=50").await;
        assert_eq!(first["total"], 120);
        assert_eq!(bodies(&first).len(), 50);
        assert_eq!(bodies(&first)[0], "m000");
        let last = list(&s, "offset=100&limit=50").await;
        assert_eq!(
            bodies(&last),
            sent[100..].iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert_eq!(
            last["messages"][0]["receive_count"], 0,
            "a peek receives nothing"
        );
        assert_eq!(list(&s, "limit=9999").await["limit"], PAGE_MAX);
        assert_eq!(list(&s, "offset=500").await["messages"], json!([]));
        s.engine.close().await;
    }

    #[tokio::test]
    async fn states_are_told_apart_and_filtered() {
        let s = admin();
        create(&s, "q", &[("VisibilityTimeout", "30")]).await;
        send(&s, "q", &["a", "b", "c"]).await;
        receive(&s, "q", 1).await;
        let m = SendMessage {
            queue_url: "q".into(),
            message: MessageToSend {
                message_body: "later".into(),
                delay_seconds: Some(60),
                message_attributes: [(
                    "kind".to_owned(),
                    MessageAttributeValue::string("String", "test"),
                )]
                .into(),
                ..MessageToSend::default()
            },
        };
        s.engine
            .execute(&ctx(), Command::SendMessage(m))
            .await
            .expect("sends");
        let all = list(&s, "").await;
        let states: Vec<&str> = all["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["state"].as_str().expect("state"))
            .collect();
        assert_eq!(states, ["in_flight", "visible", "visible", "delayed"]);
        let inflight = &all["messages"][0];
        assert_eq!(inflight["receive_count"], 1);
        let left = inflight["time_left_ms"].as_u64().expect("known");
        assert!(left > 25_000 && left <= 30_000, "{left}");
        assert_eq!(
            all["messages"][3]["message_attributes"]["kind"]["string_value"],
            "test"
        );
        assert_eq!(
            all["counts"],
            json!({ "visible": 2, "in_flight": 1, "delayed": 1 })
        );
        assert_eq!(bodies(&list(&s, "state=visible").await), ["b", "c"]);
        assert_eq!(bodies(&list(&s, "state=in_flight").await), ["a"]);
        assert_eq!(bodies(&list(&s, "state=delayed").await), ["later"]);
        let bad = call(&s, Route::ConsoleMessages, &get(URL, Some("state=gone"))).await;
        assert_eq!(bad.status, 400);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn long_bodies_are_cut_on_a_page_and_whole_by_id() {
        let s = admin();
        create(&s, "q", &[]).await;
        let long = "é".repeat(BODY_LIMIT);
        send(&s, "q", &[long.as_str()]).await;
        let page = list(&s, "").await;
        let m = &page["messages"][0];
        assert_eq!(m["body_truncated"], true);
        assert_eq!(m["body_bytes"], long.len());
        let id = m["id"].as_str().expect("id");
        let one = list(&s, &format!("id={id}")).await;
        assert_eq!(one["total"], 1);
        assert_eq!(one["messages"][0]["body"], long.as_str());
        assert_eq!(one["messages"][0]["body_truncated"], false);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn the_queue_summary_missing_queues_and_delete_by_id() {
        let s = admin();
        create(&s, "q", &[]).await;
        send(&s, "q", &["x"]).await;
        let one = body(
            &call(
                &s,
                Route::ConsoleMessages,
                &get("/_localsqs/queues/q", None),
            )
            .await,
        );
        assert_eq!(one["visible"], 1);
        // The URL GetQueueUrl answers, and the ARN.
        assert_eq!(one["url"], format!("{BASE}/000000000000/q"));
        assert_eq!(one["arn"], "arn:aws:sqs:us-east-1:000000000000:q");
        assert_eq!(one["fifo"], false);
        let missing = call(
            &s,
            Route::ConsoleMessages,
            &get("/_localsqs/queues/nope/messages", None),
        )
        .await;
        assert_eq!(missing.status, 404);
        let odd = call(
            &s,
            Route::ConsoleMessages,
            &get("/_localsqs/queues/q/other", None),
        )
        .await;
        assert_eq!(odd.status, 404);
        let page = body(&call(&s, Route::ConsoleMessages, &get(URL, None)).await);
        let id = page["messages"][0]["id"].as_str().expect("id").to_owned();
        let path = format!("{URL}/{id}");
        let mut del = get(&path, None);
        del.method = "DELETE";
        let resp = call(&s, Route::ConsoleDeleteMessage, &del).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        let again = call(&s, Route::ConsoleDeleteMessage, &del).await;
        assert_eq!(again.status, 404, "already gone");
        let after = body(
            &call(
                &s,
                Route::ConsoleMessages,
                &get("/_localsqs/queues/q", None),
            )
            .await,
        );
        assert_eq!(after["visible"], 0);
        del.path = "/_localsqs/queues/nope/messages/x";
        assert_eq!(
            call(&s, Route::ConsoleDeleteMessage, &del).await.status,
            404
        );
        assert!(BASE.starts_with("http://"));
        s.engine.close().await;
    }
}
