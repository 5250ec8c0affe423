//! Admin layer: the console's search of a queue's messages, by body and by attribute:
//! `GET /_localsqs/queues/<name>/messages?body=&attribute=&value=&state=&from=&limit=&scan=`.
//!
//! A search is done by the server, so it works on queues far larger than a page, and the work
//! of one request is bounded: it looks at no more than `scan` messages (10,000 unless asked,
//! at most 100,000), in queue order from position `from`, in steps of 500 that each hold the
//! engine lock once (`Engine::inspect_from`). It stops there, or once `limit` messages match,
//! and says so: `search.scanned`, `search.scan_limit`, and `search.next`, the position the next
//! request goes on from (`null` once the whole queue has been looked at).

use serde_json::{Value, json};

use super::common::{PAGE, PAGE_MAX, counts_json, number, query_fields, queue_of};
use super::render::{BODY_LIMIT, base64, inspected, state_filter, state_name};
use crate::admin::state::{Admin, AdminError};
use crate::command::Message;
use crate::engine::PeekState;
use crate::wire::WireRequest;

/// Messages one request looks at unless it asks otherwise, and the most it may ask for.
pub(super) const SCAN: usize = 10_000;
pub(super) const SCAN_MAX: usize = 100_000;
/// Messages looked at per hold of the engine lock.
const STEP: usize = 500;

/// What a search asks for.
#[derive(Debug)]
struct Search {
    /// The body contains this (case-sensitive).
    body: Option<String>,
    /// The message has an attribute of this name: a message attribute, else a system one
    /// (`MessageGroupId`, `SenderId`, …).
    attribute: Option<String>,
    /// …whose value is exactly this (a binary value as base64).
    value: Option<String>,
    state: Option<PeekState>,
    from: u64,
    limit: usize,
    scan: usize,
}

fn given(f: &std::collections::BTreeMap<String, String>, name: &str) -> Option<String> {
    f.get(name).filter(|v| !v.is_empty()).cloned()
}

/// Whether a messages request is a search (it names a body, an attribute or a value).
pub(super) fn wanted(req: &WireRequest<'_>) -> Result<bool, AdminError> {
    let f = query_fields(req)?;
    Ok(["body", "attribute", "value"]
        .iter()
        .any(|k| given(&f, k).is_some()))
}

fn search_query(req: &WireRequest<'_>) -> Result<Search, AdminError> {
    let f = query_fields(req)?;
    let attribute = given(&f, "attribute");
    let value = given(&f, "value");
    if value.is_some() && attribute.is_none() {
        return Err(AdminError::bad_request(
            "value needs attribute: the name of the attribute to compare",
        ));
    }
    Ok(Search {
        body: given(&f, "body"),
        attribute,
        value,
        state: state_filter(f.get("state").map(String::as_str))?,
        from: number(&f, "from", 0, usize::MAX)? as u64,
        limit: number(&f, "limit", PAGE, PAGE_MAX)?.max(1),
        scan: number(&f, "scan", SCAN, SCAN_MAX)?.max(1),
    })
}

/// Whether a message is one the search looks for.
fn matches(m: &Message, s: &Search) -> bool {
    if let Some(b) = &s.body
        && !m.body.contains(b.as_str())
    {
        return false;
    }
    let Some(name) = &s.attribute else {
        return true;
    };
    let value = if let Some(a) = m.message_attributes.get(name) {
        a.string_value
            .clone()
            .or_else(|| a.binary_value.as_deref().map(base64))
    } else if let Some((_, v)) = m.attributes.iter().find(|(k, _)| k == name) {
        Some(v.clone())
    } else {
        return false;
    };
    s.value
        .as_ref()
        .is_none_or(|want| value.as_ref() == Some(want))
}

/// `GET /_localsqs/queues/<name>/messages?body=…|attribute=…`: one bounded step of a search.
pub(super) fn search(
    admin: &Admin,
    req: &WireRequest<'_>,
    name: &str,
) -> Result<Value, AdminError> {
    let s = search_query(req)?;
    let (scope, counts, url) = queue_of(admin, req, name)?;
    let now = admin.clock.state().now_ms;
    let mut found = Vec::new();
    let mut scanned = 0;
    let mut next = Some(s.from);
    'walk: while let Some(at) = next {
        if scanned >= s.scan || found.len() >= s.limit {
            break;
        }
        let step = admin
            .engine
            .inspect_from(&scope, &url, s.state, at, STEP.min(s.scan - scanned))
            .map_err(|e| AdminError::not_found(e.message))?;
        let vanished = step.looked_at - step.messages.len();
        next = step.next;
        for (seq, i) in step.messages {
            if found.len() >= s.limit {
                // Full: the next request starts at the first message not looked at.
                next = Some(seq);
                break 'walk;
            }
            scanned += 1;
            if matches(&i.message, &s) {
                found.push(inspected(&i, now, BODY_LIMIT));
            }
        }
        scanned += vanished;
    }
    let total = match s.state {
        None => counts.visible + counts.in_flight + counts.delayed,
        Some(PeekState::Visible) => counts.visible,
        Some(PeekState::InFlight) => counts.in_flight,
        Some(PeekState::Delayed) => counts.delayed,
    };
    Ok(json!({
        "queue": name,
        "state": s.state.map_or("all", state_name),
        "total": total,
        "limit": s.limit,
        "counts": counts_json(&counts),
        "now_ms": now,
        "time_left_exact": true,
        "messages": found,
        "search": {
            "body": s.body,
            "attribute": s.attribute,
            "value": s.value,
            "from": s.from,
            "scanned": scanned,
            "scan_limit": s.scan,
            "next": next,
            "complete": next.is_none(),
        },
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::admin::console::test_support::{admin, body, call, create, ctx, get};
    use crate::admin::routes::Route;
    use crate::admin::state::Admin;
    use crate::command::{
        Command, MessageAttributeValue, MessageToSend, SendMessageBatch,
        SendMessageBatchRequestEntry,
    };

    const URL: &str = "/_localsqs/queues/q/messages";

    /// Sends `n` messages `order <i>`, with attribute `parity` even or odd.
    async fn fill(s: &Admin, n: usize) {
        let all: Vec<usize> = (0..n).collect();
        for chunk in all.chunks(10) {
            let entries = chunk
                .iter()
                .map(|&i| SendMessageBatchRequestEntry {
                    id: format!("m{}", i % 10),
                    message: MessageToSend {
                        message_body: format!("order {i}"),
                        message_attributes: [(
                            "parity".to_owned(),
                            MessageAttributeValue::string(
                                "String",
                                if i % 2 == 0 { "even" } else { "odd" },
                            ),
                        )]
                        .into(),
                        ..MessageToSend::default()
                    },
                })
                .collect();
            let c = SendMessageBatch {
                queue_url: "q".into(),
                entries,
            };
            s.engine
                .execute(&ctx(), Command::SendMessageBatch(c))
                .await
                .expect("sends");
        }
    }

    async fn find(s: &Admin, query: &str) -> Value {
        let resp = call(s, Route::ConsoleMessages, &get(URL, Some(query))).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        body(&resp)
    }

    fn bodies(v: &Value) -> Vec<String> {
        v["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["body"].as_str().expect("body").to_owned())
            .collect()
    }

    #[tokio::test]
    async fn by_body_and_by_attribute_name_and_value() {
        let s = admin();
        create(&s, "q", &[]).await;
        fill(&s, 30).await;
        let v = find(&s, "body=order%201").await;
        let expected: Vec<String> = [1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
            .iter()
            .map(|i| format!("order {i}"))
            .collect();
        assert_eq!(bodies(&v), expected);
        assert_eq!(v["search"]["scanned"], 30);
        assert_eq!(v["search"]["complete"], true);
        assert_eq!(v["search"]["next"], Value::Null);
        let odd = find(&s, "attribute=parity&value=odd").await;
        assert_eq!(bodies(&odd).len(), 15);
        assert!(
            bodies(&odd)
                .iter()
                .all(|b| b.ends_with(['1', '3', '5', '7', '9']))
        );
        let both = find(&s, "body=order%202&attribute=parity&value=even").await;
        assert_eq!(
            bodies(&both),
            [
                "order 2", "order 20", "order 22", "order 24", "order 26", "order 28"
            ]
        );
        assert_eq!(
            find(&s, "attribute=parity").await["messages"]
                .as_array()
                .map(Vec::len),
            Some(30)
        );
        assert_eq!(bodies(&find(&s, "attribute=colour").await).len(), 0);
        // System attributes by name too.
        let sender = find(&s, "attribute=SenderId").await;
        assert_eq!(bodies(&sender).len(), 30);
        let bad = call(&s, Route::ConsoleMessages, &get(URL, Some("value=odd"))).await;
        assert_eq!(bad.status, 400, "a value needs a name");
        s.engine.close().await;
    }

    #[tokio::test]
    async fn a_search_looks_at_a_bounded_number_and_goes_on_from_where_it_stopped() {
        let s = admin();
        create(&s, "q", &[]).await;
        fill(&s, 1_200).await;
        // Every message matches "order": the page fills first.
        let first = find(&s, "body=order&limit=7").await;
        assert_eq!(bodies(&first).len(), 7);
        assert_eq!(first["search"]["scanned"], 7);
        let next = first["search"]["next"].as_u64().expect("more to look at");
        let second = find(&s, &format!("body=order&limit=7&from={next}")).await;
        assert_eq!(bodies(&second)[0], "order 7", "nothing skipped");
        // A rare match: the scan limit stops the request, which says so.
        let capped = find(&s, "body=order%201199&scan=1000").await;
        assert_eq!(bodies(&capped).len(), 0);
        assert_eq!(capped["search"]["scanned"], 1000);
        assert_eq!(capped["search"]["scan_limit"], 1000);
        assert_eq!(capped["search"]["complete"], false);
        let at = capped["search"]["next"].as_u64().expect("goes on");
        let rest = find(&s, &format!("body=order%201199&scan=1000&from={at}")).await;
        assert_eq!(bodies(&rest), ["order 1199"]);
        assert_eq!(rest["search"]["scanned"], 200);
        assert_eq!(rest["search"]["complete"], true);
        assert_eq!(rest["total"], 1_200);
        let big = find(&s, "body=x&scan=999999999").await;
        assert_eq!(big["search"]["scan_limit"], super::SCAN_MAX);
        s.engine.close().await;
    }
}
