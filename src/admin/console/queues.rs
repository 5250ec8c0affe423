//! Admin layer: the console's list of queues, `GET /_localsqs/queues?prefix=&contains=&offset=&limit=`:
//! a page of queues in name order with their counts, URLs and badges (FIFO, dead-letter queue).
//!
//! The page talks to the SQS API of its own origin with the AWS JSON 1.0 protocol for every
//! change, so the console exercises the same code paths as an SDK. Every engine call goes
//! through the engine's public API: `queue_counts`, `peek`, `execute`.

use serde_json::{Value, json};

use super::common::{number, query_fields};
use crate::admin::state::{Admin, AdminError, Answer, Req, ok_json};
use crate::command::{Command, ListDeadLetterSourceQueues, Reply, RequestContext};
use crate::wire::WireRequest;

/// Queues on one page unless the request asks otherwise, and the most it may ask for.
pub(super) const QUEUE_PAGE: usize = 50;
pub(super) const QUEUE_PAGE_MAX: usize = 500;

/// What `GET /_localsqs/queues` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListQuery {
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

fn list_query(req: &WireRequest<'_>) -> Result<ListQuery, AdminError> {
    let f = query_fields(req)?;
    Ok(ListQuery {
        prefix: f.get("prefix").cloned().unwrap_or_default(),
        contains: f.get("contains").cloned().unwrap_or_default(),
        offset: number(&f, "offset", 0, usize::MAX)?,
        limit: number(&f, "limit", QUEUE_PAGE, QUEUE_PAGE_MAX)?.max(1),
    })
}

/// `GET /_localsqs/queues?prefix=&contains=&offset=&limit=`.
pub async fn queues(admin: &Admin, r: &Req<'_>) -> Answer {
    let q = list_query(r.wire)?;
    let mut page = queues_page(admin, &r.wire.base_url, &q);
    mark_dead_letter_queues(admin, &r.wire.base_url, &mut page).await;
    Ok(ok_json(&page))
}

/// The first page of queues, as the console page inlines it.
pub(super) async fn first_page(admin: &Admin, base_url: &str) -> Value {
    let mut first = queues_page(admin, base_url, &ListQuery::default());
    mark_dead_letter_queues(admin, base_url, &mut first).await;
    first
}

/// One page of queues, in name order, with counts; `dlq` is filled in by
/// [`mark_dead_letter_queues`] (false until then).
fn queues_page(admin: &Admin, base_url: &str, q: &ListQuery) -> Value {
    let all = admin.engine.queue_counts();
    let everything = all.len();
    // Over every queue, not only the matching ones: the console's account and region columns
    // stay while a filter narrows the list.
    let scopes: std::collections::BTreeSet<_> = all.iter().map(|c| c.scope.clone()).collect();
    let needle = q.contains.to_lowercase();
    let matching: Vec<_> = all
        .into_iter()
        .filter(|c| c.name.starts_with(&q.prefix))
        .filter(|c| needle.is_empty() || c.name.to_lowercase().contains(&needle))
        .collect();
    let total = matching.len();
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
        "now_ms": admin.clock.state().now_ms,
        "scopes": scopes.len(),
        "queues": queues,
    })
}

/// Sets `dlq` on each queue of the page that is some queue's dead-letter target. One
/// ListDeadLetterSourceQueues per queue of the page: the cost follows the page, not the
/// number of queues.
async fn mark_dead_letter_queues(admin: &Admin, base_url: &str, page: &mut Value) {
    let ctx = RequestContext::new(base_url, admin.engine.default_scope());
    let Some(queues) = page["queues"].as_array_mut() else {
        return;
    };
    for q in queues {
        let cmd = Command::ListDeadLetterSourceQueues(ListDeadLetterSourceQueues {
            queue_url: q["url"].as_str().unwrap_or_default().to_owned(),
            next_token: None,
            max_results: Some(1),
        });
        if let Ok(Reply::ListDeadLetterSourceQueues(r)) = admin.engine.execute(&ctx, cmd).await {
            q["dlq"] = json!(!r.queue_urls.is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::console::test_support::{BASE, admin, body, call, create, get, send};
    use crate::admin::routes::{QUEUES_PATH, Route};

    fn names(v: &Value) -> Vec<&str> {
        v["queues"]
            .as_array()
            .expect("queues")
            .iter()
            .map(|q| q["name"].as_str().expect("name"))
            .collect()
    }

    #[tokio::test]
    async fn queues_page_through_in_name_order_with_filters() {
        let s = admin();
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
        let bad = call(
            &s,
            Route::ConsoleQueues,
            &get(QUEUES_PATH, Some("offset=-1")),
        )
        .await;
        assert_eq!(bad.status, 400);
        s.engine.close().await;
    }

    #[tokio::test]
    async fn queues_carry_counts_urls_and_fifo_and_dlq_badges() {
        let s = admin();
        create(&s, "dead", &[]).await;
        let arn = s.engine.queue_arn("dead");
        let policy = format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}"#);
        create(&s, "live", &[("RedrivePolicy", policy.as_str())]).await;
        create(&s, "jobs.fifo", &[("FifoQueue", "true")]).await;
        send(&s, "live", &["a", "b"]).await;
        let v = body(&call(&s, Route::ConsoleQueues, &get(QUEUES_PATH, None)).await);
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

    async fn page(s: &Admin, query: &str) -> Value {
        body(&call(s, Route::ConsoleQueues, &get(QUEUES_PATH, Some(query))).await)
    }
}
