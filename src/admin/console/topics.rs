//! Admin layer: the console's list of SNS topics, `GET /_localsqs/topics`: every topic in name
//! order with its counters and subscriptions. Publishing from the console goes through the SNS
//! API of the same origin (a Query `Publish`, as an SDK sends it), not through this endpoint.

use serde_json::json;

use crate::admin::state::{Admin, Answer, Req, ok_json};

/// `GET /_localsqs/topics`.
pub fn topics(admin: &Admin, _r: &Req<'_>) -> Answer {
    let list: Vec<serde_json::Value> = admin
        .engine
        .topic_summaries()
        .into_iter()
        .map(|t| {
            let subs: Vec<serde_json::Value> = admin
                .engine
                .topic_subscriptions(&t.arn)
                .unwrap_or_default()
                .into_iter()
                .map(|s| {
                    json!({
                        "arn": s.arn,
                        "protocol": s.protocol,
                        "endpoint": s.endpoint,
                        "pending": s.pending,
                        "raw": s.raw,
                        "filter_policy": s.filter_policy,
                    })
                })
                .collect();
            json!({
                "name": t.name,
                "arn": t.arn,
                "account": t.scope.account,
                "region": t.scope.region,
                "fifo": t.fifo,
                "published": t.published,
                "delivered": t.delivered,
                "confirmed": t.confirmed,
                "pending": t.pending,
                "subscriptions": subs,
            })
        })
        .collect();
    Ok(ok_json(&json!({ "topics": list })))
}
