//! Server layer: the web console. Its assets (HTML, CSS, JavaScript modules, an SVG icon) are
//! embedded in the binary and served at `/_localsqs/ui/`; the JSON endpoints it reads beside
//! the SQS API are here too: `GET /_localsqs/queues` (a page of queues with their counts) and,
//! in [`messages`], `GET /_localsqs/queues/<name>/messages` (a page of a queue's messages).
//!
//! The page talks to the SQS API of its own origin with the AWS JSON 1.0 protocol for every
//! change, so the console exercises the same code paths as an SDK. Every engine call goes
//! through the engine's public API: `queue_counts`, `peek`, `execute`.

mod messages;

use serde_json::{Value, json};

use super::Shared;
use crate::command::{Command, ListDeadLetterSourceQueues, Reply, RequestContext};
use crate::wire::{self, WireRequest, WireResponse};

pub(super) use messages::{delete_message, messages_json};

/// Where the console is served; `UI_PATH` without the slash redirects here.
pub const UI_PATH: &str = "/_localsqs/ui";
/// The console's JSON list of queues; `/<name>/messages` below it lists messages.
pub const QUEUES_PATH: &str = "/_localsqs/queues";

/// The Content-Security-Policy of every console answer: nothing but this origin, no inline
/// script or style, no framing.
pub const CSP: &str = "default-src 'self'; base-uri 'none'; object-src 'none'; \
                       frame-ancestors 'none'; form-action 'self'";

/// Queues on one page unless the request asks otherwise, and the most it may ask for.
const QUEUE_PAGE: usize = 50;
const QUEUE_PAGE_MAX: usize = 500;

const JS: &str = "text/javascript; charset=utf-8";

/// Every embedded file: path below `UI_PATH/`, content type, contents.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "",
        "text/html; charset=utf-8",
        include_str!("console/index.html"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("console/style.css"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_str!("console/favicon.svg"),
    ),
    ("js/theme.js", JS, include_str!("console/js/theme.js")),
    ("js/main.js", JS, include_str!("console/js/main.js")),
    ("js/api.js", JS, include_str!("console/js/api.js")),
    ("js/dom.js", JS, include_str!("console/js/dom.js")),
    ("js/spark.js", JS, include_str!("console/js/spark.js")),
    ("js/queues.js", JS, include_str!("console/js/queues.js")),
    ("js/queue.js", JS, include_str!("console/js/queue.js")),
    ("js/messages.js", JS, include_str!("console/js/messages.js")),
    ("js/actions.js", JS, include_str!("console/js/actions.js")),
    ("js/tools.js", JS, include_str!("console/js/tools.js")),
];

/// The marker in `index.html` replaced by the first page of queues, so the page shows them
/// as soon as its script runs, before any fetch.
const INITIAL_MARKER: &str = "{\"initial\":null}";

/// Headers every console answer carries.
fn console_headers(resp: &mut WireResponse) {
    resp.headers.extend([
        ("cache-control", "no-cache".to_owned()),
        ("content-security-policy", CSP.to_owned()),
        ("x-content-type-options", "nosniff".to_owned()),
        ("referrer-policy", "no-referrer".to_owned()),
    ]);
}

/// A JSON answer with the console's headers.
pub(super) fn json_response(status: u16, body: &Value) -> WireResponse {
    let mut resp = WireResponse::json(status, body);
    console_headers(&mut resp);
    resp
}

fn error(status: u16, message: &str) -> WireResponse {
    json_response(status, &json!({ "error": message }))
}

/// `GET /_localsqs/ui[/…]`: the page, its assets, or the redirect to the page.
pub(super) async fn asset(shared: &Shared, req: &WireRequest<'_>) -> WireResponse {
    let Some(rest) = req.path.strip_prefix(UI_PATH) else {
        return error(404, "not a console path");
    };
    let mut resp = if rest.is_empty() {
        let mut r = WireResponse::new(308, "text/plain; charset=utf-8", format!("{UI_PATH}/"));
        r.headers.push(("location", format!("{UI_PATH}/")));
        r
    } else {
        let file = rest.trim_start_matches('/');
        match ASSETS.iter().find(|(p, _, _)| *p == file) {
            None => WireResponse::new(
                404,
                "text/plain; charset=utf-8",
                format!("no console file {file}"),
            ),
            Some((_, ctype, body)) if file.is_empty() => {
                let mut first = queues_page(shared, &req.base_url, &ListQuery::default());
                mark_dead_letter_queues(shared, &req.base_url, &mut first).await;
                WireResponse::new(200, ctype, index_with(body, &first))
            }
            Some((_, ctype, body)) => WireResponse::new(200, ctype, (*body).to_owned()),
        }
    };
    console_headers(&mut resp);
    resp
}

/// The page with the first page of queues in its data block. `<` is escaped so no queue
/// name or URL can close the `<script type="application/json">` element.
fn index_with(html: &str, first: &Value) -> String {
    let data = json!({ "initial": first })
        .to_string()
        .replace('<', "\\u003c");
    html.replacen(INITIAL_MARKER, &data, 1)
}

/// What `GET /_localsqs/queues` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListQuery {
    /// Names starting with this.
    prefix: String,
    /// Names containing this, ignoring case.
    contains: String,
    offset: usize,
    limit: usize,
}

impl Default for ListQuery {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            contains: String::new(),
            offset: 0,
            limit: QUEUE_PAGE,
        }
    }
}

/// The query string's fields, or the 400 answer naming what is wrong.
fn query_fields(
    req: &WireRequest<'_>,
) -> Result<std::collections::BTreeMap<String, String>, WireResponse> {
    wire::form_fields(req.query, &[]).map_err(|e| error(400, &e.message))
}

/// A non-negative number field, `default` when absent, at most `max`.
pub(super) fn number(
    fields: &std::collections::BTreeMap<String, String>,
    name: &str,
    default: usize,
    max: usize,
) -> Result<usize, WireResponse> {
    match fields.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => v.parse::<usize>().map(|n| n.min(max)).map_err(|_| {
            error(
                400,
                &format!("{name} must be a whole number >= 0, not {v:?}"),
            )
        }),
    }
}

fn list_query(req: &WireRequest<'_>) -> Result<ListQuery, WireResponse> {
    let f = query_fields(req)?;
    Ok(ListQuery {
        prefix: f.get("prefix").cloned().unwrap_or_default(),
        contains: f.get("contains").cloned().unwrap_or_default(),
        offset: number(&f, "offset", 0, usize::MAX)?,
        limit: number(&f, "limit", QUEUE_PAGE, QUEUE_PAGE_MAX)?.max(1),
    })
}

/// `GET /_localsqs/queues?prefix=&contains=&offset=&limit=`.
pub(super) async fn queues_json(shared: &Shared, req: &WireRequest<'_>) -> WireResponse {
    let q = match list_query(req) {
        Ok(q) => q,
        Err(resp) => return resp,
    };
    let mut page = queues_page(shared, &req.base_url, &q);
    mark_dead_letter_queues(shared, &req.base_url, &mut page).await;
    json_response(200, &page)
}

/// One page of queues, in name order, with counts; `dlq` is filled in by
/// [`mark_dead_letter_queues`] (false until then).
fn queues_page(shared: &Shared, base_url: &str, q: &ListQuery) -> Value {
    let all = shared.engine.queue_counts();
    let everything = all.len();
    let needle = q.contains.to_lowercase();
    let matching: Vec<_> = all
        .into_iter()
        .filter(|c| c.name.starts_with(&q.prefix))
        .filter(|c| needle.is_empty() || c.name.to_lowercase().contains(&needle))
        .collect();
    let total = matching.len();
    let scopes: std::collections::BTreeSet<_> = matching.iter().map(|c| c.scope.clone()).collect();
    let queues: Vec<Value> = matching
        .into_iter()
        .skip(q.offset)
        .take(q.limit)
        .map(|c| {
            // The /queue/<region>/<account>/<name> form names the queue's region too, so the
            // console's unsigned requests reach queues of every region.
            json!({
                "name": c.name,
                "account": c.scope.account,
                "region": c.scope.region,
                "url": format!(
                    "{base_url}/queue/{}/{}/{}",
                    c.scope.region, c.scope.account, c.name
                ),
                "arn": c.scope.arn(&c.name),
                "fifo": c.name.ends_with(".fifo"),
                "dlq": false,
                "visible": c.visible,
                "in_flight": c.in_flight,
                "delayed": c.delayed,
            })
        })
        .collect();
    json!({
        "total": total,
        "all": everything,
        "offset": q.offset,
        "limit": q.limit,
        "now_ms": shared.clock.state().now_ms,
        "scopes": scopes.len(),
        "queues": queues,
    })
}

/// Sets `dlq` on each queue of the page that is some queue's dead-letter target. One
/// ListDeadLetterSourceQueues per queue of the page: the cost follows the page, not the
/// number of queues.
async fn mark_dead_letter_queues(shared: &Shared, base_url: &str, page: &mut Value) {
    let ctx = RequestContext::new(base_url, shared.engine.default_scope());
    let Some(queues) = page["queues"].as_array_mut() else {
        return;
    };
    for q in queues {
        let cmd = Command::ListDeadLetterSourceQueues(ListDeadLetterSourceQueues {
            queue_url: q["url"].as_str().unwrap_or_default().to_owned(),
            next_token: None,
            max_results: Some(1),
        });
        if let Ok(Reply::ListDeadLetterSourceQueues(r)) = shared.engine.execute(&ctx, cmd).await {
            q["dlq"] = json!(!r.queue_urls.is_empty());
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::command::{CreateQueue, SendMessageBatch, SendMessageBatchRequestEntry};
    use crate::engine::{Engine, EngineOptions, RandomIds, SystemClock};
    use crate::server::{ServerOptions, clock, faults, metrics, push, setup};
    use crate::wire::Protocol;

    pub(crate) const BASE: &str = "http://localhost:9324";

    pub(crate) fn shared() -> Shared {
        let clock = Arc::new(clock::ControlledClock::new(Arc::new(SystemClock)));
        let engine = Engine::open(
            EngineOptions::default(),
            Arc::clone(&clock) as Arc<dyn crate::engine::Clock>,
            Arc::new(RandomIds),
        )
        .expect("opens");
        let faults = Arc::new(faults::Faults::new());
        let push = Arc::new(push::PushTargets::new(
            engine.clone(),
            Arc::clone(&clock) as Arc<dyn crate::engine::Clock>,
            Vec::new(),
        ));
        Shared {
            metrics: metrics::Metrics::new(&engine, &faults),
            engine,
            options: ServerOptions::default(),
            faults,
            clock,
            startup: setup::Setup::default(),
            push,
        }
    }

    /// A context in the configured account and region of [`shared`]'s engine.
    pub(crate) fn ctx() -> RequestContext {
        let o = EngineOptions::default();
        let scope = crate::command::Scope {
            account: o.account_id,
            region: o.region,
        };
        RequestContext::new(BASE, Arc::new(scope))
    }

    pub(crate) fn get<'a>(path: &'a str, query: Option<&'a str>) -> WireRequest<'a> {
        WireRequest {
            protocol: Protocol::Query,
            method: "GET",
            path,
            query,
            target: None,
            trace_header: None,
            authorization: None,
            base_url: BASE.into(),
            body: &[],
        }
    }

    pub(crate) async fn create(s: &Shared, name: &str, attributes: &[(&str, &str)]) {
        let c = CreateQueue {
            queue_name: name.into(),
            attributes: attributes
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..CreateQueue::default()
        };
        s.engine
            .execute(&ctx(), Command::CreateQueue(c))
            .await
            .expect("creates");
    }

    pub(crate) async fn send(s: &Shared, queue: &str, bodies: &[&str]) {
        for chunk in bodies.chunks(10) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(i, b)| SendMessageBatchRequestEntry {
                    id: format!("m{i}"),
                    message_body: (*b).to_owned(),
                    ..SendMessageBatchRequestEntry::default()
                })
                .collect();
            let c = SendMessageBatch {
                queue_url: queue.into(),
                entries,
            };
            s.engine
                .execute(&ctx(), Command::SendMessageBatch(c))
                .await
                .expect("sends");
        }
    }

    pub(crate) fn body(resp: &WireResponse) -> Value {
        serde_json::from_str(&resp.body).expect("json")
    }

    fn names(v: &Value) -> Vec<&str> {
        v["queues"]
            .as_array()
            .expect("queues")
            .iter()
            .map(|q| q["name"].as_str().expect("name"))
            .collect()
    }

    #[tokio::test]
    async fn the_page_and_its_assets_are_embedded_with_strict_headers() {
        let s = shared();
        create(&s, "orders", &[]).await;
        let page = asset_of(&s, &get("/_localsqs/ui/", None)).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.content_type, "text/html; charset=utf-8");
        assert!(
            page.body.contains("\"name\":\"orders\""),
            "first page inlined"
        );
        assert!(!page.body.contains(INITIAL_MARKER));
        let header = |r: &WireResponse, n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header(&page, "cache-control").as_deref(), Some("no-cache"));
        assert!(
            header(&page, "content-security-policy")
                .is_some_and(|v| v.starts_with("default-src 'self'"))
        );
        for (path, ctype) in [
            ("/_localsqs/ui/style.css", "text/css; charset=utf-8"),
            ("/_localsqs/ui/js/main.js", JS),
            ("/_localsqs/ui/favicon.svg", "image/svg+xml"),
        ] {
            let r = asset_of(&s, &get(path, None)).await;
            assert_eq!((r.status, r.content_type), (200, ctype), "{path}");
            assert!(!r.body.is_empty());
        }
        let redirect = asset_of(&s, &get(UI_PATH, None)).await;
        assert_eq!(redirect.status, 308);
        assert_eq!(
            header(&redirect, "location").as_deref(),
            Some("/_localsqs/ui/")
        );
        assert_eq!(
            asset_of(&s, &get("/_localsqs/ui/nope.js", None))
                .await
                .status,
            404
        );
        assert_eq!(
            asset_of(&s, &get("/_localsqs/ui/../Cargo.toml", None))
                .await
                .status,
            404
        );
        s.engine.close().await;
    }

    #[test]
    fn every_module_the_page_imports_is_embedded() {
        for (path, _, body) in ASSETS.iter().filter(|(p, _, _)| p.ends_with(".js")) {
            for line in body.lines().filter(|l| l.starts_with("import ")) {
                let from = line.rsplit(['\'', '"']).nth(1).expect("import path");
                let target = format!("js/{}", from.trim_start_matches("./"));
                assert!(
                    ASSETS.iter().any(|(p, _, _)| *p == target),
                    "{path} imports {from}, which is not embedded"
                );
            }
        }
    }

    #[test]
    fn inlined_data_cannot_close_its_script_element() {
        let html = format!("<script type=\"application/json\">{INITIAL_MARKER}</script>");
        let out = index_with(&html, &json!({ "x": "</script><script>alert(1)" }));
        assert_eq!(out.matches("</script>").count(), 1, "{out}");
    }

    #[tokio::test]
    async fn queues_page_through_in_name_order_with_filters() {
        let s = shared();
        for i in 0..25 {
            create(&s, &format!("q-{i:02}"), &[]).await;
        }
        create(&s, "Other-Q", &[]).await;
        let first = page(&s, "limit=10").await;
        assert_eq!(first["total"], 26);
        assert_eq!(names(&first).len(), 10);
        assert_eq!(names(&first)[0], "Other-Q");
        let third = page(&s, "offset=20&limit=10").await;
        assert_eq!(
            names(&third),
            ["q-19", "q-20", "q-21", "q-22", "q-23", "q-24"]
        );
        let beyond = page(&s, "offset=100").await;
        assert_eq!(
            (beyond["total"].as_u64(), names(&beyond).len()),
            (Some(26), 0)
        );
        let prefixed = page(&s, "prefix=q-1").await;
        assert_eq!(prefixed["total"], 10);
        assert_eq!(prefixed["all"], 26);
        let contains = page(&s, "contains=other").await;
        assert_eq!(names(&contains), ["Other-Q"]);
        assert_eq!(page(&s, "limit=100000").await["limit"], QUEUE_PAGE_MAX);
        assert_eq!(page(&s, "limit=0").await["limit"], 1);
        let bad = queues_json(&s, &get(QUEUES_PATH, Some("offset=-1"))).await;
        assert_eq!(bad.status, 400);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn queues_carry_counts_urls_and_fifo_and_dlq_badges() {
        let s = shared();
        create(&s, "dead", &[]).await;
        let arn = s.engine.queue_arn("dead");
        let policy = format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}"#);
        create(&s, "live", &[("RedrivePolicy", policy.as_str())]).await;
        create(&s, "jobs.fifo", &[("FifoQueue", "true")]).await;
        send(&s, "live", &["a", "b"]).await;
        let v = body(&queues_json(&s, &get(QUEUES_PATH, None)).await);
        let q = |n: &str| {
            v["queues"]
                .as_array()
                .expect("queues")
                .iter()
                .find(|q| q["name"] == n)
                .cloned()
                .expect("listed")
        };
        assert_eq!(q("dead")["dlq"], true);
        assert_eq!(q("live")["dlq"], false);
        assert_eq!(q("live")["visible"], 2);
        assert_eq!(q("live")["in_flight"], 0);
        assert_eq!(
            q("live")["url"],
            format!("{BASE}/queue/us-east-1/000000000000/live")
        );
        assert_eq!(q("live")["region"], "us-east-1");
        assert_eq!(q("jobs.fifo")["fifo"], true);
        assert_eq!(q("dead")["arn"], arn);
        s.engine.close().await;
    }

    async fn asset_of(s: &Shared, req: &WireRequest<'_>) -> WireResponse {
        asset(s, req).await
    }

    async fn page(s: &Shared, query: &str) -> Value {
        body(&queues_json(s, &get(QUEUES_PATH, Some(query))).await)
    }
}
