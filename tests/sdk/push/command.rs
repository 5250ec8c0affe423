//! Push targets that run a program: the event on standard input, the exit status and standard
//! output as the answer.

use std::path::Path;

use localsqs::push::PushTarget;
use serde_json::Value;

use super::super::harness::TestServer;
use super::handler::eventually;
use super::{wait_counts, wait_invocations};

/// The events a script appended to `path`, one JSON document per line.
fn events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each line is an event"))
        .collect()
}

/// Fails its first run (exit 3, a line on stderr), succeeds afterwards; logs every event.
const FAIL_ONCE: &str = r#"{ cat; echo; } >> "$0.events"
if [ -e "$0.failed" ]; then echo '{"batchItemFailures":[]}'; exit 0; fi
touch "$0.failed"; echo 'handler exploded' >&2; exit 3"#;

#[tokio::test]
async fn a_command_reads_the_event_on_stdin_and_its_exit_status_decides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("handler");
    let t = TestServer::start().await;
    let url = t.create_queue("scripted", &[]).await;
    let target = PushTarget {
        report_batch_item_failures: true,
        ..PushTarget::command(
            "scripted",
            ["sh", "-c", FAIL_ONCE, base.to_str().expect("utf-8 path")],
        )
    };
    let id = t.server.push_targets().add(target).expect("valid");
    let message_id = t.send(&url, "hello").await;
    let s = wait_invocations(&t, &id, 1).await;
    let last = &s.stats.last_invocations[0];
    assert_eq!(last.outcome.as_str(), "failure");
    assert_eq!(
        last.error.as_deref(),
        Some("exit status 3: handler exploded")
    );
    wait_counts(&t, &url, (0, 1, 0)).await;
    t.advance_secs(30);
    wait_invocations(&t, &id, 2).await;
    wait_counts(&t, &url, (0, 0, 0)).await;

    let seen = events(&base.with_extension("events"));
    assert_eq!(seen.len(), 2);
    for (n, event) in seen.iter().enumerate() {
        let r = &event["Records"][0];
        assert_eq!(r["messageId"], message_id.as_str());
        assert_eq!(r["body"], "hello");
        assert_eq!(r["eventSource"], "aws:sqs");
        assert_eq!(
            r["attributes"]["ApproximateReceiveCount"],
            (n + 1).to_string()
        );
    }
    t.shutdown().await;
}

/// Logs a line, then reports every record whose body is "bad" as failed.
const PARTIAL: &str = "import json, sys
event = json.load(sys.stdin)
print('handling', len(event['Records']), 'records')
failed = [{'itemIdentifier': r['messageId']} for r in event['Records'] if r['body'] == 'bad']
print(json.dumps({'batchItemFailures': failed}))";

#[tokio::test]
async fn a_python_handler_reports_batch_item_failures_on_stdout() {
    let t = TestServer::start().await;
    let url = t.create_queue("py", &[]).await;
    t.send(&url, "good").await;
    let bad = t.send(&url, "bad").await;
    t.send(&url, "fine").await;
    let target = PushTarget {
        report_batch_item_failures: true,
        max_concurrency: 1,
        ..PushTarget::command("py", ["python3", "-c", PARTIAL])
    };
    let id = t.server.push_targets().add(target).expect("valid");
    let s = wait_invocations(&t, &id, 1).await;
    let last = &s.stats.last_invocations[0];
    assert_eq!(last.outcome.as_str(), "partial", "{last:?}");
    assert_eq!(last.failed_items, [bad]);
    assert_eq!(s.stats.messages_deleted, 2);
    wait_counts(&t, &url, (0, 1, 0)).await;
    t.shutdown().await;
}

#[tokio::test]
async fn the_config_file_declares_a_command_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("event.json");
    let config = format!(
        "[[queue]]\nname = \"cfg\"\n\n[[queue.push]]\ncommand = [\"sh\", \"-c\", \"cat > '{}'\"]\nbatch_size = 5\n",
        out.display()
    );
    let path = dir.path().join("push.toml");
    std::fs::write(&path, config).expect("written");
    let t = TestServer::start_from(localsqs::Server::builder().config_file(&path)).await;
    let listed = t.server.push_targets().list();
    assert_eq!(listed[0].target.queue, "cfg");
    assert_eq!(listed[0].target.batch_size, 5);
    let url = t.create_queue("cfg", &[]).await;
    t.send(&url, "from the config").await;
    wait_counts(&t, &url, (0, 0, 0)).await;
    let event = eventually("the event file", || {
        let e = events(&out);
        async move { e.into_iter().next() }
    })
    .await;
    assert_eq!(event["Records"][0]["body"], "from the config");
    t.shutdown().await;
}
