//! The holes load only hits by luck: a retried request acknowledged before its original's
//! commit, and a stale receipt handle deleting a message sent after a restart.

use std::time::Duration;

use aws_sdk_sqs::types::{QueueAttributeName, SendMessageBatchRequestEntry};

use crate::process::{Proc, client, peek};
use crate::{LOAD_STOP_WAIT, LONG_VISIBILITY};

/// Runs two copies of one request at once (a client retry racing its original) and returns
/// as soon as either is acknowledged: true then, false if both failed.
async fn first_ack<T, E>(
    a: impl Future<Output = Result<T, E>>,
    b: impl Future<Output = Result<T, E>>,
) -> bool {
    tokio::pin!(a, b);
    let (mut a_done, mut b_done) = (false, false);
    loop {
        tokio::select! {
            r = &mut a, if !a_done => {
                if r.is_ok() {
                    return true;
                }
                a_done = true;
            }
            r = &mut b, if !b_done => {
                if r.is_ok() {
                    return true;
                }
                b_done = true;
            }
            else => return false,
        }
    }
}

/// Attempts of the retry race below; each ends in a SIGKILL and a restart.
const TWIN_ATTEMPTS: usize = 8;
/// Bytes of one ballast message; ten of them fill a SendMessageBatch.
const BALLAST_BYTES: usize = 100_000;

/// A request that changes nothing because an identical request in flight already made the
/// change (a FIFO send deduplicated against its original, a second delete of one message) must
/// still not be acknowledged before that change is durable. Each attempt keeps the writer busy
/// with ballast batches, races two identical requests, SIGKILLs the server the moment either is
/// acknowledged, and checks after the restart that the acknowledged effect is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_request_is_acknowledged_only_once_its_effect_is_durable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Proc::start(dir.path()).await;
    let c = client(&server.endpoint());
    for (name, fifo) in [
        ("twins.fifo", true),
        ("twins-std", false),
        ("ballast", false),
    ] {
        let mut req = c.create_queue().queue_name(name);
        if fifo {
            req = req.attributes(QueueAttributeName::FifoQueue, "true");
        }
        req.send()
            .await
            .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"));
    }
    let mut raced = 0;
    for attempt in 0..TWIN_ATTEMPTS {
        let c = client(&server.endpoint());
        let fifo_url = format!("{}/000000000000/twins.fifo", server.endpoint());
        let std_url = format!("{}/000000000000/twins-std", server.endpoint());
        let ballast_url = format!("{}/000000000000/ballast", server.endpoint());
        let sends = attempt % 2 == 0;
        let body = format!("twin-{attempt}");
        // For the delete race: a message received (so it has a handle) before the race.
        let handle = if sends {
            String::new()
        } else {
            c.send_message()
                .queue_url(&std_url)
                .message_body(&body)
                .send()
                .await
                .expect("SendMessage");
            let got = c
                .receive_message()
                .queue_url(&std_url)
                .visibility_timeout(LONG_VISIBILITY)
                .wait_time_seconds(0)
                .send()
                .await
                .expect("ReceiveMessage");
            let m = got.messages().first().expect("the message just sent");
            assert_eq!(m.body(), Some(body.as_str()));
            m.receipt_handle().expect("handle").to_owned()
        };
        let ballast: Vec<_> = (0..4)
            .map(|b| {
                let c = c.clone();
                let url = ballast_url.clone();
                tokio::spawn(async move {
                    let entries = (0..10)
                        .map(|n| {
                            SendMessageBatchRequestEntry::builder()
                                .id(format!("b{n}"))
                                .message_body("x".repeat(BALLAST_BYTES))
                                .build()
                                .expect("entry")
                        })
                        .collect();
                    let _ = c
                        .send_message_batch()
                        .queue_url(url)
                        .set_entries(Some(entries))
                        .send()
                        .await;
                    b
                })
            })
            .collect();
        // Let the ballast reach the writer first, so the racing pair's commit waits behind it.
        tokio::time::sleep(Duration::from_millis(5)).await;
        let acked = if sends {
            let send = || {
                c.send_message()
                    .queue_url(&fifo_url)
                    .message_body(&body)
                    .message_group_id("g")
                    .message_deduplication_id(&body)
                    .send()
            };
            first_ack(send(), send()).await
        } else {
            let delete = || {
                c.delete_message()
                    .queue_url(&std_url)
                    .receipt_handle(&handle)
                    .send()
            };
            first_ack(delete(), delete()).await
        };
        server.kill9().await;
        for b in ballast {
            tokio::time::timeout(LOAD_STOP_WAIT, b)
                .await
                .expect("ballast stops")
                .expect("ballast task");
        }
        server = Proc::start(dir.path()).await;
        if !acked {
            continue;
        }
        raced += 1;
        if sends {
            let present = peek(server.port, &fifo_url).await;
            assert!(
                present.iter().any(|m| m.body == body),
                "attempt {attempt}: a SendMessage of {body:?} was acknowledged (one of two identical requests racing), but after SIGKILL and restart the message is gone"
            );
        } else {
            let present = peek(server.port, &std_url).await;
            assert!(
                !present.iter().any(|m| m.body == body),
                "attempt {attempt}: a DeleteMessage of {body:?} was acknowledged (one of two identical requests racing), but after SIGKILL and restart the message is back"
            );
        }
    }
    assert!(
        raced > 0,
        "no attempt got an acknowledgement before the kill"
    );
    server.stop().await;
}

/// A receipt handle of a deleted message must stay harmless after a restart: deleting with it
/// again (which standard queues accept, §6.8) must not remove a message sent later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_receipt_handle_deletes_nothing_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Proc::start(dir.path()).await;
    let c = client(&server.endpoint());
    let url = c
        .create_queue()
        .queue_name("stale")
        .send()
        .await
        .expect("CreateQueue")
        .queue_url
        .expect("QueueUrl");
    for body in ["first", "second"] {
        c.send_message()
            .queue_url(&url)
            .message_body(body)
            .send()
            .await
            .expect("SendMessage");
    }
    let got = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .visibility_timeout(LONG_VISIBILITY)
        .wait_time_seconds(0)
        .send()
        .await
        .expect("ReceiveMessage");
    let second = got
        .messages()
        .iter()
        .find(|m| m.body() == Some("second"))
        .expect("both messages received");
    let stale = second.receipt_handle().expect("handle").to_owned();
    c.delete_message()
        .queue_url(&url)
        .receipt_handle(&stale)
        .send()
        .await
        .expect("DeleteMessage");
    server.kill9().await;

    server = Proc::start(dir.path()).await;
    let c = client(&server.endpoint());
    c.send_message()
        .queue_url(&url)
        .message_body("third")
        .send()
        .await
        .expect("SendMessage after the restart");
    // Standard queues accept a repeated delete; whatever the answer, it must not hit "third".
    let _ = c
        .delete_message()
        .queue_url(&url)
        .receipt_handle(&stale)
        .send()
        .await;
    let bodies: Vec<String> = peek(server.port, &url)
        .await
        .into_iter()
        .map(|m| m.body)
        .collect();
    assert_eq!(
        bodies,
        ["first", "third"],
        "a delete with the stale handle of \"second\" removed another message"
    );
    server.stop().await;
}
