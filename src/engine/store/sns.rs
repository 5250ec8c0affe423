//! Engine layer, store: SNS's tables, records and ops (docs/storage.md, schema 4): topics,
//! subscriptions and FIFO topics' deduplication windows, each in a table of its own. A data
//! file written before SNS existed (schema 2 or 3) has none of them; opening it creates them
//! empty. Like `record.rs`, these types are the on-disk format: postcard, fields by position.

use redb::{ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction};
use serde::Deserialize;

use super::record::{decode, encode};
use super::schema::{StoreError, redb_err};
use super::sns_record::{SnsDedupRecord, SnsOp, SubscriptionRecord, TopicRecord};

/// Topic ARN → [`TopicRecord`].
pub(super) const TOPICS: TableDefinition<&str, &[u8]> = TableDefinition::new("sns_topics");
/// Subscription ARN → [`SubscriptionRecord`].
pub(super) const SUBSCRIPTIONS: TableDefinition<&str, &[u8]> =
    TableDefinition::new("sns_subscriptions");
/// (topic ARN, deduplication id) → [`SnsDedupRecord`].
pub(super) const SNS_DEDUP: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("sns_dedup");

/// What SNS's tables hold, read back at start-up.
#[derive(Debug, Default)]
pub(crate) struct LoadedSns {
    /// Topics by ARN.
    pub topics: Vec<(String, TopicRecord)>,
    /// Subscriptions by ARN.
    pub subscriptions: Vec<(String, SubscriptionRecord)>,
    /// (topic ARN, dedup id, record).
    pub dedup: Vec<(String, String, SnsDedupRecord)>,
}

/// Creates SNS's tables in a file that lacks them (any schema before 4).
pub(super) fn create_tables(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(TOPICS).map_err(redb_err)?;
    txn.open_table(SUBSCRIPTIONS).map_err(redb_err)?;
    txn.open_table(SNS_DEDUP).map_err(redb_err)?;
    Ok(())
}

/// Writes one op in the commit's transaction.
pub(super) fn apply(txn: &WriteTransaction, op: &SnsOp) -> Result<(), StoreError> {
    match op {
        SnsOp::PutTopic(arn, rec) => {
            txn.open_table(TOPICS)
                .map_err(redb_err)?
                .insert(arn.as_str(), encode(rec).as_slice())
                .map_err(redb_err)?;
        }
        SnsOp::DeleteTopic(arn) => {
            txn.open_table(TOPICS)
                .map_err(redb_err)?
                .remove(arn.as_str())
                .map_err(redb_err)?;
            let end = format!("{arn}\u{0}");
            txn.open_table(SNS_DEDUP)
                .map_err(redb_err)?
                .retain_in((arn.as_str(), "")..(end.as_str(), ""), |_, _| false)
                .map_err(redb_err)?;
        }
        SnsOp::PutSubscription(arn, rec) => {
            txn.open_table(SUBSCRIPTIONS)
                .map_err(redb_err)?
                .insert(arn.as_str(), encode(rec).as_slice())
                .map_err(redb_err)?;
        }
        SnsOp::DeleteSubscription(arn) => {
            txn.open_table(SUBSCRIPTIONS)
                .map_err(redb_err)?
                .remove(arn.as_str())
                .map_err(redb_err)?;
        }
        SnsOp::PutDedup(topic, id, rec) => {
            txn.open_table(SNS_DEDUP)
                .map_err(redb_err)?
                .insert((topic.as_str(), id.as_str()), encode(rec).as_slice())
                .map_err(redb_err)?;
        }
        SnsOp::DeleteDedup(topic, id) => {
            txn.open_table(SNS_DEDUP)
                .map_err(redb_err)?
                .remove((topic.as_str(), id.as_str()))
                .map_err(redb_err)?;
        }
    }
    Ok(())
}

/// Empties SNS's tables (the reset endpoint).
pub(super) fn clear(txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(TOPICS)
        .map_err(redb_err)?
        .retain(|_, _| false)
        .map_err(redb_err)?;
    txn.open_table(SUBSCRIPTIONS)
        .map_err(redb_err)?
        .retain(|_, _| false)
        .map_err(redb_err)?;
    txn.open_table(SNS_DEDUP)
        .map_err(redb_err)?
        .retain(|_, _| false)
        .map_err(redb_err)?;
    Ok(())
}

fn dec<'a, T: Deserialize<'a>>(b: &'a [u8]) -> Result<T, StoreError> {
    decode(b).map_err(StoreError::Decode)
}

/// Opens a table for reading; `None` when the file has none (a file of an older schema not
/// yet opened for writing, which is what creates SNS's tables).
fn table<K: redb::Key + 'static>(
    txn: &redb::ReadTransaction,
    def: TableDefinition<K, &'static [u8]>,
) -> Result<Option<redb::ReadOnlyTable<K, &'static [u8]>>, StoreError> {
    match txn.open_table(def) {
        Ok(t) => Ok(Some(t)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(redb_err(e)),
    }
}

/// Reads SNS's tables back.
pub(super) fn load(db: &redb::Database) -> Result<LoadedSns, StoreError> {
    let txn = db.begin_read().map_err(redb_err)?;
    let mut out = LoadedSns::default();
    if let Some(topics) = table(&txn, TOPICS)? {
        for row in topics.iter().map_err(redb_err)? {
            let (k, v) = row.map_err(redb_err)?;
            out.topics.push((k.value().to_owned(), dec(v.value())?));
        }
    }
    if let Some(subs) = table(&txn, SUBSCRIPTIONS)? {
        for row in subs.iter().map_err(redb_err)? {
            let (k, v) = row.map_err(redb_err)?;
            out.subscriptions
                .push((k.value().to_owned(), dec(v.value())?));
        }
    }
    if let Some(dedup) = table(&txn, SNS_DEDUP)? {
        for row in dedup.iter().map_err(redb_err)? {
            let (k, v) = row.map_err(redb_err)?;
            let (topic, id) = k.value();
            out.dedup
                .push((topic.to_owned(), id.to_owned(), dec(v.value())?));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::store::record::ScopeRecord;

    /// The bytes schema 4 writes. If this fails, the on-disk format changed: restore it, or
    /// bump `SCHEMA_VERSION` and update docs/storage.md.
    #[test]
    fn pinned_encodings() {
        let topic = TopicRecord {
            name: "t".into(),
            scope: ScopeRecord {
                account: "1".into(),
                region: "r".into(),
            },
            fifo: true,
            attributes: [("DisplayName".to_owned(), "d".to_owned())].into(),
            tags: BTreeMap::new(),
            last_sequence: 1000,
            deleted_subscriptions: 2,
        };
        let bytes = encode(&topic);
        assert_eq!(
            bytes,
            [
                1, 116, 1, 49, 1, 114, 1, 1, 11, 68, 105, 115, 112, 108, 97, 121, 78, 97, 109, 101,
                1, 100, 0, 232, 7, 2
            ]
        );
        assert_eq!(decode::<TopicRecord>(&bytes), Ok(topic));
        let sub = SubscriptionRecord {
            topic_arn: "a".into(),
            protocol: "sqs".into(),
            endpoint: "q".into(),
            owner: "1".into(),
            attributes: BTreeMap::new(),
            pending_token: Some("k".into()),
            authenticated: true,
            order: 3,
        };
        let bytes = encode(&sub);
        assert_eq!(
            bytes,
            [1, 97, 3, 115, 113, 115, 1, 113, 1, 49, 0, 1, 1, 107, 1, 3]
        );
        assert_eq!(decode::<SubscriptionRecord>(&bytes), Ok(sub));
        let d = SnsDedupRecord {
            expires_ms: 5,
            message_id: "m".into(),
            sequence_number: 7,
        };
        assert_eq!(encode(&d), [5, 1, 109, 7]);
    }
}
