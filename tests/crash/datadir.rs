//! `--data-dir` that cannot be used: the built binary must refuse it at start-up with exit
//! code 1, within a few seconds, with a message on stderr that names the problem, and without
//! panicking. The cases: a regular file where the directory should be, a path under a regular
//! file, a database of another schema version, a corrupt database file, and a directory that a
//! running localsqs already holds. Plus the positive case: state survives a clean restart.
//!
//! Runs as root in CI, where permission bits do not stop writes, so "not writable" is made
//! with files where directories are expected.

use std::path::Path;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;
use redb::{ReadableDatabase, TableDefinition};

use crate::process::{Proc, client};

/// How long a refusing process may take to exit.
const REFUSE_WAIT: Duration = Duration::from_secs(5);

/// The table store.rs keeps the schema version in (`src/engine/store.rs`, `META`).
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");

/// Runs the binary on `dir` and expects a refusal: exit code 1 (not 101, a panic; not a
/// signal) within [`REFUSE_WAIT`], `needle` on stderr, and no panic message. Returns stderr.
async fn refuses(dir: &Path, needle: &str) -> String {
    let mut p = Proc::spawn(&["--data-dir".as_ref(), dir.as_os_str()]);
    let status = p.wait_exit_within(REFUSE_WAIT).await;
    let err = p.stderr();
    assert!(
        !err.contains("panicked"),
        "localsqs panicked on {}: {}",
        dir.display(),
        p.output()
    );
    assert_eq!(
        status.code(),
        Some(1),
        "localsqs on {} should exit with 1, got {status}; {}",
        dir.display(),
        p.output()
    );
    assert!(
        err.contains(needle),
        "stderr for {} should contain {needle:?}; {}",
        dir.display(),
        p.output()
    );
    err
}

/// Starts on `dir`, creates a queue so the database has content, and stops cleanly.
async fn populate(dir: &Path, queue: &str) {
    let mut p = Proc::start(dir).await;
    client(&p.endpoint())
        .create_queue()
        .queue_name(queue)
        .send()
        .await
        .expect("CreateQueue");
    p.stop().await;
}

#[tokio::test]
async fn a_regular_file_as_data_dir_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"not a directory").expect("write file");
    let err = refuses(&file, "is a file, not a directory").await;
    assert!(
        err.contains(&format!("--data-dir {}", file.display())),
        "the message should name the flag and the path: {err}"
    );
    assert_eq!(
        std::fs::read(&file).expect("file still there"),
        b"not a directory",
        "the file must be left alone"
    );
}

#[tokio::test]
async fn a_path_under_a_regular_file_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"not a directory").expect("write file");
    let err = refuses(&file.join("data"), "is a file, not a directory").await;
    assert!(
        err.contains(&format!(
            "{}: {} is a file",
            file.join("data").display(),
            file.display()
        )),
        "the message should name the file in the way: {err}"
    );
}

#[tokio::test]
async fn another_schema_version_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    populate(tmp.path(), "before-upgrade").await;
    let db_path = tmp.path().join("localsqs.redb");
    {
        let db = redb::Database::open(&db_path).expect("open the stopped server's database");
        let txn = db.begin_write().expect("write transaction");
        {
            let mut meta = txn.open_table(META).expect("meta table");
            meta.insert("schema_version", 999u32.to_be_bytes().as_slice())
                .expect("rewrite schema_version");
        }
        txn.commit().expect("commit");
    }
    let err = refuses(tmp.path(), "schema version 999").await;
    assert!(
        err.contains("localsqs.redb"),
        "the message should name the file: {err}"
    );
    // Refusing must not "upgrade" the file in place.
    let db = redb::Database::open(&db_path).expect("reopen");
    let txn = db.begin_read().expect("read transaction");
    let meta = txn.open_table(META).expect("meta table");
    let v = meta.get("schema_version").expect("get").expect("present");
    assert_eq!(v.value(), 999u32.to_be_bytes().as_slice());
}

#[tokio::test]
async fn a_corrupt_database_is_refused_without_a_panic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Deterministic garbage, large enough to look like a database with pages.
    let mut x: u32 = 0x1234_5678;
    let garbage: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x.to_le_bytes()[0]
        })
        .collect();
    std::fs::write(tmp.path().join("localsqs.redb"), &garbage).expect("write garbage");
    refuses(tmp.path(), "localsqs.redb").await;
    assert_eq!(
        std::fs::read(tmp.path().join("localsqs.redb")).expect("file still there"),
        garbage,
        "a corrupt file must be left as it was, for inspection"
    );
}

/// A real database whose header is intact but whose pages are overwritten: redb gets past the
/// magic number and meets the damage while reading its trees.
#[tokio::test]
async fn a_database_with_corrupt_pages_is_refused_without_a_panic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    populate(tmp.path(), "soon-corrupt").await;
    let db_path = tmp.path().join("localsqs.redb");
    let mut bytes = std::fs::read(&db_path).expect("read database");
    assert!(bytes.len() > 8192, "database unexpectedly small");
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i.wrapping_mul(131).wrapping_add(7) & 0xff) as u8;
    }
    std::fs::write(&db_path, &bytes).expect("write corrupted database");
    refuses(tmp.path(), "localsqs.redb").await;
}

#[tokio::test]
async fn a_data_dir_held_by_a_running_localsqs_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut first = Proc::start(tmp.path()).await;
    let c = client(&first.endpoint());
    c.create_queue()
        .queue_name("held")
        .send()
        .await
        .expect("CreateQueue");
    refuses(tmp.path(), "already in use").await;
    // The refused second process must not have disturbed the first.
    let urls = c.list_queues().send().await.expect("ListQueues");
    assert_eq!(urls.queue_urls().len(), 1, "{urls:?}");
    first.stop().await;
}

#[tokio::test]
async fn state_survives_a_clean_restart() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut p = Proc::start(tmp.path()).await;
    let c = client(&p.endpoint());
    let url = c
        .create_queue()
        .queue_name("survivor")
        .attributes(QueueAttributeName::VisibilityTimeout, "77")
        .send()
        .await
        .expect("CreateQueue")
        .queue_url
        .expect("QueueUrl");
    c.send_message()
        .queue_url(&url)
        .message_body("still here")
        .send()
        .await
        .expect("SendMessage");
    p.stop().await;

    let mut p = Proc::start(tmp.path()).await;
    let c = client(&p.endpoint());
    let listed = c.list_queues().send().await.expect("ListQueues");
    assert!(
        listed.queue_urls().iter().any(|u| u.ends_with("/survivor")),
        "the queue should be listed after a restart: {listed:?}"
    );
    let url = c
        .get_queue_url()
        .queue_name("survivor")
        .send()
        .await
        .expect("GetQueueUrl")
        .queue_url
        .expect("QueueUrl");
    let attrs = c
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("GetQueueAttributes");
    let attrs = attrs.attributes().expect("attributes");
    assert_eq!(
        attrs
            .get(&QueueAttributeName::VisibilityTimeout)
            .map(String::as_str),
        Some("77")
    );
    let got = c
        .receive_message()
        .queue_url(&url)
        .wait_time_seconds(0)
        .send()
        .await
        .expect("ReceiveMessage");
    let bodies: Vec<_> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["still here"]);
    p.stop().await;
}
