//! W15: SNS Publish fanned out into 1, 10 and 100 SQS subscriptions at 64 connections, in
//! memory and durable: publishes/s, deliveries/s, p99, and the cost per delivery as the fan-out
//! grows (a publish is one engine change and one commit whatever its fan-out). Raw delivery
//! (no signature), and once an envelope subscription to show what the RSA signature costs.
//! After each run every subscribed queue must hold exactly the acknowledged publishes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hyper::body::Bytes;

use super::{Workload, w01_send};
use crate::check::{Check, Unit, cell};
use crate::cli::Params;
use crate::driver::{Metrics, Tgt, add_percentiles, hist};
use crate::harness::{Bench, Servers, T_SELF};
use crate::http::{Conn, Proto, Req};
use crate::procfs::Kind;
use crate::sqs;

pub const WORKLOAD: Workload = Workload {
    id: "W15",
    name: "SNS Publish fan-out to 1, 10 and 100 SQS subscriptions, 64 connections",
    measures: "publishes/s, deliveries/s and p99, in memory and durable; deliveries/s per \
               fan-out (the cost of a delivery as subscriptions grow); 1 subscription against \
               W1's SendMessage",
    runs: "per fan-out a topic with N raw SQS subscriptions, closed-loop Publish of 200 B for \
           5 s (1 s with --quick) on the in-memory server and on a durable one; then one \
           envelope (signed) subscription; every queue is checked to hold each acknowledged \
           publish once",
};

/// The fan-outs measured.
const FANS: [usize; 3] = [1, 10, 100];
/// The durable server's name.
const DURABLE: &str = "localsqs-sns-durable";
/// Target name of the ratio publishes/s (1 subscription) / W1's SendMessage (Query).
pub const R_SEND: &str = "publish/send";

/// The variant name of a fan-out run.
pub fn variant(fan: usize, raw: bool) -> String {
    if raw {
        format!("Publish fan-out {fan} raw c64")
    } else {
        format!("Publish fan-out {fan} envelope c64")
    }
}

fn form(pairs: &[(&str, &str)]) -> Req {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.append_pair("Version", "2010-03-31");
    Req {
        target: "",
        body: Bytes::from(s.finish()),
    }
}

async fn call_ok(c: &mut Conn, req: &Req, what: &str) -> Result<String, String> {
    let r = c.call(req, Duration::from_secs(30)).await?;
    let body = String::from_utf8_lossy(&r.body).into_owned();
    if r.status != 200 {
        return Err(format!("{what}: HTTP {}: {body}", r.status));
    }
    Ok(body)
}

/// Creates the topic and its `fan` queues and subscriptions; answers the topic ARN and the
/// queue URLs.
async fn setup(t: Tgt, name: &str, fan: usize, raw: bool) -> Result<(String, Vec<String>), String> {
    let mut sqs_c = t.connect(Proto::Json).await?;
    let mut sns_c = t.connect(Proto::Query).await?.for_sns();
    let body = call_ok(
        &mut sns_c,
        &form(&[("Action", "CreateTopic"), ("Name", name)]),
        "CreateTopic",
    )
    .await?;
    let arn = between(&body, "<TopicArn>", "</TopicArn>").ok_or("CreateTopic: no TopicArn")?;
    let mut urls = Vec::with_capacity(fan);
    for i in 0..fan {
        let q = format!("{name}-q{i}");
        let r = sqs_c
            .call(
                &sqs::create_queue(Proto::Json, &q, &[]),
                Duration::from_secs(30),
            )
            .await?;
        if r.status != 200 {
            return Err(format!("CreateQueue {q}: HTTP {}", r.status));
        }
        urls.push(format!("http://{}/000000000000/{q}", t.addr));
        let endpoint = format!("arn:aws:sqs:us-east-1:000000000000:{q}");
        let mut pairs = vec![
            ("Action", "Subscribe"),
            ("TopicArn", arn.as_str()),
            ("Protocol", "sqs"),
            ("Endpoint", endpoint.as_str()),
        ];
        if raw {
            pairs.extend([
                ("Attributes.entry.1.key", "RawMessageDelivery"),
                ("Attributes.entry.1.value", "true"),
            ]);
        }
        call_ok(&mut sns_c, &form(&pairs), "Subscribe").await?;
    }
    Ok((arn, urls))
}

fn between(s: &str, a: &str, b: &str) -> Option<String> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)? + i;
    Some(s[i..j].to_owned())
}

/// One closed-loop Publish run: (metrics, problems).
async fn run(
    t: Tgt,
    b: &Bench,
    fan: usize,
    raw: bool,
    tag: &str,
) -> Result<(Metrics, Vec<String>), String> {
    let name = format!("w15-{tag}-f{fan}-{}", if raw { "raw" } else { "env" });
    let (arn, urls) = setup(t, &name, fan, raw).await?;
    let body = "x".repeat(200);
    let req = form(&[
        ("Action", "Publish"),
        ("TopicArn", &arn),
        ("Message", &body),
    ]);
    let (warmup, duration) = (
        b.p.warmup,
        if b.args.quick {
            Duration::from_secs(1)
        } else {
            b.p.duration
        },
    );
    let acked = Arc::new(AtomicU64::new(0));
    let counting = Arc::new(AtomicBool::new(false));
    let stop = Instant::now() + warmup + duration;
    let mut tasks = Vec::new();
    for _ in 0..b.p.conns {
        let mut c = t.connect(Proto::Query).await?.for_sns();
        let (req, acked, counting) = (req.clone(), Arc::clone(&acked), Arc::clone(&counting));
        tasks.push(tokio::spawn(async move {
            let mut h = hist();
            let mut sent = 0u64;
            let mut problems = Vec::new();
            while Instant::now() < stop {
                let t0 = Instant::now();
                match c.call(&req, Duration::from_secs(30)).await {
                    Ok(r) if r.status == 200 => {
                        sent += 1;
                        if counting.load(Ordering::Relaxed) {
                            acked.fetch_add(1, Ordering::Relaxed);
                            let _ = h.record(
                                u64::try_from(t0.elapsed().as_micros())
                                    .unwrap_or(u64::MAX)
                                    .max(1),
                            );
                        }
                    }
                    Ok(r) => {
                        problems.push(format!("Publish: HTTP {}", r.status));
                        break;
                    }
                    Err(e) => {
                        problems.push(e);
                        break;
                    }
                }
            }
            (h, sent, problems)
        }));
    }
    tokio::time::sleep(warmup).await;
    counting.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let mut h = hist();
    let mut total = 0u64;
    let mut problems = Vec::new();
    for task in tasks {
        let (th, sent, p) = task.await.map_err(|e| e.to_string())?;
        h.add(th).map_err(|e| e.to_string())?;
        total += sent;
        problems.extend(p);
    }
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let n = acked.load(Ordering::Relaxed) as f64;
    let mut m = Metrics::new();
    m.insert("publishes_per_s".into(), n / secs);
    m.insert("msgs_per_s".into(), n * fan as f64 / secs);
    m.insert("fan_out".into(), fan as f64);
    add_percentiles(&mut m, "", &h);
    // Every queue holds each acknowledged publish exactly once.
    let mut c = t.connect(Proto::Json).await?;
    for url in &urls {
        let r = c
            .call(
                &sqs::get_attributes(Proto::Json, url, &["ApproximateNumberOfMessages"]),
                Duration::from_secs(30),
            )
            .await?;
        let text = String::from_utf8_lossy(&r.body);
        let held: u64 = between(&text, "\"ApproximateNumberOfMessages\":\"", "\"")
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX);
        if held != total {
            problems.push(format!(
                "{url} holds {held} messages, {total} publishes were acknowledged"
            ));
        }
        let _ = c
            .call(
                &sqs::delete_queue(Proto::Json, url),
                Duration::from_secs(30),
            )
            .await;
    }
    let mut sns_c = t.connect(Proto::Query).await?.for_sns();
    let _ = call_ok(
        &mut sns_c,
        &form(&[("Action", "DeleteTopic"), ("TopicArn", &arn)]),
        "DeleteTopic",
    )
    .await;
    Ok((m, problems))
}

pub async fn once(b: &mut Bench, s: &mut Servers) {
    let w = WORKLOAD.id;
    if !b.want(w) || b.fatal {
        return;
    }
    let fans: &[usize] = if b.args.quick { &FANS[..2] } else { &FANS };
    let me = s.me();
    for &fan in fans {
        let v = variant(fan, true);
        eprintln!("W15 {v} (memory)");
        let res = run(me, b, fan, true, "m").await;
        b.record((w, &v, Kind::Localsqs, 0), "W15 SNS fan-out", res);
        if fan == 1 {
            let send = w01_send::variant(Proto::Query, b.p.conns);
            let w1 = b.book.metrics(w01_send::W1.id, &send, T_SELF, 0);
            let mine = b.book.metrics(w, &v, T_SELF, 0);
            b.ratio((w, &v, 0), mine.as_ref(), w1.as_ref(), R_SEND);
        }
    }
    let v = variant(1, false);
    eprintln!("W15 {v} (memory)");
    let res = run(me, b, 1, false, "m").await;
    b.record((w, &v, Kind::Localsqs, 0), "W15 SNS fan-out", res);
    b.check_alive(&mut s.own, w);
    if !b.owns_servers() {
        return;
    }
    let dir = b.scratch.join("w15-data");
    let mut durable = match b.spawn_localsqs(DURABLE, Some(&dir)).await {
        Ok(d) => d,
        Err(e) => {
            b.file("W15 durable server", Kind::Localsqs, vec![e]);
            return;
        }
    };
    for &fan in fans {
        let v = format!("durable {}", variant(fan, true));
        eprintln!("W15 {v}");
        let res = run(Tgt::of(&durable), b, fan, true, "d").await;
        b.record((w, &v, Kind::Localsqs, 0), "W15 SNS fan-out (durable)", res);
    }
    b.check_alive(&mut durable, w);
    if !durable.terminate(Duration::from_secs(30)) {
        b.problems
            .push("localsqs (W15 durable) did not exit within 30 s of SIGTERM".into());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

pub fn checks(_p: &Params) -> Vec<Check> {
    let w = WORKLOAD.id;
    let mut out = Vec::new();
    for fan in FANS {
        let v = variant(fan, true);
        let name = format!("W15 SNS Publish, {fan} raw subscription(s) (memory, c64)");
        out.push(Check::new(
            name.clone(),
            "publishes/s",
            cell(w, v.clone(), T_SELF, "publishes_per_s"),
            Unit::Rate,
        ));
        let deliveries = Check::new(
            name.clone(),
            "deliveries/s",
            cell(w, v.clone(), T_SELF, "msgs_per_s"),
            Unit::Rate,
        );
        out.push(if fan == 100 {
            deliveries.at_least(200_000.0)
        } else {
            deliveries
        });
        out.push(Check::new(
            name,
            "p99",
            cell(w, v, T_SELF, "p99_ms"),
            Unit::Ms,
        ));
        let dv = format!("durable {}", variant(fan, true));
        let dname = format!("W15 SNS Publish, {fan} raw subscription(s) (durable, c64)");
        out.push(Check::new(
            dname.clone(),
            "deliveries/s",
            cell(w, dv.clone(), T_SELF, "msgs_per_s"),
            Unit::Rate,
        ));
        out.push(Check::new(
            dname,
            "p99",
            cell(w, dv, T_SELF, "p99_ms"),
            Unit::Ms,
        ));
    }
    let env = variant(1, false);
    let name = "W15 SNS Publish, 1 envelope subscription (signed, memory, c64)".to_owned();
    out.push(Check::new(
        name.clone(),
        "publishes/s",
        cell(w, env.clone(), T_SELF, "publishes_per_s"),
        Unit::Rate,
    ));
    out.push(Check::new(
        name,
        "p99",
        cell(w, env, T_SELF, "p99_ms"),
        Unit::Ms,
    ));
    out.push(
        Check::new(
            "W15 SNS Publish, 1 raw subscription (memory, c64)",
            "publishes/s / W1 SendMessage (query)",
            cell(w, variant(1, true), R_SEND, "ratio"),
            Unit::Ratio,
        )
        .at_least(0.8),
    );
    out
}
