//! Admin layer: the console's view of one queue: `GET /_localsqs/queues/<name>` (its counts),
//! `GET /_localsqs/queues/<name>/messages` (a page of its messages, in queue order, with their
//! state), built from `Engine::inspect`, which changes no visibility and no receive count; and
//! `DELETE /_localsqs/queues/<name>/messages/<id>`, which deletes one message by id.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::common::{number, query_fields};
use crate::admin::routes::QUEUES_PATH;
use crate::admin::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::command::Message;
use crate::engine::Scope;
use crate::engine::{PeekState, QueueCounts};
use crate::wire::WireRequest;

/// Messages on one page unless the request asks otherwise, and the most it may ask for.
const PAGE: usize = 50;
const PAGE_MAX: usize = 500;
/// Bodies longer than this many bytes are cut on a page; `?id=` answers the whole body.
const BODY_LIMIT: usize = 16 * 1024;

/// Where a message is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Visible,
    InFlight,
    Delayed,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Visible => "visible",
            State::InFlight => "in_flight",
            State::Delayed => "delayed",
        }
    }
}

/// Which messages a page shows: one state, or all (`None`).
fn state_filter(v: Option<&str>) -> Result<Option<State>, AdminError> {
    match v.unwrap_or("all") {
        "" | "all" => Ok(None),
        "visible" => Ok(Some(State::Visible)),
        "in_flight" => Ok(Some(State::InFlight)),
        "delayed" => Ok(Some(State::Delayed)),
        other => Err(AdminError::bad_request(format!(
            "state must be all, visible, in_flight or delayed, not {other:?}"
        ))),
    }
}

/// The segments below `/_localsqs/queues/`.
fn segments(path: &str) -> Vec<&str> {
    path.strip_prefix(QUEUES_PATH)
        .unwrap_or_default()
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

/// The account and region a console request names (`?region=&account=`), else the
/// configured ones.
fn scope_of(admin: &Admin, req: &WireRequest<'_>) -> Scope {
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
fn url_of(req: &WireRequest<'_>, scope: &Scope, name: &str) -> String {
    format!(
        "{}/queue/{}/{}/{name}",
        req.base_url, scope.region, scope.account
    )
}

fn counts_of(admin: &Admin, scope: &Scope, name: &str) -> Option<QueueCounts> {
    admin
        .engine
        .queue_counts()
        .into_iter()
        .find(|c| c.name == name && c.scope == *scope)
}

fn no_queue(name: &str) -> AdminError {
    AdminError::not_found(format!("no queue named {name:?}"))
}

/// `GET /_localsqs/queues/<name>[/messages]`.
pub async fn messages(admin: &Admin, r: &Req<'_>) -> Answer {
    let req = r.wire;
    match segments(req.path)[..] {
        [name] => {
            let c = counts_of(admin, &scope_of(admin, req), name).ok_or_else(|| no_queue(name))?;
            Ok(ok_json(&json!({
                "name": c.name,
                "visible": c.visible,
                "in_flight": c.in_flight,
                "delayed": c.delayed,
                "now_ms": admin.clock.state().now_ms,
            })))
        }
        [name, "messages"] => page(admin, req, name).await.map(|v| ok_json(&v)),
        _ => Err(AdminError::not_found("no such console path")),
    }
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
    state: Option<State>,
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

async fn page(admin: &Admin, req: &WireRequest<'_>, name: &str) -> Result<Value, AdminError> {
    let q = page_query(req)?;
    let scope = scope_of(admin, req);
    let counts = counts_of(admin, &scope, name).ok_or_else(|| no_queue(name))?;
    let url = url_of(req, &scope, name);
    let now = admin.clock.state().now_ms;
    let state = q.state.map(|s| match s {
        State::Visible => PeekState::Visible,
        State::InFlight => PeekState::InFlight,
        State::Delayed => PeekState::Delayed,
    });
    let (total, found) = admin
        .engine
        .inspect(&scope, &url, state, q.id.as_deref(), q.offset, q.limit)
        .map_err(|e| AdminError::not_found(e.message))?;
    let messages: Vec<Value> = found
        .iter()
        .map(|i| {
            let st = match i.state {
                PeekState::Visible => State::Visible,
                PeekState::InFlight => State::InFlight,
                PeekState::Delayed => State::Delayed,
            };
            let left = i
                .visible_at_ms
                .and_then(|at| at.checked_sub(now))
                .filter(|l| *l > 0);
            render(&i.message, st, left, q.body_limit)
        })
        .collect();
    Ok(json!({
        "queue": name,
        "state": q.state.map_or("all", State::name),
        "total": total,
        "offset": q.offset,
        "limit": q.limit,
        "counts": { "visible": counts.visible, "in_flight": counts.in_flight, "delayed": counts.delayed },
        "now_ms": now,
        "time_left_exact": true,
        "messages": messages,
    }))
}

fn attribute<'a>(m: &'a Message, name: &str) -> Option<&'a str> {
    m.attributes
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn attribute_ms(m: &Message, name: &str) -> Option<u64> {
    attribute(m, name).and_then(|v| v.parse().ok())
}

/// The longest prefix of `s` of at most `limit` bytes that ends on a character boundary.
fn cut(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s;
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn render(m: &Message, state: State, time_left_ms: Option<u64>, body_limit: usize) -> Value {
    let body = cut(&m.body, body_limit);
    let system: Map<String, Value> = m
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let user: BTreeMap<&str, Value> = m
        .message_attributes
        .iter()
        .map(|(k, v)| {
            let mut a = json!({ "data_type": v.data_type });
            if let Some(sv) = &v.string_value {
                a["string_value"] = json!(sv);
            }
            if let Some(bv) = &v.binary_value {
                a["binary_value"] = json!(STANDARD.encode(bv));
            }
            (k.as_str(), a)
        })
        .collect();
    json!({
        "id": m.message_id,
        "state": state.name(),
        "time_left_ms": time_left_ms,
        "body": body,
        "body_bytes": m.body.len(),
        "body_truncated": body.len() < m.body.len(),
        "md5_of_body": m.md5_of_body,
        "sent_ms": attribute_ms(m, "SentTimestamp"),
        "receive_count": attribute_ms(m, "ApproximateReceiveCount").unwrap_or_default(),
        "first_receive_ms": attribute_ms(m, "ApproximateFirstReceiveTimestamp"),
        "group_id": attribute(m, "MessageGroupId"),
        "dedup_id": attribute(m, "MessageDeduplicationId"),
        "sequence_number": attribute(m, "SequenceNumber"),
        "attributes": system,
        "message_attributes": user,
    })
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

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
