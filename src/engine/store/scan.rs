//! Engine layer, store: the start-up scan of the message tables. A thread of its own reads and decodes
//! redb's pages while the caller builds the in-memory index from what it hands over, so a
//! restart with a deep backlog uses both cores instead of one.

use std::sync::mpsc;

use redb::{Database, ReadableDatabase, ReadableTable};

use super::handle::{MESSAGE_STATE, MESSAGES, Row, StoreError, decode, redb_err};
use super::record::{self, IndexFields, StateRecord};

/// Rows handed over at a time: large enough that the channel costs nothing per message, small
/// enough that at most a few hold memory at once.
const BATCH: usize = 4096;
/// Batches the reader may run ahead of the index builder.
const AHEAD: usize = 4;

type Batch = Vec<(u64, u64, IndexFields, StateRecord)>;

/// Feeds every message row not covered by a pending purge (`(queue id, seq below)`) to `sink`,
/// in key order, as [`Row::Message`]. An error from either side stops both.
pub(super) fn messages(
    db: &Database,
    purges: &[(u64, u64)],
    sink: &mut dyn FnMut(Row) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<Result<Batch, StoreError>>(AHEAD);
        s.spawn(move || {
            if let Err(e) = read(db, purges, &tx) {
                let _ = tx.send(Err(e));
            }
        });
        // Returning early drops the receiver, which stops the reader at its next batch.
        for batch in rx {
            for (q, seq, fields, state) in batch? {
                sink(Row::Message(q, seq, fields, state))?;
            }
        }
        Ok(())
    })
}

/// The reader's side: walks the two message tables side by side (they share their keys) in a
/// read transaction of its own, sending full batches until done or the receiver is gone.
fn read(
    db: &Database,
    purges: &[(u64, u64)],
    tx: &mpsc::SyncSender<Result<Batch, StoreError>>,
) -> Result<(), StoreError> {
    let gone = |q: u64, s: u64| purges.iter().any(|&(id, below)| id == q && s < below);
    let txn = db.begin_read().map_err(redb_err)?;
    let messages = txn.open_table(MESSAGES).map_err(redb_err)?;
    let states = txn.open_table(MESSAGE_STATE).map_err(redb_err)?;
    let mut state_rows = states.iter().map_err(redb_err)?.peekable();
    let mut batch = Vec::with_capacity(BATCH);
    for row in messages.iter().map_err(redb_err)? {
        let (k, v) = row.map_err(redb_err)?;
        let key = k.value();
        let mut state = None;
        while let Some(next) = state_rows.peek() {
            let (sk, sv) = match next {
                Ok(pair) => pair,
                Err(e) => return Err(redb_err(e)),
            };
            let skey = sk.value();
            if skey < key {
                state_rows.next();
                continue;
            }
            if skey == key {
                state = Some(decode(sv.value())?);
                state_rows.next();
            }
            break;
        }
        if gone(key.0, key.1) {
            continue;
        }
        let fields = record::decode_index_fields(v.value()).map_err(StoreError::Decode)?;
        // A message that was never received has no state row: it is due at send + delay.
        let state = state.unwrap_or_else(|| fields.initial_state());
        batch.push((key.0, key.1, fields, state));
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if tx.send(Ok(full)).is_err() {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(Ok(batch));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::BATCH;
    use crate::command::{
        Command, CreateQueue, ReceiveMessage, Reply, RequestContext, SendMessageBatch,
        SendMessageBatchRequestEntry,
    };
    use crate::engine::{Engine, EngineOptions, ManualClock, SeededIds};

    const BASE: &str = "http://localhost:9324";

    fn open(dir: &tempfile::TempDir, seed: u64) -> Engine {
        let options = EngineOptions {
            data_dir: Some(dir.path().to_owned()),
            body_cache_bytes: 0,
            ..EngineOptions::default()
        };
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        Engine::open(options, clock, Arc::new(SeededIds::new(seed))).expect("opens")
    }

    async fn run(e: &Engine, cmd: Command) -> Reply {
        let ctx = RequestContext {
            base_url: BASE.into(),
            ..RequestContext::default()
        };
        e.execute(&ctx, cmd).await.expect("succeeds")
    }

    fn url(name: &str) -> String {
        format!("{BASE}/000000000000/{name}")
    }

    async fn fill(e: &Engine, name: &str, n: usize) {
        let queue_name = name.to_owned();
        run(
            e,
            Command::CreateQueue(CreateQueue {
                queue_name,
                ..CreateQueue::default()
            }),
        )
        .await;
        for start in (0..n).step_by(10) {
            let entries = (start..n.min(start + 10))
                .map(|i| SendMessageBatchRequestEntry {
                    id: format!("e{i}"),
                    message_body: format!("{name} {i}"),
                    ..SendMessageBatchRequestEntry::default()
                })
                .collect();
            let c = SendMessageBatch {
                queue_url: url(name),
                entries,
            };
            run(e, Command::SendMessageBatch(c)).await;
        }
    }

    async fn drain(e: &Engine, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let c = ReceiveMessage {
                queue_url: url(name),
                max_number_of_messages: Some(10),
                visibility_timeout: Some(600),
                ..ReceiveMessage::default()
            };
            let Reply::ReceiveMessage(r) = run(e, Command::ReceiveMessage(c)).await else {
                panic!("a receive result");
            };
            if r.messages.is_empty() {
                return out;
            }
            out.extend(r.messages.into_iter().map(|m| m.body));
        }
    }

    /// More rows than fit in a few batches, over two queues: a restart indexes every one, in
    /// order, each under its own queue.
    #[tokio::test]
    async fn a_restart_indexes_every_row_across_batches_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = 2 * BATCH + 17;
        {
            let e = open(&dir, 1);
            fill(&e, "big", n).await;
            fill(&e, "small", 3).await;
            e.shutdown();
            e.close().await;
        }
        let e = open(&dir, 2);
        let big = drain(&e, "big").await;
        let expected: Vec<String> = (0..n).map(|i| format!("big {i}")).collect();
        assert_eq!(big.len(), n, "every message is back once");
        assert!(big == expected, "in send order, with their own bodies");
        assert_eq!(drain(&e, "small").await, ["small 0", "small 1", "small 2"]);
    }
}
