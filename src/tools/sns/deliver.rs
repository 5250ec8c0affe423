//! Tools layer, SNS: the delivery worker for subscriptions outside the engine (docs/sns.md
//! §5.4, §7.5, §7.6, §9): it takes what publishes and Subscribe queued (`Engine::
//! take_sns_deliveries`), POSTs notifications and confirmation requests to `http://`
//! endpoints with SNS's headers, hands `lambda` subscriptions' events to a push target's
//! handler, retries failures as the delivery policy says on the server's controllable clock,
//! and sends what stays undeliverable to the subscription's dead-letter queue.
//!
//! A `lambda` subscription to `arn:aws:lambda:<region>:<account>:function:<name>` is delivered
//! to the handler (URL or command) of the push target of the queue called `<name>`. `https://`
//! endpoints fail: there is no TLS client (use `http://` for a local endpoint).

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::command::RequestContext;
use crate::engine::{Clock, Engine, SnsDelivery, SnsTarget};
use crate::tools::push::PushTargets;
use crate::tools::push::invoke;

/// How long an endpoint has to answer (§7.5: about 15 s).
const ANSWER_WITHIN: Duration = Duration::from_secs(15);

/// The retry schedule of a delivery policy: retries after the first attempt, and the delay
/// before each (§7.5: 3 retries, 20 s apart, by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// Retries after the first attempt.
    pub count: u32,
    /// Delay before each retry, ms.
    pub delay_ms: u64,
}

impl Retries {
    /// The schedule of a subscription's or topic's `DeliveryPolicy` (its
    /// `healthyRetryPolicy`, or the http `defaultHealthyRetryPolicy`), AWS's default without.
    #[must_use]
    pub fn of(policy: Option<&str>) -> Self {
        let v: Option<serde_json::Value> = policy.and_then(|p| serde_json::from_str(p).ok());
        let retry = v.as_ref().and_then(|v| {
            v.get("healthyRetryPolicy")
                .or_else(|| v.pointer("/http/defaultHealthyRetryPolicy"))
        });
        let num = |k: &str, d: u64| {
            retry
                .and_then(|r| r.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(d)
        };
        Self {
            count: u32::try_from(num("numRetries", 3)).unwrap_or(3),
            delay_ms: num("minDelayTarget", 20) * 1000,
        }
    }
}

/// What one attempt came to.
enum Attempt {
    Delivered,
    /// A client-side error (4xx): not retried (§9).
    Refused(String),
    /// A server-side error or no answer: retried.
    Failed(String),
}

/// The worker.
pub struct SnsWorker {
    /// The engine whose deliveries it takes.
    pub engine: Engine,
    /// The server's clock (retry delays follow it).
    pub clock: Arc<dyn Clock>,
    /// Push targets, for `lambda` subscriptions.
    pub push: Arc<PushTargets>,
    /// Set to stop.
    pub stop: watch::Receiver<bool>,
}

impl SnsWorker {
    /// Runs until stopped: each delivery in a task of its own.
    pub async fn run(mut self) {
        let wake = self.engine.sns_wakeup();
        loop {
            for d in self.engine.take_sns_deliveries() {
                let (engine, clock, push) = (
                    self.engine.clone(),
                    Arc::clone(&self.clock),
                    Arc::clone(&self.push),
                );
                tokio::spawn(deliver(engine, clock, push, d));
            }
            tokio::select! {
                () = wake.notified() => {}
                // The engine's notifier is replaced when a failed disk is recovered: look anyway.
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = self.stop.changed() => return,
            }
            if *self.stop.borrow() {
                return;
            }
        }
    }
}

async fn deliver(engine: Engine, clock: Arc<dyn Clock>, push: Arc<PushTargets>, d: SnsDelivery) {
    let retries = Retries::of(d.delivery_policy.as_deref());
    let mut last = String::new();
    for attempt in 0..=retries.count {
        if attempt > 0 {
            wait_until(&*clock, clock.now_ms() + retries.delay_ms).await;
        }
        match tokio::time::timeout(ANSWER_WITHIN, once(&push, &d)).await {
            Ok(Attempt::Delivered) => return,
            Ok(Attempt::Refused(why)) => {
                last = why;
                break;
            }
            Ok(Attempt::Failed(why)) => last = why,
            Err(_) => last = format!("no answer within {ANSWER_WITHIN:?}"),
        }
    }
    tracing::info!(subscription = %d.subscription_arn, error = %last, "SNS delivery failed");
    if let Some(dlq) = &d.dead_letter_arn {
        let ctx = RequestContext::new("http://localhost", engine.default_scope());
        let ok = engine
            .sns_dead_letter(
                &ctx,
                dlq,
                d.dead_letter_body.clone(),
                d.dead_letter_attributes.clone(),
            )
            .await;
        if !ok {
            tracing::info!(dlq = %dlq, "SNS dead-letter queue refused the message");
        }
    }
}

/// Waits until the server's clock reads `due`: a clock moved forward ends the wait early.
async fn wait_until(clock: &dyn Clock, due: u64) {
    loop {
        let now = clock.now_ms();
        if now >= due {
            return;
        }
        tokio::time::sleep(Duration::from_millis((due - now).min(50))).await;
    }
}

async fn once(push: &PushTargets, d: &SnsDelivery) -> Attempt {
    match &d.target {
        SnsTarget::Http(url) => post(url, &d.headers, d.body.clone()).await,
        SnsTarget::Lambda(arn) => {
            let name = arn.rsplit(':').next().unwrap_or_default();
            let Some(t) = push.list().into_iter().find(|t| t.target.queue == name) else {
                return Attempt::Refused(format!(
                    "no push target for the queue {name} (the function's name)"
                ));
            };
            let event = d.body.clone().into_bytes();
            let answer = match (&t.target.url, t.target.command.is_empty()) {
                (Some(url), _) => match invoke::Endpoint::parse(url) {
                    Ok(e) => invoke::http(&e, event).await,
                    Err(e) => Err(e),
                },
                (None, false) => invoke::command(&t.target.command, event).await,
                (None, true) => Err("push target without a handler".into()),
            };
            match answer {
                Ok(a) if a.function_error.is_none() => Attempt::Delivered,
                Ok(a) => Attempt::Failed(format!("function error {:?}", a.function_error)),
                Err(e) => Attempt::Failed(e),
            }
        }
    }
}

/// POSTs `body` with `headers` to an `http://` URL.
async fn post(url: &str, headers: &[(String, String)], body: String) -> Attempt {
    let Some(rest) = url.strip_prefix("http://") else {
        return Attempt::Refused(format!(
            "{url}: only http:// endpoints can be reached (no TLS client)"
        ));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let authority = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let stream = match TcpStream::connect(authority.as_str()).await {
        Ok(s) => s,
        Err(e) => return Attempt::Failed(format!("connect {authority}: {e}")),
    };
    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    else {
        return Attempt::Failed(format!("handshake with {authority}"));
    };
    let driver = tokio::spawn(conn);
    let mut req = Request::post(path)
        .header(hyper::header::HOST, authority.as_str())
        .header(
            hyper::header::USER_AGENT,
            "Amazon Simple Notification Service Agent",
        )
        .header(hyper::header::ACCEPT_ENCODING, "gzip,deflate")
        .header(hyper::header::CONTENT_LENGTH, body.len());
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let Ok(req) = req.body(Full::new(Bytes::from(body))) else {
        driver.abort();
        return Attempt::Refused("the request could not be built".into());
    };
    let result = match sender.send_request(req).await {
        Ok(resp) => {
            let status = resp.status();
            let _ = resp.into_body().collect().await;
            if status.is_success() {
                Attempt::Delivered
            } else if status.is_client_error() {
                Attempt::Refused(format!("HTTP {}", status.as_u16()))
            } else {
                Attempt::Failed(format!("HTTP {}", status.as_u16()))
            }
        }
        Err(e) => Attempt::Failed(format!("POST {url}: {e}")),
    };
    driver.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_schedules_follow_the_delivery_policy() {
        assert_eq!(
            Retries::of(None),
            Retries {
                count: 3,
                delay_ms: 20_000
            }
        );
        let p = r#"{"healthyRetryPolicy":{"numRetries":1,"minDelayTarget":5}}"#;
        assert_eq!(
            Retries::of(Some(p)),
            Retries {
                count: 1,
                delay_ms: 5000
            }
        );
        let topic = r#"{"http":{"defaultHealthyRetryPolicy":{"numRetries":0,"minDelayTarget":1}}}"#;
        assert_eq!(Retries::of(Some(topic)).count, 0);
    }
}
