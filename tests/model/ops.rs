//! The operations of a model-checking run and their generators: the queues a run starts with
//! ([`Setup`]), and the steps it takes ([`Op`]): sends (single and batched, with delays, groups
//! and deduplication ids), receives, deletes and visibility changes with live, stale, foreign
//! and garbage receipt handles, purges, changes of the queue delay and visibility timeout, clock
//! moves aimed at the next visibility, delay,
//! deduplication or retention boundary (and one millisecond either side), inspections, and
//! restarts of a durable engine.

use proptest::prelude::*;
use proptest::sample::select;

/// Queue 0: standard; 1: its dead-letter queue; 2: FIFO; 3: its dead-letter queue.
pub const QUEUES: usize = 4;

/// The attributes of one queue at creation.
#[derive(Debug, Clone)]
pub struct QueueSetup {
    /// Queue name.
    pub name: &'static str,
    /// FIFO queue.
    pub fifo: bool,
    /// VisibilityTimeout, seconds.
    pub visibility_s: u32,
    /// DelaySeconds.
    pub delay_s: u32,
    /// MessageRetentionPeriod, seconds.
    pub retention_s: u32,
    /// ContentBasedDeduplication (FIFO only).
    pub content_based: bool,
    /// maxReceiveCount of a RedrivePolicy to the next queue (sources only).
    pub max_receives: Option<u32>,
}

/// The four queues of a run.
#[derive(Debug, Clone)]
pub struct Setup {
    /// In creation order: dead-letter queues before their sources.
    pub queues: [QueueSetup; QUEUES],
}

fn queue(name: &'static str, fifo: bool, source: bool) -> BoxedStrategy<QueueSetup> {
    (
        select(vec![0u32, 1, 5, 30]),
        prop_oneof![3 => Just(0u32), 1 => select(vec![1u32, 2, 10])],
        select(vec![60u32, 90, 600, 345_600]),
        any::<bool>(),
        prop_oneof![1 => Just(None), 3 => (1u32..=3).prop_map(Some)],
    )
        .prop_map(
            move |(visibility_s, delay_s, retention_s, cb, max)| QueueSetup {
                name,
                fifo,
                visibility_s,
                delay_s,
                retention_s,
                content_based: fifo && cb,
                max_receives: if source { max } else { None },
            },
        )
        .boxed()
}

/// Random attributes for the four queues.
pub fn setup() -> BoxedStrategy<Setup> {
    (
        queue("std", false, true),
        queue("std-dlq", false, false),
        queue("fifo.fifo", true, true),
        queue("fifo-dlq.fifo", true, false),
    )
        .prop_map(|(a, b, c, d)| Setup {
            queues: [a, b, c, d],
        })
        .boxed()
}

/// One message of a send.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Per-message DelaySeconds.
    pub delay: Option<i64>,
    /// MessageGroupId `g<n>`.
    pub group: Option<u8>,
    /// MessageDeduplicationId `d<n>`.
    pub dedup: Option<u8>,
    /// Body `body-<n>` (few values, so content-based deduplication sees duplicates).
    pub body: u8,
}

/// Which receipt handle an operation uses.
#[derive(Debug, Clone, Copy)]
pub enum Handle {
    /// The n-th handle ever received (modulo how many there are), on its own queue.
    Known(usize),
    /// The n-th handle, sent to another queue.
    Foreign(usize, u8),
    /// Not a handle at all.
    Garbage,
}

/// How far the clock moves.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// A few milliseconds to a few seconds.
    Ms(u64),
    /// Whole seconds.
    Secs(u64),
    /// To the next moment a pending message becomes visible, ± 1 ms.
    NextVisible(i8),
    /// To the next moment a message's retention runs out, ± 1 ms.
    NextExpiry(i8),
    /// To the next moment a FIFO deduplication id is forgotten, ± 1 ms.
    NextDedupExpiry(i8),
    /// One visibility timeout of a queue, ± 1 ms.
    Visibility(u8, i8),
}

/// One step of a run.
#[derive(Debug, Clone)]
pub enum Op {
    /// SendMessage.
    Send(u8, Entry),
    /// SendMessageBatch (entry ids `e0`, `e1`, …).
    SendBatch(u8, Vec<Entry>),
    /// ReceiveMessage: queue, MaxNumberOfMessages, VisibilityTimeout.
    Receive(u8, i64, Option<i64>),
    /// DeleteMessage.
    Delete(Handle),
    /// DeleteMessageBatch.
    DeleteBatch(Vec<Handle>),
    /// ChangeMessageVisibility.
    ChangeVisibility(Handle, i64),
    /// ChangeMessageVisibilityBatch.
    ChangeVisibilityBatch(Vec<(Handle, i64)>),
    /// PurgeQueue.
    Purge(u8),
    /// SetQueueAttributes DelaySeconds.
    SetDelay(u8, u32),
    /// SetQueueAttributes VisibilityTimeout.
    SetVisibility(u8, u32),
    /// Move the clock.
    Advance(Step),
    /// Compare every queue's counters and messages.
    Inspect,
    /// Close the engine and open it again on the same data directory (durable runs only).
    Reopen,
}

fn entry() -> BoxedStrategy<Entry> {
    (
        prop_oneof![
            6 => Just(None),
            2 => Just(Some(0i64)),
            2 => select(vec![1i64, 2, 5]).prop_map(Some),
            1 => select(vec![-1i64, 901]).prop_map(Some),
        ],
        prop_oneof![12 => (0u8..3).prop_map(Some), 1 => Just(None)],
        prop_oneof![1 => Just(None), 4 => (0u8..6).prop_map(Some)],
        0u8..5,
    )
        .prop_map(|(delay, group, dedup, body)| Entry {
            delay,
            group,
            dedup,
            body,
        })
        .boxed()
}

fn handle() -> BoxedStrategy<Handle> {
    prop_oneof![
        12 => any::<usize>().prop_map(Handle::Known),
        1 => (any::<usize>(), 0u8..QUEUES as u8).prop_map(|(i, q)| Handle::Foreign(i, q)),
        1 => Just(Handle::Garbage),
    ]
    .boxed()
}

fn timeout() -> BoxedStrategy<i64> {
    prop_oneof![
        8 => select(vec![0i64, 1, 2, 5, 30, 600]),
        1 => Just(43_200i64),
        1 => select(vec![-1i64, 43_201]),
    ]
    .boxed()
}

fn step() -> BoxedStrategy<Step> {
    let jitter = select(vec![-1i8, 0, 0, 1]);
    prop_oneof![
        2 => (1u64..3000).prop_map(Step::Ms),
        2 => (1u64..120).prop_map(Step::Secs),
        4 => jitter.clone().prop_map(Step::NextVisible),
        1 => jitter.clone().prop_map(Step::NextExpiry),
        1 => jitter.clone().prop_map(Step::NextDedupExpiry),
        1 => (0u8..QUEUES as u8, jitter).prop_map(|(q, j)| Step::Visibility(q, j)),
    ]
    .boxed()
}

/// Which queue an operation addresses: mostly the two sources.
fn queue_index() -> BoxedStrategy<u8> {
    prop_oneof![4 => Just(0u8), 1 => Just(1u8), 4 => Just(2u8), 1 => Just(3u8)].boxed()
}

/// One operation; `durable` runs also restart the engine.
pub fn op(durable: bool) -> BoxedStrategy<Op> {
    let any_op = prop_oneof![
        8 => (queue_index(), entry()).prop_map(|(q, e)| Op::Send(q, e)),
        2 => (queue_index(), proptest::collection::vec(entry(), 0..=11))
            .prop_map(|(q, e)| Op::SendBatch(q, e)),
        8 => (
            queue_index(),
            prop_oneof![12 => 1i64..=10, 1 => select(vec![0i64, 11])],
            prop_oneof![3 => Just(None), 1 => select(vec![0i64, 1, 2, 30]).prop_map(Some)],
        )
            .prop_map(|(q, max, vis)| Op::Receive(q, max, vis)),
        5 => handle().prop_map(Op::Delete),
        1 => proptest::collection::vec(handle(), 0..=4).prop_map(Op::DeleteBatch),
        3 => (handle(), timeout()).prop_map(|(h, t)| Op::ChangeVisibility(h, t)),
        1 => proptest::collection::vec((handle(), timeout()), 0..=4)
            .prop_map(Op::ChangeVisibilityBatch),
        1 => queue_index().prop_map(Op::Purge),
        1 => (queue_index(), select(vec![0u32, 1, 3, 10])).prop_map(|(q, d)| Op::SetDelay(q, d)),
        1 => (queue_index(), select(vec![0u32, 1, 5, 30]))
            .prop_map(|(q, v)| Op::SetVisibility(q, v)),
        7 => step().prop_map(Op::Advance),
        2 => Just(Op::Inspect),
        2 => Just(Op::Reopen),
    ];
    any_op
        .prop_map(move |op| match op {
            Op::Reopen if !durable => Op::Inspect,
            other => other,
        })
        .boxed()
}
