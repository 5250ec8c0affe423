//! Moving from another emulator: ElasticMQ's documented config (every queue key, the aws
//! block, copyTo/moveTo refused by name), regions that do not scope queues (`--regions any`,
//! ElasticMQ's way) and a miss that says where the queue is, LocalStack's init hooks and its
//! `/_localstack/init` and `/_localstack/info`, and `/_localsqs/about`.

use std::path::{Path, PathBuf};

use aws_sdk_sqs::types::QueueAttributeName as A;
use localsqs::Regions;

use super::harness::{bodies, client_config, create_queue_on, expect_error};
use super::http::get;

/// ElasticMQ's documented example config (`tests/sdk/migrate/elasticmq-readme.conf`).
fn readme_conf() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/migrate/elasticmq-readme.conf");
    std::fs::read_to_string(path).expect("the fixture")
}

/// A client signing for `region` with access key `key`.
fn client_as(endpoint: &str, region: &str, key: &str) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::from_conf(client_config(endpoint, region, key, "secret").build())
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path
}

async fn attrs(sqs: &aws_sdk_sqs::Client, url: &str) -> std::collections::HashMap<A, String> {
    sqs.get_queue_attributes()
        .queue_url(url)
        .attribute_names(A::All)
        .send()
        .await
        .expect("attributes")
        .attributes()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn elasticmqs_documented_config_is_refused_by_the_key_it_cannot_honour() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "elasticmq.conf", &readme_conf());
    let err = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect_err("copyTo cannot be honoured")
        .to_string();
    let line = readme_conf()
        .lines()
        .position(|l| l.trim_start().starts_with("copyTo"))
        .expect("the fixture has copyTo")
        + 1;
    assert!(
        err.contains(&format!(
            "line {line}: queues.queue1.copyTo: ElasticMQ's copyTo"
        )),
        "{err}"
    );
}

#[tokio::test]
async fn elasticmqs_documented_config_without_copy_to_and_move_to_holds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text: String = readme_conf()
        .lines()
        .filter(|l| !l.trim_start().starts_with("copyTo") && !l.trim_start().starts_with("moveTo"))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = write(dir.path(), "elasticmq.conf", &text);
    let server = localsqs::Server::builder()
        .config_file(&path)
        .start()
        .await
        .expect("fifo = false and contentBasedDeduplication = false are fine");
    // A client of the usual kind: key `test`, its own region. ElasticMQ ignores both.
    let sqs = client_as(&server.endpoint(), "us-east-1", "test");
    let mut listed: Vec<String> = sqs
        .list_queues()
        .send()
        .await
        .expect("lists")
        .queue_urls()
        .to_vec();
    listed.sort();
    let ep = server.endpoint();
    assert_eq!(
        listed,
        [
            format!("{ep}/123456789012/audit-queue-name"),
            format!("{ep}/123456789012/queue1"),
            format!("{ep}/123456789012/queue1-dead-letters"),
            format!("{ep}/123456789012/redirect-queue-name"),
        ],
        "the aws block's account is the server's, and every declared queue is there"
    );
    // ElasticMQ's own URL form addresses it too.
    let url = format!("{ep}/queue/queue1");
    let a = attrs(&sqs, &url).await;
    assert_eq!(a.get(&A::VisibilityTimeout).map(String::as_str), Some("10"));
    assert_eq!(a.get(&A::DelaySeconds).map(String::as_str), Some("5"));
    assert_eq!(
        a.get(&A::ReceiveMessageWaitTimeSeconds).map(String::as_str),
        Some("0")
    );
    assert_eq!(
        a.get(&A::QueueArn).map(String::as_str),
        Some("arn:aws:sqs:eu-west-1:123456789012:queue1"),
        "the aws block's region is the server's"
    );
    assert_eq!(a.get(&A::FifoQueue), None, "a standard queue");
    let redrive = a.get(&A::RedrivePolicy).cloned().unwrap_or_default();
    assert!(
        redrive.contains("arn:aws:sqs:eu-west-1:123456789012:queue1-dead-letters")
            && redrive.contains("\"maxReceiveCount\":3"),
        "{redrive}"
    );
    let tags = sqs
        .list_queue_tags()
        .queue_url(&url)
        .send()
        .await
        .expect("tags")
        .tags()
        .cloned()
        .unwrap_or_default();
    assert_eq!(tags.get("tag1").map(String::as_str), Some("tagged1"));
    assert_eq!(tags.get("tag2").map(String::as_str), Some("tagged2"));
    // Whatever region a client signs for, the queues are found (ElasticMQ's way, by default
    // with its config).
    let elsewhere = client_as(&server.endpoint(), "ap-south-1", "test");
    elsewhere
        .send_message()
        .queue_url(&url)
        .message_body("hi")
        .send()
        .await
        .expect("found from another region");
    server.advance(std::time::Duration::from_secs(5)); // delay = 5 seconds
    let got = sqs
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["hi"]);
    server.shutdown().await;
}

#[tokio::test]
async fn a_flag_beats_the_elasticmq_config_and_says_where_the_queue_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "elasticmq.conf",
        "queues { orders { } }\naws { region = eu-west-1 }\n",
    );
    let server = localsqs::Server::builder()
        .config_file(&path)
        .regions(Regions::Scoped)
        .start()
        .await
        .expect("starts");
    let us = client_as(&server.endpoint(), "us-east-1", "test");
    let e = expect_error(
        "GetQueueUrl from another region",
        us.get_queue_url().queue_name("orders").send().await,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        None,
    );
    // AWS's exact message; localsqs's explanation travels in the x-localsqs-hint header.
    assert_eq!(
        e.meta().message(),
        Some("The specified queue does not exist.")
    );
    let hint = raw_hint(&server, "us-east-1", "orders").await;
    assert!(
        hint.starts_with("(localsqs: a queue named orders exists in account 000000000000, region eu-west-1; this request acts in account 000000000000, region us-east-1."),
        "{hint}"
    );
    assert!(hint.contains("--regions any"), "{hint}");
    let eu = client_as(&server.endpoint(), "eu-west-1", "test");
    eu.get_queue_url()
        .queue_name("orders")
        .send()
        .await
        .expect("there in eu-west-1");
    server.shutdown().await;
}

#[tokio::test]
async fn a_miss_names_the_account_that_holds_the_name() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let other = client_as(&server.endpoint(), "us-east-1", "111122223333");
    create_queue_on(&other, "billing").await;
    let mine = client_as(&server.endpoint(), "us-east-1", "test");
    let e = expect_error(
        "another account's queue",
        mine.get_queue_url().queue_name("billing").send().await,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        None,
    );
    assert_eq!(
        e.meta().message(),
        Some("The specified queue does not exist.")
    );
    let hint = raw_hint(&server, "us-east-1", "billing").await;
    assert!(
        hint.contains("exists in account 111122223333, region us-east-1")
            && hint.contains("access key id"),
        "{hint}"
    );
    // A name held nowhere keeps AWS's text alone.
    expect_error(
        "nowhere",
        mine.get_queue_url().queue_name("nowhere").send().await,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
        Some("The specified queue does not exist."),
    );
    server.shutdown().await;
}

#[tokio::test]
async fn regions_any_finds_queues_by_account_and_name() {
    let server = localsqs::Server::builder()
        .regions(Regions::Any)
        .start()
        .await
        .expect("starts");
    let eu = client_as(&server.endpoint(), "eu-west-1", "test");
    let us = client_as(&server.endpoint(), "us-east-1", "test");
    let url = create_queue_on(&eu, "orders").await;
    assert_eq!(
        create_queue_on(&us, "orders").await,
        url,
        "the same queue, not a second one in another region"
    );
    let a = attrs(&us, &url).await;
    assert_eq!(
        a.get(&A::QueueArn).map(String::as_str),
        Some("arn:aws:sqs:us-east-1:000000000000:orders"),
        "new queues go to the configured region"
    );
    let listed = eu.list_queues().send().await.expect("lists");
    assert_eq!(listed.queue_urls(), std::slice::from_ref(&url));
    us.send_message()
        .queue_url(&url)
        .message_body("one")
        .send()
        .await
        .expect("sends");
    let got = eu
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("receives");
    assert_eq!(bodies(got.messages()), ["one"]);
    server.shutdown().await;
}

#[tokio::test]
async fn regions_any_finds_a_queue_declared_in_another_region() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "queues.conf",
        "[[queue]]\nname = \"far\"\nregion = \"ap-south-1\"\n",
    );
    let server = localsqs::Server::builder()
        .config_file(&path)
        .regions(Regions::Any)
        .start()
        .await
        .expect("a TOML file named .conf is read as TOML");
    let sqs = client_as(&server.endpoint(), "us-east-1", "test");
    let url = sqs
        .get_queue_url()
        .queue_name("far")
        .send()
        .await
        .expect("found in ap-south-1")
        .queue_url
        .unwrap_or_default();
    let a = attrs(&sqs, &url).await;
    assert_eq!(
        a.get(&A::QueueArn).map(String::as_str),
        Some("arn:aws:sqs:ap-south-1:000000000000:far")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn localstack_status_endpoints_and_about() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    server.init_done().await;
    let addr = server.local_addr();
    let init = get(addr, "/_localstack/init", &[]).await.expect("answered");
    assert_eq!(init.status, 200);
    let v: serde_json::Value = serde_json::from_str(&init.body).expect("json");
    assert_eq!(
        v,
        serde_json::json!({
            "completed": {"BOOT": true, "START": true, "READY": true, "SHUTDOWN": false},
            "scripts": [],
        })
    );
    let ready = get(addr, "/_localstack/init/ready", &[])
        .await
        .expect("answered");
    let v: serde_json::Value = serde_json::from_str(&ready.body).expect("json");
    assert_eq!(v, serde_json::json!({"completed": true, "scripts": []}));
    let bad = get(addr, "/_localstack/init/later", &[])
        .await
        .expect("answered");
    assert_eq!(bad.status, 404);
    let info = get(addr, "/_localstack/info", &[]).await.expect("answered");
    assert_eq!(info.status, 200);
    let v: serde_json::Value = serde_json::from_str(&info.body).expect("json");
    for key in [
        "version",
        "edition",
        "is_license_activated",
        "session_id",
        "machine_id",
        "system",
        "is_docker",
        "server_time_utc",
        "uptime",
    ] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    assert_eq!(v["is_license_activated"], false);
    let about = get(addr, "/_localsqs/about", &[]).await.expect("answered");
    let v: serde_json::Value = serde_json::from_str(&about.body).expect("json");
    assert_eq!(v["server"], "localsqs");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["mode"], "memory");
    assert_eq!(v["data_dir"], serde_json::Value::Null);
    assert_eq!(v["regions"], "scoped");
    server.shutdown().await;
}

#[tokio::test]
async fn about_and_info_are_guarded_and_init_is_not() {
    let server = localsqs::Server::builder()
        .admin_token("sesame")
        .start()
        .await
        .expect("starts");
    let addr = server.local_addr();
    for (path, status) in [
        ("/_localsqs/about", 401),
        ("/_localstack/info", 401),
        ("/_localstack/init", 200),
        ("/_localstack/init/ready", 200),
    ] {
        let r = get(addr, path, &[]).await.expect("answered");
        assert_eq!(r.status, status, "{path}: {}", r.body);
    }
    let r = get(
        addr,
        "/_localsqs/about",
        &[("Authorization", "Bearer sesame")],
    )
    .await
    .expect("answered");
    assert_eq!(r.status, 200, "{}", r.body);
    server.shutdown().await;
}

/// A `ready.d` that creates a queue over HTTP (python3, as the AWS CLI is not always at hand
/// here: the compat suite runs `awslocal` itself), checks what the hooks are told, fails on
/// purpose, and is not executable; and a `shutdown.d` that leaves a mark.
#[cfg(unix)]
#[tokio::test]
async fn init_hooks_run_in_order_with_the_endpoint_and_survive_failures() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for stage in ["boot.d", "ready.d", "shutdown.d"] {
        std::fs::create_dir(root.join(stage)).expect("mkdir");
    }
    let mark = root.join("marks");
    let script = |path: &Path, body: &str, mode: u32| {
        std::fs::write(path, body).expect("writes");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    let m = mark.display();
    script(
        &root.join("boot.d/01-boot.sh"),
        &format!("#!/bin/sh\necho \"boot ${{AWS_ENDPOINT_URL:-none}}\" >> {m}\n"),
        0o755,
    );
    script(
        &root.join("ready.d/01-create.sh"),
        &format!(
            r#"#!/bin/sh
set -e
command -v awslocal >/dev/null
test "$AWS_ENDPOINT_URL" = "$AWS_ENDPOINT_URL_SQS"
test -n "$AWS_ACCESS_KEY_ID" && test -n "$AWS_SECRET_ACCESS_KEY"
echo "ready $AWS_DEFAULT_REGION" >> {m}
python3 -c 'import os, urllib.request; urllib.request.urlopen(urllib.request.Request(os.environ["AWS_ENDPOINT_URL"] + "/", data=b"Action=CreateQueue&QueueName=from-init", headers={{"Content-Type": "application/x-www-form-urlencoded"}})).read()'
echo "created" >> {m}
"#
        ),
        0o755,
    );
    script(
        &root.join("ready.d/02-fails.sh"),
        "#!/bin/sh\necho oops >&2\nexit 3\n",
        0o755,
    );
    script(
        &root.join("ready.d/03-not-executable.sh"),
        "#!/bin/sh\nexit 0\n",
        0o644,
    );
    script(
        &root.join("ready.d/04-after.sh"),
        &format!("#!/bin/sh\necho after >> {m}\n"),
        0o755,
    );
    std::fs::write(root.join("ready.d/notes.txt"), "not a script").expect("writes");
    script(
        &root.join("shutdown.d/01-bye.sh"),
        &format!("#!/bin/sh\necho bye >> {m}\n"),
        0o755,
    );
    let server = localsqs::Server::builder()
        .init_dir(root)
        .start()
        .await
        .expect("starts");
    server.init_done().await;
    let sqs = client_as(&server.endpoint(), "us-east-1", "test");
    sqs.get_queue_url()
        .queue_name("from-init")
        .send()
        .await
        .expect("the ready.d script created it");
    let init = get(server.local_addr(), "/_localstack/init", &[])
        .await
        .expect("answered");
    let v: serde_json::Value = serde_json::from_str(&init.body).expect("json");
    let states: Vec<(String, String, String)> = v["scripts"]
        .as_array()
        .expect("scripts")
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap_or_default().to_owned(),
                s["name"].as_str().unwrap_or_default().to_owned(),
                s["state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expect = |stage: &str, name: &str, state: &str| {
        (stage.to_owned(), name.to_owned(), state.to_owned())
    };
    assert_eq!(
        states,
        [
            expect("BOOT", "01-boot.sh", "SUCCESSFUL"),
            expect("READY", "01-create.sh", "SUCCESSFUL"),
            expect("READY", "02-fails.sh", "ERROR"),
            expect("READY", "03-not-executable.sh", "ERROR"),
            expect("READY", "04-after.sh", "SUCCESSFUL"),
            expect("SHUTDOWN", "01-bye.sh", "UNKNOWN"),
        ]
    );
    assert_eq!(v["completed"]["READY"], true);
    assert_eq!(v["completed"]["SHUTDOWN"], false);
    server.shutdown().await;
    let marks = std::fs::read_to_string(&mark).expect("marks");
    let lines: Vec<&str> = marks.lines().collect();
    assert_eq!(
        lines,
        ["boot none", "ready us-east-1", "created", "after", "bye"],
        "boot.d runs before the port is known (port 0), the others in order"
    );
}

/// The `x-localsqs-hint` header of a GetQueueUrl for `name`, signed for `region` (raw, as the
/// SDK does not surface headers of modeled errors).
async fn raw_hint(server: &localsqs::RunningServer, region: &str, name: &str) -> String {
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential=test/20261201/{region}/sqs/aws4_request, SignedHeaders=host, Signature=0"
    );
    let r = crate::http::exchange(
        server.local_addr(),
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-amz-json-1.0"),
            ("X-Amz-Target", "AmazonSQS.GetQueueUrl"),
            ("Authorization", auth.as_str()),
        ],
        &format!("{{\"QueueName\":\"{name}\"}}"),
    )
    .await
    .expect("answered");
    r.header("x-localsqs-hint").unwrap_or_default().to_owned()
}
