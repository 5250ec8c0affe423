//! Server layer: the console's view of one queue: `GET /_localsqs/queues/<name>` (its counts)
//! and `GET /_localsqs/queues/<name>/messages` (a page of its messages, in queue order, with
//! their state), built from `Engine::peek`, which changes no visibility and no receive count;
//! and `DELETE /_localsqs/queues/<name>/messages/<id>`, which waits for an engine method.

use std::collections::{BTreeMap, HashSet};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::{QUEUES_PATH, error, json_response, number};
use crate::command::{Command, GetQueueAttributes, Message, Reply, RequestContext};
use crate::engine::peek::QueueCounts;
use crate::error::SqsResult;
use crate::server::Shared;
use crate::wire::{WireRequest, WireResponse};

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
fn state_filter(v: Option<&str>) -> Result<Option<State>, WireResponse> {
    match v.unwrap_or("all") {
        "" | "all" => Ok(None),
        "visible" => Ok(Some(State::Visible)),
        "in_flight" => Ok(Some(State::InFlight)),
        "delayed" => Ok(Some(State::Delayed)),
        other => Err(error(
            400,
            &format!("state must be all, visible, in_flight or delayed, not {other:?}"),
        )),
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

fn counts_of(shared: &Shared, name: &str) -> Option<QueueCounts> {
    shared
        .engine
        .queue_counts()
        .into_iter()
        .find(|c| c.name == name)
}

fn no_queue(name: &str) -> WireResponse {
    error(404, &format!("no queue named {name:?}"))
}

/// `GET /_localsqs/queues/<name>[/messages]`.
pub(in crate::server) async fn messages_json(shared: &Shared, req: &WireRequest) -> WireResponse {
    match segments(&req.path)[..] {
        [name] => match counts_of(shared, name) {
            None => no_queue(name),
            Some(c) => json_response(
                200,
                &json!({
                    "name": c.name,
                    "visible": c.visible,
                    "in_flight": c.in_flight,
                    "delayed": c.delayed,
                    "now_ms": shared.clock.state().now_ms,
                }),
            ),
        },
        [name, "messages"] => match page(shared, req, name).await {
            Ok(v) => json_response(200, &v),
            Err(resp) => resp,
        },
        _ => error(404, "no such console path"),
    }
}

/// `DELETE /_localsqs/queues/<name>/messages/<message id>`: 501 until the engine can delete a
/// message by id. Receiving it first would count a receive and hide it, which a console that
/// looks without touching must not do.
pub(in crate::server) fn delete_message(shared: &Shared, req: &WireRequest) -> WireResponse {
    match segments(&req.path)[..] {
        [name, "messages", id] => match counts_of(shared, name) {
            None => no_queue(name),
            Some(_) => json_response(
                501,
                &json!({
                    "error": format!(
                        "Deleting message {id} by id is not available yet: the engine has no \
                         method for it (Engine::delete_by_id(queue_url, message_id)). Receive \
                         the message and delete it with its receipt handle, or purge the queue."
                    ),
                    "needs": "Engine::delete_by_id(queue_url, message_id)",
                }),
            ),
        },
        _ => error(404, "no such console path"),
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

fn page_query(req: &WireRequest) -> Result<PageQuery, WireResponse> {
    let f =
        crate::wire::form_fields(req.query.as_deref(), &[]).map_err(|e| error(400, &e.message))?;
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

async fn page(shared: &Shared, req: &WireRequest, name: &str) -> Result<Value, WireResponse> {
    let q = page_query(req)?;
    let counts = counts_of(shared, name).ok_or_else(|| no_queue(name))?;
    let url = format!("{}/{}/{name}", req.base_url, shared.options.account_id);
    let settings = queue_settings(shared, &req.base_url, &url).await;
    let now = shared.clock.state().now_ms;
    let found = classify(shared, &url, q.state, &counts).map_err(|e| error(404, &e.message))?;
    let matching: Vec<(Message, State)> = match &q.id {
        Some(id) => found
            .into_iter()
            .filter(|(m, _)| &m.message_id == id)
            .collect(),
        None => found,
    };
    let messages: Vec<Value> = matching
        .iter()
        .skip(q.offset)
        .take(q.limit)
        .map(|(m, st)| render(m, *st, now, &settings, q.body_limit))
        .collect();
    Ok(json!({
        "queue": name,
        "state": q.state.map_or("all", State::name),
        "total": matching.len(),
        "offset": q.offset,
        "limit": q.limit,
        "counts": { "visible": counts.visible, "in_flight": counts.in_flight, "delayed": counts.delayed },
        "now_ms": now,
        "time_left_exact": false,
        "messages": messages,
    }))
}

/// The queue attributes that estimate time left: VisibilityTimeout and DelaySeconds, seconds.
#[derive(Debug, Clone, Copy, Default)]
struct Settings {
    visibility_timeout_s: u64,
    delay_s: u64,
}

async fn queue_settings(shared: &Shared, base_url: &str, url: &str) -> Settings {
    let ctx = RequestContext {
        base_url: base_url.to_owned(),
        ..RequestContext::default()
    };
    let cmd = Command::GetQueueAttributes(GetQueueAttributes {
        queue_url: url.to_owned(),
        attribute_names: vec!["VisibilityTimeout".into(), "DelaySeconds".into()],
    });
    let mut s = Settings::default();
    if let Ok(Reply::GetQueueAttributes(r)) = shared.engine.execute(&ctx, cmd).await {
        for (k, v) in r.attributes {
            let n = v.parse().unwrap_or_default();
            match k.as_str() {
                "VisibilityTimeout" => s.visibility_timeout_s = n,
                "DelaySeconds" => s.delay_s = n,
                _ => {}
            }
        }
    }
    s
}

fn ids(messages: &[Message]) -> HashSet<&str> {
    messages.iter().map(|m| m.message_id.as_str()).collect()
}

/// The queue's messages in queue order, each with its state, as few peeks as the counts
/// allow. A peek shows visible messages and, on request, in-flight and delayed ones; the
/// state of each message follows from which peeks include it.
fn classify(
    shared: &Shared,
    url: &str,
    want: Option<State>,
    counts: &QueueCounts,
) -> SqsResult<Vec<(Message, State)>> {
    let e = &shared.engine;
    let tag = |ms: Vec<Message>, f: &dyn Fn(&Message) -> Option<State>| {
        ms.into_iter()
            .filter_map(|m| f(&m).map(|s| (m, s)))
            .collect::<Vec<_>>()
    };
    let visible_only = |ms: Vec<Message>| tag(ms, &|_| Some(State::Visible));
    Ok(match want {
        Some(State::Visible) => visible_only(e.peek(url, false, false)?),
        Some(hidden) => {
            let (inflight, delayed) = (hidden == State::InFlight, hidden == State::Delayed);
            let some = e.peek(url, inflight, delayed)?;
            let visible = e.peek(url, false, false)?;
            let seen = ids(&visible);
            tag(some, &|m| {
                (!seen.contains(m.message_id.as_str())).then_some(hidden)
            })
        }
        None if counts.in_flight == 0 && counts.delayed == 0 => {
            visible_only(e.peek(url, false, false)?)
        }
        None if counts.in_flight == 0 || counts.delayed == 0 => {
            let hidden = if counts.in_flight == 0 {
                State::Delayed
            } else {
                State::InFlight
            };
            let all = e.peek(url, hidden == State::InFlight, hidden == State::Delayed)?;
            let visible = e.peek(url, false, false)?;
            let seen = ids(&visible);
            tag(all, &|m| {
                Some(if seen.contains(m.message_id.as_str()) {
                    State::Visible
                } else {
                    hidden
                })
            })
        }
        None => {
            let all = e.peek(url, true, true)?;
            let with_inflight = e.peek(url, true, false)?;
            let with_delayed = e.peek(url, false, true)?;
            let (a, b) = (ids(&with_inflight), ids(&with_delayed));
            tag(all, &|m| {
                let id = m.message_id.as_str();
                Some(match (a.contains(id), b.contains(id)) {
                    (true, true) => State::Visible,
                    (true, false) => State::InFlight,
                    (false, _) => State::Delayed,
                })
            })
        }
    })
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

/// An estimate of how long until the message is visible again, from what a peek shows:
/// in flight after one receive, the first receive plus the queue's visibility timeout; delayed,
/// the send plus the queue's delay. `None` when that estimate cannot hold (a later receive, a
/// changed visibility or a message's own delay moved the time).
fn time_left(m: &Message, state: State, now: u64, s: &Settings) -> Option<u64> {
    let until = match state {
        State::Visible => return None,
        State::InFlight if attribute(m, "ApproximateReceiveCount") == Some("1") => {
            attribute_ms(m, "ApproximateFirstReceiveTimestamp")? + s.visibility_timeout_s * 1000
        }
        State::InFlight => return None,
        State::Delayed => attribute_ms(m, "SentTimestamp")? + s.delay_s * 1000,
    };
    until.checked_sub(now).filter(|left| *left > 0)
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

fn render(m: &Message, state: State, now: u64, s: &Settings, body_limit: usize) -> Value {
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
        "time_left_ms": time_left(m, state, now, s),
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
    use super::super::tests::{BASE, body, create, ctx, get, send, shared};
    use super::*;
    use crate::command::{MessageAttributeValue, ReceiveMessage, SendMessage};

    const URL: &str = "/_localsqs/queues/q/messages";

    async fn receive(s: &Shared, queue: &str, n: i64) {
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

    async fn list(s: &Shared, query: &str) -> Value {
        let resp = messages_json(s, &get(URL, Some(query))).await;
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
        let s = shared();
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
        let s = shared();
        create(&s, "q", &[("VisibilityTimeout", "30")]).await;
        send(&s, "q", &["a", "b", "c"]).await;
        receive(&s, "q", 1).await;
        let m = SendMessage {
            queue_url: "q".into(),
            message_body: "later".into(),
            delay_seconds: Some(60),
            message_attributes: [(
                "kind".to_owned(),
                MessageAttributeValue::string("String", "test"),
            )]
            .into(),
            ..SendMessage::default()
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
        let left = inflight["time_left_ms"].as_u64().expect("estimated");
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
        let bad = messages_json(&s, &get(URL, Some("state=gone"))).await;
        assert_eq!(bad.status, 400);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn long_bodies_are_cut_on_a_page_and_whole_by_id() {
        let s = shared();
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
    async fn the_queue_summary_missing_queues_and_the_delete_placeholder() {
        let s = shared();
        create(&s, "q", &[]).await;
        send(&s, "q", &["x"]).await;
        let one = body(&messages_json(&s, &get("/_localsqs/queues/q", None)).await);
        assert_eq!(one["visible"], 1);
        let missing = messages_json(&s, &get("/_localsqs/queues/nope/messages", None)).await;
        assert_eq!(missing.status, 404);
        let odd = messages_json(&s, &get("/_localsqs/queues/q/other", None)).await;
        assert_eq!(odd.status, 404);
        let mut del = get("/_localsqs/queues/q/messages/some-id", None);
        del.method = "DELETE".into();
        let resp = delete_message(&s, &del);
        assert_eq!(resp.status, 501);
        assert!(
            body(&resp)["needs"]
                .as_str()
                .is_some_and(|n| n.contains("delete_by_id"))
        );
        del.path = "/_localsqs/queues/nope/messages/x".into();
        assert_eq!(delete_message(&s, &del).status, 404);
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
