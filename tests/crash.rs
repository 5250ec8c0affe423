//! Crash safety of `--data-dir`: the built binary is SIGKILLed under load and restarted on the
//! same directory, and nothing it acknowledged may be lost or undone.
//!
//! The promise under test (src/engine/store.rs): a reply is sent only after the redb commit that
//! holds its effect, and with `--data-dir` commits are `Durability::Immediate`. So after any
//! kill:
//! - every acknowledged send is present, unless a delete of it was attempted;
//! - no acknowledged delete comes back;
//! - nothing is present that was never sent, and nothing twice;
//! - FIFO order within each group is intact: the group's messages present are in send order,
//!   and their sequence numbers grow with it;
//! - queue attributes are as they were created.
//!
//! A request that was in flight at the kill may or may not have taken effect; the checks allow
//! both. Messages received but not deleted stay in flight across the restart (their visibility
//! deadline is on the real clock), so the checks read state through the LocalStack-compatible
//! peek endpoint with `ShowInvisible` and `ShowDelayed` rather than by receiving.
//!
//! Two narrower tests pin down holes the load can only hit by luck: a retried request (a FIFO
//! send deduplicated against its in-flight original, a second delete of one message) must not
//! be acknowledged before the original's commit, and a receipt handle of a deleted message must
//! not delete a message sent after a restart.
//!
//! Nothing here sleeps for seconds: load phases last 200 ms to 1 s, and every wait is bounded.

mod binary;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, MessageSystemAttributeName, QueueAttributeName,
    SendMessageBatchRequestEntry,
};
use binary::{Proc, client, peek};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The standard queue under load.
const STD: &str = "crash-std";
/// The FIFO queue under load.
const FIFO: &str = "crash-fifo.fifo";
/// How long the load runs before each SIGKILL.
const KILL_AFTER: [Duration; 3] = [
    Duration::from_millis(200),
    Duration::from_millis(500),
    Duration::from_millis(1000),
];
/// How long the load runs before the SIGTERM.
const TERM_AFTER: Duration = Duration::from_millis(300);
/// Standard-queue sender tasks.
const STD_SENDERS: usize = 3;
/// FIFO groups per load phase, one sender task each. Every phase uses fresh groups, so groups
/// left locked by messages in flight at a kill do not starve the next phase.
const FIFO_GROUPS: usize = 4;
/// Deleter tasks per queue.
const DELETERS: usize = 2;
/// Receive-time visibility: far beyond the test, so no handle expires while it runs.
const LONG_VISIBILITY: i32 = 600;
/// Hang guard for stopping the load tasks once the server is gone.
const LOAD_STOP_WAIT: Duration = Duration::from_secs(30);

/// The attributes both queues are created with; they must read back the same after restarts.
fn created_attributes(fifo: bool) -> Vec<(QueueAttributeName, &'static str)> {
    let mut a = vec![
        (QueueAttributeName::VisibilityTimeout, "45"),
        (QueueAttributeName::DelaySeconds, "0"),
        (QueueAttributeName::MessageRetentionPeriod, "86400"),
        (QueueAttributeName::ReceiveMessageWaitTimeSeconds, "0"),
    ];
    if fifo {
        a.extend([
            (QueueAttributeName::FifoQueue, "true"),
            (QueueAttributeName::ContentBasedDeduplication, "false"),
            (QueueAttributeName::DeduplicationScope, "messageGroup"),
            (QueueAttributeName::FifoThroughputLimit, "perMessageGroupId"),
        ]);
    }
    a
}

// ---------------------------------------------------------------------------------------------
// What the clients were told.

/// One acknowledged send, as the reply described it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Acked {
    message_id: String,
    sequence_number: Option<String>,
}

/// Everything the load did, by outcome. Bodies are unique across the whole test.
#[derive(Debug, Default)]
struct Ledger {
    /// Body → `None` while only attempted, `Some` once a send of it was acknowledged.
    sends: BTreeMap<String, Option<Acked>>,
    /// Message ids whose delete was attempted (acknowledged or not).
    deletes_tried: HashSet<String>,
    /// Message ids whose delete was acknowledged.
    deletes_acked: HashSet<String>,
    /// Answers that a correct server never gives here (service errors, contradictions).
    unexpected: Vec<String>,
    /// Deletes refused because the FIFO receipt handle had expired (correct behaviour).
    expired_handles: usize,
}

impl Ledger {
    fn tried_send(&mut self, body: &str) {
        self.sends.entry(body.to_owned()).or_default();
    }

    fn acked_send(&mut self, body: &str, acked: Acked) {
        let slot = self.sends.entry(body.to_owned()).or_default();
        match slot {
            Some(prev) if *prev != acked => self.unexpected.push(format!(
                "send of {body:?} acknowledged twice with different results: {prev:?} and {acked:?}"
            )),
            _ => *slot = Some(acked),
        }
    }

    fn unexpected(&mut self, what: String) {
        self.unexpected.push(what);
    }
}

type SharedLedger = Arc<Mutex<Ledger>>;

fn with<R>(ledger: &SharedLedger, f: impl FnOnce(&mut Ledger) -> R) -> R {
    f(&mut ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// How a request failed.
enum Failure {
    /// No answer (connection refused, reset or closed by the kill): outcome unknown.
    NoAnswer,
    /// The server answered with an error: code and message.
    Refused(String, String),
}

fn failure<E: ProvideErrorMetadata + std::fmt::Debug>(e: &SdkError<E, HttpResponse>) -> Failure {
    match e {
        SdkError::ServiceError(se) => Failure::Refused(
            se.err().code().unwrap_or("?").to_owned(),
            se.err().message().unwrap_or("").to_owned(),
        ),
        SdkError::ConstructionFailure(_) => {
            Failure::Refused("ConstructionFailure".into(), format!("{e:?}"))
        }
        _ => Failure::NoAnswer,
    }
}

/// Body of FIFO message `index` of `group`: the group and the send order, readable back.
fn fifo_body(group: &str, index: usize) -> String {
    format!("fifo/{group}/{index:06}")
}

/// (group, index) of a FIFO body.
fn parse_fifo_body(body: &str) -> Option<(&str, usize)> {
    let rest = body.strip_prefix("fifo/")?;
    let (group, index) = rest.split_once('/')?;
    Some((group, index.parse().ok()?))
}

// ---------------------------------------------------------------------------------------------
// The load.

/// A received message on its way to a deleter.
struct ToDelete {
    message_id: String,
    handle: String,
}

/// The load tasks of one phase.
struct Load {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts senders, receivers and deleters on both queues against `endpoint`.
    fn start(endpoint: &str, phase: usize, urls: &Urls, ledger: &SharedLedger) -> Load {
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
    async fn finish(self) {
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
async fn std_sender(
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
async fn fifo_sender(
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

fn record_batch_sends(
    l: &mut Ledger,
    bodies: &[String],
    out: &aws_sdk_sqs::operation::send_message_batch::SendMessageBatchOutput,
) {
    for ok in out.successful() {
        let Some(body) = ok
            .id()
            .strip_prefix('e')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| bodies.get(n))
        else {
            l.unexpected(format!("SendMessageBatch answered an unknown entry {ok:?}"));
            continue;
        };
        l.acked_send(
            body,
            Acked {
                message_id: ok.message_id().to_owned(),
                sequence_number: ok.sequence_number().map(str::to_owned),
            },
        );
    }
    for bad in out.failed() {
        l.unexpected(format!("SendMessageBatch entry failed: {bad:?}"));
    }
}

/// Whether a task should stop after `f`: yes when nobody answered (the server is gone); a
/// refusal is recorded as unexpected, since nothing this load sends should be refused.
fn stop_on(ledger: &SharedLedger, f: &Failure, action: &str, what: &str) -> bool {
    match f {
        Failure::NoAnswer => true,
        Failure::Refused(code, msg) => {
            with(ledger, |l| {
                l.unexpected(format!("{action} {what:?} refused: {code}: {msg}"));
            });
            false
        }
    }
}

/// Receives with a long visibility and hands the messages to the deleters, round-robin. On the
/// standard queue every seventh message is abandoned (left in flight). On the FIFO queue every
/// third batch gives its last message back with ChangeMessageVisibility 0.
async fn receiver(
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
fn check_received(l: &mut Ledger, fifo: bool, msgs: &[aws_sdk_sqs::types::Message]) {
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
async fn deleter(
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

/// Books a failed delete; true when the server is gone. An expired FIFO handle is correct
/// behaviour (the delete is simply not acknowledged).
fn delete_failed(ledger: &SharedLedger, fifo: bool, f: &Failure) -> bool {
    match f {
        Failure::Refused(_, msg) if fifo && msg.contains("expired") => {
            with(ledger, |l| l.expired_handles += 1);
            false
        }
        other => stop_on(ledger, other, "DeleteMessage", "handle"),
    }
}

// ---------------------------------------------------------------------------------------------
// Checking after a restart.

/// Queue URLs as the current server names them.
#[derive(Debug, Clone)]
struct Urls {
    std: String,
    fifo: String,
}

async fn urls(c: &Client) -> Urls {
    let url = |name: &'static str| async move {
        c.get_queue_url()
            .queue_name(name)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GetQueueUrl {name} after restart: {e:?}"))
            .queue_url
            .expect("QueueUrl")
    };
    Urls {
        std: url(STD).await,
        fifo: url(FIFO).await,
    }
}

/// All attributes except the three message counters.
async fn stable_attributes(c: &Client, url: &str) -> BTreeMap<String, String> {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GetQueueAttributes {url}: {e:?}"));
    out.attributes()
        .expect("attributes")
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
        .filter(|(k, _)| !k.starts_with("ApproximateNumberOfMessages"))
        .collect()
}

/// (visible, in flight, delayed) as GetQueueAttributes counts them.
async fn counters(c: &Client, url: &str) -> (usize, usize, usize) {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GetQueueAttributes {url}: {e:?}"));
    let a = out.attributes().expect("attributes");
    let n = |k: QueueAttributeName| -> usize {
        a.get(&k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} missing or not a number in {a:?}"))
    };
    (
        n(QueueAttributeName::ApproximateNumberOfMessages),
        n(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        n(QueueAttributeName::ApproximateNumberOfMessagesDelayed),
    )
}

/// What one check saw, for the can-it-fail guards and the log.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    present: usize,
    in_flight: usize,
    acked_sends: usize,
    acked_deletes: usize,
}

/// Checks every invariant of the module doc against the restarted server `p`.
async fn verify(
    p: &Proc,
    c: &Client,
    urls: &Urls,
    baseline: &HashMap<&'static str, BTreeMap<String, String>>,
    ledger: &SharedLedger,
    when: &str,
) -> [Seen; 2] {
    let mut problems = Vec::new();
    let mut seen = [Seen::default(); 2];
    with(ledger, |l| {
        for u in &l.unexpected {
            problems.push(format!("during the load: {u}"));
        }
    });
    for (k, (name, url, fifo)) in [(STD, &urls.std, false), (FIFO, &urls.fifo, true)]
        .into_iter()
        .enumerate()
    {
        let attrs = stable_attributes(c, url).await;
        if attrs != baseline[name] {
            problems.push(format!(
                "{name}: attributes changed:\n  before {:?}\n  after  {attrs:?}",
                baseline[name]
            ));
        }
        let messages = peek(p.port, url).await;
        let (visible, in_flight, delayed) = counters(c, url).await;
        if visible + in_flight + delayed != messages.len() {
            problems.push(format!(
                "{name}: counters say {visible}+{in_flight}+{delayed} messages, the peek lists {}",
                messages.len()
            ));
        }
        let prefix = if fifo { "fifo/" } else { "std/" };
        let l = ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut bodies = HashSet::new();
        let mut ids = HashSet::new();
        let mut last_in_group: HashMap<String, (usize, u128)> = HashMap::new();
        for m in &messages {
            if !bodies.insert(m.body.as_str()) || !ids.insert(m.id.as_str()) {
                problems.push(format!("{name}: {:?} ({}) is present twice", m.body, m.id));
            }
            match l.sends.get(&m.body) {
                None => problems.push(format!(
                    "{name}: {:?} is present but was never sent",
                    m.body
                )),
                Some(Some(a)) if a.message_id != m.id => problems.push(format!(
                    "{name}: {:?} is present as {}, but its send was acknowledged as {}",
                    m.body, m.id, a.message_id
                )),
                Some(Some(a))
                    if fifo && a.sequence_number.as_deref() != m.attr("SequenceNumber") =>
                {
                    problems.push(format!(
                        "{name}: {:?} has SequenceNumber {:?}, its send was acknowledged with {:?}",
                        m.body,
                        m.attr("SequenceNumber"),
                        a.sequence_number
                    ));
                }
                _ => {}
            }
            if l.deletes_acked.contains(&m.id) {
                problems.push(format!(
                    "{name}: {:?} ({}) came back after its delete was acknowledged",
                    m.body, m.id
                ));
            }
            if m.attr("ApproximateReceiveCount").is_some_and(|n| n != "0") {
                seen[k].in_flight += 1;
            }
            if fifo {
                let Some((group, index)) = parse_fifo_body(&m.body) else {
                    problems.push(format!("{name}: unexpected body {:?}", m.body));
                    continue;
                };
                if m.attr("MessageGroupId") != Some(group) {
                    problems.push(format!(
                        "{name}: {:?} has MessageGroupId {:?}",
                        m.body,
                        m.attr("MessageGroupId")
                    ));
                }
                let Some(seq) = m
                    .attr("SequenceNumber")
                    .and_then(|s| s.parse::<u128>().ok())
                else {
                    problems.push(format!("{name}: {:?} has no SequenceNumber", m.body));
                    continue;
                };
                if let Some((prev_index, prev_seq)) =
                    last_in_group.insert(group.to_owned(), (index, seq))
                    && (prev_index >= index || prev_seq >= seq)
                {
                    problems.push(format!(
                        "{name}: group {group} out of order: index {prev_index} (seq {prev_seq}) is listed before index {index} (seq {seq})"
                    ));
                }
            }
        }
        seen[k].present = messages.len();
        for (body, acked) in l.sends.range(prefix.to_owned()..) {
            if !body.starts_with(prefix) {
                break;
            }
            let Some(a) = acked else { continue };
            seen[k].acked_sends += 1;
            if !bodies.contains(body.as_str()) && !l.deletes_tried.contains(&a.message_id) {
                problems.push(format!(
                    "{name}: acknowledged send {body:?} ({}) is lost (no delete of it was tried)",
                    a.message_id
                ));
            }
        }
        seen[k].acked_deletes = l
            .sends
            .range(prefix.to_owned()..)
            .take_while(|(body, _)| body.starts_with(prefix))
            .filter_map(|(_, acked)| acked.as_ref())
            .filter(|a| l.deletes_acked.contains(&a.message_id))
            .count();
    }
    assert!(
        problems.is_empty(),
        "{when}: {} problem(s):\n{}",
        problems.len(),
        problems
            .iter()
            .take(30)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    );
    seen
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// Three SIGKILLs at different points under load, then a SIGTERM under load; after each
/// restart on the same directory every invariant of the module doc holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_work_survives_kill_9_under_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Proc::start(dir.path()).await;
    let c = client(&server.endpoint());
    let mut baseline = HashMap::new();
    for (name, fifo) in [(STD, false), (FIFO, true)] {
        let mut req = c.create_queue().queue_name(name);
        for (k, v) in created_attributes(fifo) {
            req = req.attributes(k, v);
        }
        let url = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"))
            .queue_url
            .expect("QueueUrl");
        let attrs = stable_attributes(&c, &url).await;
        for (k, v) in created_attributes(fifo) {
            assert_eq!(
                attrs.get(k.as_str()).map(String::as_str),
                Some(v),
                "{name} {k} as created"
            );
        }
        baseline.insert(name, attrs);
    }
    let mut urls = urls(&c).await;
    let ledger: SharedLedger = Arc::default();
    let mut totals = [Seen::default(); 2];

    let phases = KILL_AFTER.len() + 1;
    for phase in 0..phases {
        let load = Load::start(&server.endpoint(), phase, &urls, &ledger);
        let how = if let Some(&after) = KILL_AFTER.get(phase) {
            tokio::time::sleep(after).await;
            let status = server.kill9().await;
            assert!(
                !status.success(),
                "SIGKILL should end the process: {status}"
            );
            format!("SIGKILL after {after:?} of load")
        } else {
            tokio::time::sleep(TERM_AFTER).await;
            server.stop().await;
            format!("SIGTERM after {TERM_AFTER:?} of load")
        };
        load.finish().await;
        server = Proc::start(dir.path()).await;
        let c = client(&server.endpoint());
        urls = self::urls(&c).await;
        let seen = verify(&server, &c, &urls, &baseline, &ledger, &how).await;
        println!(
            "phase {phase} ({how}): std {:?}, fifo {:?}",
            seen[0], seen[1]
        );
        for (now, before) in seen.iter().zip(&totals) {
            assert!(
                now.acked_sends > before.acked_sends,
                "{how}: no send was acknowledged on one queue, so this phase proved little: {seen:?}"
            );
        }
        totals = seen;
    }
    let expired = with(&ledger, |l| l.expired_handles);
    println!(
        "totals: std {:?}, fifo {:?}; expired FIFO handles: {expired}",
        totals[0], totals[1]
    );
    for (name, s) in [STD, FIFO].iter().zip(totals) {
        assert!(
            s.acked_deletes > 0 && s.in_flight > 0,
            "{name}: the load never deleted or never left a message in flight, so those checks proved nothing: {s:?}"
        );
    }
    server.stop().await;
}

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
