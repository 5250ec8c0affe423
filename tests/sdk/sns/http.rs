//! http subscriptions (docs/sns.md §5.4, §7.5, §9): the confirmation flow with a SubscribeURL
//! pointing back at the server, notifications with SNS's headers, retries on the controllable
//! clock and the dead-letter queue for an endpoint that keeps failing.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{bodies, create_topic, queue, sns};
use crate::harness::{HANG_GUARD, TestServer};

/// One POST an endpoint received: its headers (lower-case names) and body.
#[derive(Debug, Clone)]
struct Posted {
    headers: Vec<(String, String)>,
    body: String,
}

impl Posted {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A local endpoint answering every request with `status`, recording what it got.
async fn endpoint(status: Arc<AtomicU16>) -> (String, Arc<Mutex<Vec<Posted>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got: Arc<Mutex<Vec<Posted>>> = Arc::default();
    let seen = Arc::clone(&got);
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let (seen, status) = (Arc::clone(&seen), Arc::clone(&status));
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body_at) = loop {
                    let Ok(n) = s.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break (String::from_utf8_lossy(&buf[..i]).into_owned(), i + 4);
                    }
                };
                let headers: Vec<(String, String)> = head
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                let len: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                while buf.len() < body_at + len {
                    let Ok(n) = s.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let body = String::from_utf8_lossy(&buf[body_at..]).into_owned();
                seen.lock().unwrap().push(Posted { headers, body });
                let code = status.load(Ordering::SeqCst);
                let _ = s
                    .write_all(
                        format!(
                            "HTTP/1.1 {code} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        )
                        .as_bytes(),
                    )
                    .await;
            });
        }
    });
    (url, got)
}

/// Waits (bounded) until the endpoint has received `n` requests.
async fn received(got: &Mutex<Vec<Posted>>, n: usize) -> Vec<Posted> {
    tokio::time::timeout(HANG_GUARD, async {
        loop {
            let now = got.lock().unwrap().clone();
            if now.len() >= n {
                return now;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the endpoint never got {n} requests"))
}

#[tokio::test]
async fn http_subscriptions_confirm_through_the_subscribe_url_and_get_notifications() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "hooks").await;
    let status = Arc::new(AtomicU16::new(200));
    let (url, got) = endpoint(Arc::clone(&status)).await;
    let sub = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("http")
        .endpoint(&url)
        .send()
        .await
        .unwrap();
    assert_eq!(sub.subscription_arn(), Some("pending confirmation"));
    let confirm = received(&got, 1).await.remove(0);
    assert_eq!(
        confirm.header("x-amz-sns-message-type"),
        Some("SubscriptionConfirmation")
    );
    assert_eq!(confirm.header("x-amz-sns-topic-arn"), Some(topic.as_str()));
    assert!(confirm.header("x-amz-sns-subscription-arn").is_none());
    assert_eq!(
        confirm.header("user-agent"),
        Some("Amazon Simple Notification Service Agent")
    );
    let v: Value = serde_json::from_str(&confirm.body).unwrap();
    assert_eq!(v["Type"], "SubscriptionConfirmation");
    assert_eq!(v["Signature"].as_str().map(str::len), Some(344));
    let subscribe_url = v["SubscribeURL"].as_str().unwrap();
    let path = subscribe_url
        .strip_prefix(&t.server.endpoint())
        .expect("points back here");
    let r = crate::http::get(t.server.local_addr(), path, &[])
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body
            .contains("<ConfirmSubscriptionResult><SubscriptionArn>"),
        "{}",
        r.body
    );

    let id = sns
        .publish()
        .topic_arn(&topic)
        .message("ping")
        .send()
        .await
        .unwrap()
        .message_id
        .unwrap();
    let n = received(&got, 2).await.remove(1);
    assert_eq!(n.header("x-amz-sns-message-type"), Some("Notification"));
    assert_eq!(n.header("x-amz-sns-message-id"), Some(id.as_str()));
    assert_eq!(n.header("content-type"), Some("text/plain; charset=UTF-8"));
    let v: Value = serde_json::from_str(&n.body).unwrap();
    assert_eq!(v["Message"], "ping");
    t.server.shutdown().await;
}

#[tokio::test]
async fn a_failing_endpoint_is_retried_on_the_clock_then_dead_lettered() {
    let t = TestServer::start().await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "flaky").await;
    let (dlq_url, dlq) = queue(&t, "hooks-dlq").await;
    let status = Arc::new(AtomicU16::new(200));
    let (url, got) = endpoint(Arc::clone(&status)).await;
    let sub = sns
        .subscribe()
        .topic_arn(&topic)
        .protocol("http")
        .endpoint(&url)
        .return_subscription_arn(true)
        .attributes(
            "RedrivePolicy",
            format!(r#"{{"deadLetterTargetArn":"{dlq}"}}"#),
        )
        .send()
        .await
        .unwrap()
        .subscription_arn
        .unwrap();
    let v: Value = serde_json::from_str(&received(&got, 1).await[0].body).unwrap();
    sns.confirm_subscription()
        .topic_arn(&topic)
        .token(v["Token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    status.store(500, Ordering::SeqCst);
    sns.publish()
        .topic_arn(&topic)
        .message("lost")
        .send()
        .await
        .unwrap();
    // The first attempt, then three retries 20 s apart on the server's clock, which only the
    // test moves: it keeps moving it until the endpoint has seen all four.
    tokio::time::timeout(HANG_GUARD, async {
        while got.lock().unwrap().len() < 5 {
            t.advance_secs(20);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("four attempts");
    let dead = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let b = bodies(&t, &dlq_url).await;
            if !b.is_empty() {
                return b;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the message reaches the dead-letter queue");
    let v: Value = serde_json::from_str(&dead[0]).unwrap();
    assert_eq!(v["Message"], "lost");
    assert!(v["UnsubscribeURL"].as_str().unwrap().ends_with(&sub));
    assert_eq!(
        got.lock().unwrap().len(),
        5,
        "no attempt after the last retry"
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn lambda_subscriptions_reach_a_push_targets_handler_in_lambdas_sns_shape() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("event.json");
    let script = format!("cat > {}", out.display());
    let target = localsqs::push::PushTarget::command("fn", ["sh", "-c", script.as_str()]);
    let t = TestServer::start_from(localsqs::Server::builder().push(target)).await;
    queue(&t, "fn").await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "to-lambda").await;
    let function = "arn:aws:lambda:us-east-1:000000000000:function:fn";
    let sub = super::subscribe_to(&sns, &topic, "lambda", function).await;
    sns.publish()
        .topic_arn(&topic)
        .message("hi")
        .send()
        .await
        .unwrap();
    let text = tokio::time::timeout(HANG_GUARD, async {
        loop {
            if let Ok(s) = std::fs::read_to_string(&out)
                && s.ends_with('}')
            {
                return s;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the handler ran");
    let v: Value = serde_json::from_str(&text).unwrap();
    let r = &v["Records"][0];
    assert_eq!(r["EventSource"], "aws:sns");
    assert_eq!(r["EventSubscriptionArn"], sub);
    assert_eq!(r["Sns"]["Message"], "hi");
    assert_eq!(r["Sns"]["Subject"], Value::Null);
    assert!(
        r["Sns"]["SigningCertUrl"]
            .as_str()
            .unwrap()
            .ends_with(".pem")
    );
    t.server.shutdown().await;
}

#[tokio::test]
async fn under_sigv4_sns_is_signed_for_sns_and_its_links_are_followed_unsigned() {
    let creds = localsqs::Credentials::parse(["test:test"]).expect("parses");
    let t = TestServer::start_from(localsqs::Server::builder().sigv4(creds)).await;
    let sns = sns(&t);
    let topic = create_topic(&sns, "signed-hooks").await;
    let wrong = {
        let conf = aws_sdk_sns::Config::builder()
            .endpoint_url(t.server.endpoint())
            .region(aws_sdk_sns::config::Region::new("us-east-1"))
            .credentials_provider(aws_credential_types::Credentials::new(
                "test", "wrong", None, None, "static",
            ))
            .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
            .build();
        aws_sdk_sns::Client::from_conf(conf)
    };
    let err = wrong
        .list_topics()
        .send()
        .await
        .expect_err("a wrong secret");
    assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(403));
    let status = Arc::new(AtomicU16::new(200));
    let (url, got) = endpoint(Arc::clone(&status)).await;
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("http")
        .endpoint(&url)
        .send()
        .await
        .unwrap();
    let confirm = received(&got, 1).await.remove(0);
    let v: Value = serde_json::from_str(&confirm.body).unwrap();
    let path = v["SubscribeURL"]
        .as_str()
        .unwrap()
        .strip_prefix(&t.server.endpoint())
        .expect("points back here")
        .to_owned();
    let r = crate::http::get(t.server.local_addr(), &path, &[])
        .await
        .unwrap();
    assert_eq!(
        r.status, 200,
        "followed unsigned, as AWS serves it: {}",
        r.body
    );
    let other = crate::http::get(t.server.local_addr(), "/?Action=ListTopics", &[])
        .await
        .unwrap();
    assert_eq!(
        other.status, 403,
        "any other unsigned request: {}",
        other.body
    );
    t.server.shutdown().await;
}
