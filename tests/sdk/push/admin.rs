//! Push targets over `/_localsqs/push`, from the builder and the config file, and across a
//! reset.

use localsqs::push::PushTarget;
use serde_json::{Value, json};

use super::super::harness::{START_MS, TestServer};
use super::super::http::{exchange, get};
use super::handler::{Answer, Handler};
use super::{wait_counts, wait_invocations};

async fn call(t: &TestServer, method: &str, path: &str, body: &str) -> (u16, Value) {
    let resp = exchange(t.server.local_addr(), method, path, &[], body)
        .await
        .expect("answered");
    let v = serde_json::from_str(&resp.body).unwrap_or(Value::Null);
    (resp.status, v)
}

/// At most `MAX_TARGETS` targets at once: the next is refused with 400 until one is removed.
#[tokio::test]
async fn push_targets_are_bounded() {
    let t = TestServer::start().await;
    t.create_queue("many", &[]).await;
    let body =
        json!({ "queue": "many", "url": "http://127.0.0.1:9/", "max_concurrency": 1 }).to_string();
    for i in 1..=localsqs::push::MAX_TARGETS {
        let (status, v) = call(&t, "POST", "/_localsqs/push", &body).await;
        assert_eq!((status, &v), (200, &json!({ "id": format!("push-{i}") })));
    }
    let (status, v) = call(&t, "POST", "/_localsqs/push", &body).await;
    assert_eq!(
        (status, v["error"].as_str()),
        (
            400,
            Some("at most 100 push targets can be active; remove some first")
        )
    );
    let (status, _) = call(&t, "DELETE", "/_localsqs/push/push-7", "").await;
    assert_eq!(status, 200);
    let (status, v) = call(&t, "POST", "/_localsqs/push", &body).await;
    assert_eq!(status, 200, "room again after a removal: {v}");
    t.shutdown().await;
}

#[tokio::test]
async fn push_targets_are_added_listed_and_removed_over_http() {
    let t = TestServer::start().await;
    let url = t.create_queue("web", &[]).await;
    let h = Handler::start(|_, _| Answer::ok()).await;
    let body = json!({ "queue": "web", "url": h.url(), "max_concurrency": 1 }).to_string();
    let (status, v) = call(&t, "POST", "/_localsqs/push", &body).await;
    assert_eq!((status, &v), (200, &json!({ "id": "push-1" })));
    t.send(&url, "over http").await;
    wait_counts(&t, &url, (0, 0, 0)).await;
    wait_invocations(&t, "push-1", 1).await;

    let listed = get(t.server.local_addr(), "/_localsqs/push", &[])
        .await
        .expect("listed");
    let v: Value = serde_json::from_str(&listed.body).expect("json");
    let target = &v["targets"][0];
    assert_eq!(target["id"], "push-1");
    assert_eq!(target["queue"], "web");
    assert_eq!(target["url"], h.url());
    assert_eq!(target["batch_size"], 10);
    assert_eq!(target["max_concurrency"], 1);
    assert_eq!(target["invocations"], 1);
    assert_eq!(target["failures"], 0);
    let last = &target["last_invocations"][0];
    assert_eq!(last["at_ms"], START_MS);
    assert_eq!(last["batch_size"], 1);
    assert_eq!(last["outcome"], "success");

    let refused = [
        (
            r#"{"queue":"web","url":"http://h:1","bogus":1}"#,
            "not a push target",
        ),
        (
            r#"{"queue":"web","url":"http://h:1","batch_size":0}"#,
            "batch_size must be between 1 and 10000",
        ),
        (
            r#"{"queue":"nope","url":"http://h:1"}"#,
            "queue nope does not exist",
        ),
        (
            r#"{"queue":"web","url":"https://h"}"#,
            "https is not supported",
        ),
        (r#"{"queue":"web"}"#, "needs a url or a command"),
        (
            r#"{"queue":"web","url":"http://h:1","filter":{"body":{"k":[{"wildcard":"*"}]}}}"#,
            "unknown operator",
        ),
    ];
    for (body, want) in refused {
        let (status, v) = call(&t, "POST", "/_localsqs/push", body).await;
        assert_eq!(status, 400, "{body}: {v}");
        assert!(
            v["error"].as_str().is_some_and(|e| e.contains(want)),
            "{body}: {v}"
        );
    }
    assert_eq!(
        call(&t, "DELETE", "/_localsqs/push/push-1", "").await.0,
        200
    );
    let (status, v) = call(&t, "DELETE", "/_localsqs/push/push-1", "").await;
    assert_eq!(
        (status, v["error"].as_str()),
        (404, Some("no push target push-1"))
    );
    t.send(&url, "nobody reads me").await;
    let (status, _) = call(&t, "DELETE", "/_localsqs/push", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        t.counts(&url).await,
        (1, 0, 0),
        "a removed target reads no more"
    );
    assert_eq!(h.calls().len(), 1);
    t.shutdown().await;
}

#[tokio::test]
async fn reset_restores_the_builders_and_the_config_files_targets() {
    let h = Handler::start(|_, _| Answer::ok()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("push.toml");
    let config = format!(
        "[[queue]]\nname = \"declared\"\n\n[[queue.push]]\nurl = \"{}\"\nmax_concurrency = 1\nfilter = '{{\"body\": [\"keep\"]}}'\n",
        h.url()
    );
    std::fs::write(&path, config).expect("written");
    let t = TestServer::start_from(
        localsqs::Server::builder()
            .config_file(&path)
            .push(PushTarget::http("later", &h.url())),
    )
    .await;
    t.create_queue("other", &[]).await;
    t.server
        .push_targets()
        .add(PushTarget::http("other", &h.url()))
        .expect("valid");
    let queues = |t: &TestServer| -> Vec<String> {
        t.server
            .push_targets()
            .list()
            .into_iter()
            .map(|s| s.target.queue)
            .collect()
    };
    assert_eq!(queues(&t), ["later", "declared", "other"]);

    let (status, _) = call(&t, "POST", "/_localsqs/reset", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        queues(&t),
        ["later", "declared"],
        "run-time targets go, declared ones stay"
    );
    let declared = t.server.push_targets().list()[1].id.clone();
    let url = t.create_queue("declared", &[]).await;
    t.send(&url, "keep").await;
    t.send(&url, "drop").await;
    wait_counts(&t, &url, (0, 0, 0)).await;
    wait_invocations(&t, &declared, 1).await;
    // The builder's target waits for its queue to exist, then reads it.
    let later = t.create_queue("later", &[]).await;
    t.send(&later, "late").await;
    wait_counts(&t, &later, (0, 0, 0)).await;
    let mut bodies: Vec<String> = h
        .calls()
        .iter()
        .flat_map(super::handler::Call::bodies)
        .collect();
    bodies.sort();
    assert_eq!(bodies, ["keep", "late"]);
    t.shutdown().await;
}

#[tokio::test]
async fn an_invalid_declared_target_stops_the_start_with_its_queue_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            "[[queue.push]]\ncommand = [\"cat\"]\nbatch_size = 0\n",
            "queue jobs: push target: batch_size must be between 1 and 10000",
        ),
        (
            "[[queue.push]]\nqueue = \"elsewhere\"\ncommand = [\"cat\"]\n",
            "queue jobs: push target names another queue (elsewhere)",
        ),
        (
            "[[queue.push]]\nurl = \"ftp://x\"\n",
            "queue jobs: push target: url \"ftp://x\" must start with http://",
        ),
    ];
    for (push, want) in cases {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, format!("[[queue]]\nname = \"jobs\"\n\n{push}")).expect("written");
        let err = localsqs::Server::builder()
            .config_file(&path)
            .start()
            .await
            .expect_err("refused");
        assert_eq!(err.to_string(), want);
    }
}
