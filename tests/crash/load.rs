//! The load of the crash tests: senders, receivers and deleters on a standard and a FIFO queue,
//! each booking what it tried and what was acknowledged in the [`Ledger`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, MessageSystemAttributeName, SendMessageBatchRequestEntry,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::ledger::{
    Acked, Ledger, SharedLedger, delete_failed, failure, fifo_body, parse_fifo_body,
    record_batch_sends, stop_on, with,
};
use crate::process::client;
use crate::verify::Urls;
use crate::{LOAD_STOP_WAIT, LONG_VISIBILITY};

/// Standard-queue sender tasks.
const STD_SENDERS: usize = 3;
/// FIFO groups per load phase, one sender task each. Every phase uses fresh groups, so groups
/// left locked by messages in flight at a kill do not starve the next phase.
const FIFO_GROUPS: usize = 4;
/// Deleter tasks per queue.
const DELETERS: usize = 2;

/// A received message on its way to a deleter.
pub struct ToDelete {
    message_id: String,
    handle: String,
}

/// The load tasks of one phase.
pub struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts senders, receivers and deleters on both queues against `endpoint`.
    pub fn start(endpoint: &str, phase: usize, urls: &Urls, ledger: &SharedLedger) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let c = client(endpoint);
        let mut tasks = Vec::new();
        for s in 0..STD_SENDERS {
            tasks.push(tokio::spawn(std_sender(
                c.clone(),
                urls.std.clone(),
                format!("std/p{phase}s{s}"),
                ledger.clone(),
                stop.clone(),
            )));
        }
        for g in 0..FIFO_GROUPS {
            tasks.push(tokio::spawn(fifo_sender(
                c.clone(),
                urls.fifo.clone(),
                format!("p{phase}g{g}"),
                ledger.clone(),
                stop.clone(),
            )));
        }
        for (url, fifo) in [(&urls.std, false), (&urls.fifo, true)] {
            let mut to_deleters = Vec::new();
            for _ in 0..DELETERS {
                let (tx, rx) = mpsc::unbounded_channel();
                to_deleters.push(tx);
                tasks.push(tokio::spawn(deleter(
                    c.clone(),
                    url.clone(),
                    fifo,
                    rx,
                    ledger.clone(),
                )));
            }
            tasks.push(tokio::spawn(receiver(
                c.clone(),
                url.clone(),
                fifo,
                to_deleters,
                ledger.clone(),
                stop.clone(),
            )));
        }
        Load { stop, tasks }
    }

    /// Tells every task to stop and waits (bounded) until they have.
    pub async fn finish(self) {
        self.stop.store(true, Ordering::SeqCst);
        let all = async {
            for t in self.tasks {
                t.await.expect("load task panicked");
            }
        };
        tokio::time::timeout(LOAD_STOP_WAIT, all)
            .await
            .expect("load tasks stop once the server is gone");
    }
}

/// Sends unique bodies to the standard queue: mostly SendMessage (every 7th with a delay, so
/// delayed messages cross restarts too), every fourth request a SendMessageBatch of five.
pub async fn std_sender(
    c: Client,
    url: String,
    prefix: String,
    ledger: SharedLedger,
    stop: Arc<AtomicBool>,
) {
    let mut i = 0usize;
    let mut request = 0usize;
    while !stop.load(Ordering::SeqCst) {
        request += 1;
        if request.is_multiple_of(4) {
            let bodies: Vec<String> = (i..i + 5).map(|n| format!("{prefix}/{n}")).collect();
            i += 5;
            with(&ledger, |l| bodies.iter().for_each(|b| l.tried_send(b)));
            let entries = bodies
                .iter()
                .enumerate()
                .map(|(n, b)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(format!("e{n}"))
                        .message_body(b)
                        .build()
                        .expect("batch entry")
                })
                .collect();
            match c
                .send_message_batch()
                .queue_url(&url)
                .set_entries(Some(entries))
                .send()
                .await
            {
                Ok(out) => with(&ledger, |l| record_batch_sends(l, &bodies, &out)),
                Err(e) => {
                    if stop_on(&ledger, &failure(&e), "SendMessageBatch", &bodies[0]) {
                        return;
                    }
                }
            }
        } else {
            let body = format!("{prefix}/{i}");
            i += 1;
            with(&ledger, |l| l.tried_send(&body));
            let mut req = c.send_message().queue_url(&url).message_body(&body);
            if i.is_multiple_of(7) {
                req = req.delay_seconds(600);
            }
            match req.send().await {
                Ok(out) => with(&ledger, |l| {
                    l.acked_send(
                        &body,
                        Acked {
                            message_id: out.message_id().unwrap_or_default().to_owned(),
                            sequence_number: None,
                        },
                    );
                }),
                Err(e) => {
                    if stop_on(&ledger, &failure(&e), "SendMessage", &body) {
                        return;
                    }
                }
            }
        }
    }
}

/// Sends one FIFO group in order, one request at a time, so the order of acknowledged sends
/// is the index order. Mixes SendMessage, SendMessageBatch of three, and (every fifth index) a
/// client retry: the same send twice at once, which deduplication must fold into one message.
pub async fn fifo_sender(
    c: Client,
    url: String,
    group: String,
    ledger: SharedLedger,
    stop: Arc<AtomicBool>,
) {
    let mut i = 0usize;
    let mut request = 0usize;
    let send_one = |body: String| {
        c.send_message()
            .queue_url(&url)
            .message_body(&body)
            .message_group_id(&group)
            .message_deduplication_id(&body)
            .send()
    };
    while !stop.load(Ordering::SeqCst) {
        request += 1;
        if request.is_multiple_of(3) {
            let bodies: Vec<String> = (i..i + 3).map(|n| fifo_body(&group, n)).collect();
            i += 3;
            with(&ledger, |l| bodies.iter().for_each(|b| l.tried_send(b)));
            let entries = bodies
                .iter()
                .enumerate()
                .map(|(n, b)| {
                    SendMessageBatchRequestEntry::builder()
                        .id(format!("e{n}"))
                        .message_body(b)
                        .message_group_id(&group)
                        .message_deduplication_id(b)
                        .build()
                        .expect("batch entry")
                })
                .collect();
            match c
                .send_message_batch()
                .queue_url(&url)
                .set_entries(Some(entries))
                .send()
                .await
            {
                Ok(out) => {
                    let all_in = out.failed().is_empty();
                    with(&ledger, |l| record_batch_sends(l, &bodies, &out));
                    if !all_in {
                        // A gap would make the order of later sends undefined.
                        return;
                    }
                }
                Err(e) => {
                    if stop_on(&ledger, &failure(&e), "SendMessageBatch", &bodies[0]) {
                        return;
                    }
                    // A refused request took no effect; the group's order is still defined.
                }
            }
        } else {
            let body = fifo_body(&group, i);
            i += 1;
            with(&ledger, |l| l.tried_send(&body));
            let results = if i.is_multiple_of(5) {
                let (a, b) = tokio::join!(send_one(body.clone()), send_one(body.clone()));
                vec![a, b]
            } else {
                vec![send_one(body.clone()).await]
            };
            let mut dead = false;
            for r in results {
                match r {
                    Ok(out) => with(&ledger, |l| {
                        l.acked_send(
                            &body,
                            Acked {
                                message_id: out.message_id().unwrap_or_default().to_owned(),
                                sequence_number: out.sequence_number().map(str::to_owned),
                            },
                        );
                    }),
                    Err(e) => dead |= stop_on(&ledger, &failure(&e), "SendMessage", &body),
                }
            }
            if dead {
                return;
            }
        }
    }
}

/// Receives with a long visibility and hands the messages to the deleters, round-robin. On the
/// standard queue every seventh message is abandoned (left in flight). On the FIFO queue every
/// third batch gives its last message back with ChangeMessageVisibility 0.
pub async fn receiver(
    c: Client,
    url: String,
    fifo: bool,
    deleters: Vec<mpsc::UnboundedSender<ToDelete>>,
    ledger: SharedLedger,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0usize;
    let mut batches = 0usize;
    while !stop.load(Ordering::SeqCst) {
        let out = match c
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .visibility_timeout(LONG_VISIBILITY)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
        {
            Ok(out) => out,
            Err(e) => {
                if stop_on(&ledger, &failure(&e), "ReceiveMessage", &url) {
                    return;
                }
                continue;
            }
        };
        let mut msgs = out.messages.unwrap_or_default();
        if msgs.is_empty() {
            continue;
        }
        batches += 1;
        with(&ledger, |l| check_received(l, fifo, &msgs));
        if fifo && batches.is_multiple_of(3) {
            let last = msgs.pop().expect("not empty");
            let r = c
                .change_message_visibility()
                .queue_url(&url)
                .receipt_handle(last.receipt_handle().unwrap_or_default())
                .visibility_timeout(0)
                .send()
                .await;
            if let Err(e) = r
                && stop_on(&ledger, &failure(&e), "ChangeMessageVisibility", &url)
            {
                return;
            }
        }
        for m in msgs {
            n += 1;
            if !fifo && n.is_multiple_of(7) {
                continue;
            }
            let item = ToDelete {
                message_id: m.message_id().unwrap_or_default().to_owned(),
                handle: m.receipt_handle().unwrap_or_default().to_owned(),
            };
            // A deleter that saw the server die has dropped its end; that is fine.
            let _ = deleters[n % deleters.len()].send(item);
        }
    }
}

/// What a receive may hand out: only bodies that were sent, under the acknowledged id, and on
/// FIFO queues each group's messages in send order.
pub fn check_received(l: &mut Ledger, fifo: bool, msgs: &[aws_sdk_sqs::types::Message]) {
    let mut last_in_group: HashMap<String, usize> = HashMap::new();
    for m in msgs {
        let body = m.body().unwrap_or_default();
        let id = m.message_id().unwrap_or_default();
        match l.sends.get(body) {
            None => {
                let what = format!("received {body:?}, which was never sent");
                l.unexpected(what);
            }
            Some(Some(a)) if a.message_id != id => {
                let what = format!(
                    "received {body:?} as {id}, but its send was acknowledged as {}",
                    a.message_id
                );
                l.unexpected(what);
            }
            _ => {}
        }
        if fifo
            && let Some((group, index)) = parse_fifo_body(body)
            && let Some(prev) = last_in_group.insert(group.to_owned(), index)
            && prev >= index
        {
            l.unexpected(format!(
                "one receive handed out group {group} out of order: {prev} then {index}"
            ));
        }
    }
}

/// Deletes what the receiver hands over: mostly DeleteMessage, every fifth one twice at once
/// (a client retry), and every third turn a DeleteMessageBatch of whatever is waiting.
pub async fn deleter(
    c: Client,
    url: String,
    fifo: bool,
    mut rx: mpsc::UnboundedReceiver<ToDelete>,
    ledger: SharedLedger,
) {
    let mut turn = 0usize;
    while let Some(first) = rx.recv().await {
        turn += 1;
        let mut items = vec![first];
        if turn.is_multiple_of(3) {
            while items.len() < 10 {
                match rx.try_recv() {
                    Ok(item) => items.push(item),
                    Err(_) => break,
                }
            }
        }
        with(&ledger, |l| {
            for it in &items {
                l.deletes_tried.insert(it.message_id.clone());
            }
        });
        if items.len() > 1 {
            let entries = items
                .iter()
                .enumerate()
                .map(|(n, it)| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(format!("d{n}"))
                        .receipt_handle(&it.handle)
                        .build()
                        .expect("batch entry")
                })
                .collect();
            match c
                .delete_message_batch()
                .queue_url(&url)
                .set_entries(Some(entries))
                .send()
                .await
            {
                Ok(out) => with(&ledger, |l| {
                    for ok in out.successful() {
                        let item = ok
                            .id()
                            .strip_prefix('d')
                            .and_then(|n| n.parse::<usize>().ok())
                            .and_then(|n| items.get(n));
                        match item {
                            Some(it) => {
                                l.deletes_acked.insert(it.message_id.clone());
                            }
                            None => l.unexpected(format!("DeleteMessageBatch: unknown {ok:?}")),
                        }
                    }
                    for bad in out.failed() {
                        if fifo && bad.message().unwrap_or_default().contains("expired") {
                            l.expired_handles += 1;
                        } else {
                            l.unexpected(format!("DeleteMessageBatch entry failed: {bad:?}"));
                        }
                    }
                }),
                Err(e) => {
                    if delete_failed(&ledger, fifo, &failure(&e)) {
                        return;
                    }
                }
            }
        } else {
            let it = &items[0];
            let delete = || {
                c.delete_message()
                    .queue_url(&url)
                    .receipt_handle(&it.handle)
                    .send()
            };
            let results = if turn.is_multiple_of(5) {
                let (a, b) = tokio::join!(delete(), delete());
                vec![a, b]
            } else {
                vec![delete().await]
            };
            let mut dead = false;
            for r in results {
                match r {
                    Ok(_) => with(&ledger, |l| {
                        l.deletes_acked.insert(it.message_id.clone());
                    }),
                    Err(e) => dead |= delete_failed(&ledger, fifo, &failure(&e)),
                }
            }
            if dead {
                return;
            }
        }
    }
}
