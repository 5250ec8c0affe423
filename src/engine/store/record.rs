//! Engine layer, store: the records stored in redb, one type per table, independent of the
//! protocol.
//!
//! These types are the on-disk format (docs/storage.md). They are encoded with postcard, which
//! writes fields in declaration order without names, so renaming a field is free but reordering,
//! adding, removing or retyping one changes the format and needs a new `SCHEMA_VERSION`
//! (`schema.rs`). Command types (`MessageAttributeValue`) never reach the disk: they are
//! converted at this boundary. The `pinned_encodings` test below fails on any accidental change.
//! This module imports nothing else from the engine.
//!
//! A message record is kept small because a backlog holds millions: the common case (a standard
//! message without attributes) needs only the core fields; every optional part lives in one
//! boxed [`MessageExtra`] that is absent when empty.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::command::{MessageAttributeValue, MessageAttributes};

/// A queue (table `queues`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QueueRecord {
    /// Queue name.
    pub name: String,
    /// FIFO or standard.
    pub fifo: bool,
    /// Set attributes as GetQueueAttributes shows them, by name.
    pub attributes: BTreeMap<String, String>,
    /// Tags.
    pub tags: BTreeMap<String, String>,
    /// Epoch seconds.
    pub created_s: u64,
    /// Epoch seconds.
    pub modified_s: u64,
    /// Last PurgeQueue (epoch ms), for the 60-second purge rule (§6.13).
    pub last_purge_ms: Option<u64>,
    /// FIFO: deduplicate per message group. Fixed at creation; a later change of the
    /// DeduplicationScope attribute does not change behaviour (§6.9).
    pub dedup_per_group: bool,
    /// Account and region (schema 3). Last, so that a schema-2 record, which ends before it,
    /// fails to decode as this layout and is read by [`decode_queue`] as the old one instead.
    pub scope: Option<ScopeRecord>,
}

/// A queue's account and region, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ScopeRecord {
    /// 12-digit account id.
    pub account: String,
    /// Region name.
    pub region: String,
}

impl From<crate::command::Scope> for ScopeRecord {
    fn from(s: crate::command::Scope) -> Self {
        Self {
            account: s.account,
            region: s.region,
        }
    }
}

impl From<ScopeRecord> for crate::command::Scope {
    fn from(s: ScopeRecord) -> Self {
        Self {
            account: s.account,
            region: s.region,
        }
    }
}

/// The schema-2 queue record: [`QueueRecord`] without its scope.
#[derive(Deserialize)]
struct QueueRecordV2 {
    name: String,
    fifo: bool,
    attributes: BTreeMap<String, String>,
    tags: BTreeMap<String, String>,
    created_s: u64,
    modified_s: u64,
    last_purge_ms: Option<u64>,
    dedup_per_group: bool,
}

/// Decodes a stored queue record of schema 3, or of schema 2 (then without a scope: the queue
/// belongs to the configured account and region).
pub(crate) fn decode_queue(b: &[u8]) -> Result<QueueRecord, String> {
    decode::<QueueRecord>(b).or_else(|_| {
        let v2: QueueRecordV2 = decode(b)?;
        Ok(QueueRecord {
            name: v2.name,
            fifo: v2.fifo,
            attributes: v2.attributes,
            tags: v2.tags,
            created_s: v2.created_s,
            modified_s: v2.modified_s,
            last_purge_ms: v2.last_purge_ms,
            dedup_per_group: v2.dedup_per_group,
            scope: None,
        })
    })
}

/// The immutable part of a message (table `messages`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MessageRecord {
    /// Message id (a UUID).
    pub id: uuid::Uuid,
    /// Body (boxed: no spare capacity, and 8 bytes less than a `String` per record held).
    pub body: Box<str>,
    /// Epoch milliseconds.
    pub sent_ms: u64,
    /// Delay applied at the send, seconds; the first visibility is `sent_ms + delay`.
    pub delay_s: u32,
    /// MD5 of the body.
    pub md5_of_body: [u8; 16],
    /// Everything optional.
    pub extra: Option<Box<MessageExtra>>,
}

/// The optional parts of a message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MessageExtra {
    /// User attributes, by name.
    pub attributes: BTreeMap<String, StoredAttributeValue>,
    /// `AWSTraceHeader`, when sent.
    pub trace_header: Option<String>,
    /// Group id (FIFO, or fair standard queues).
    pub group_id: Option<String>,
    /// FIFO deduplication id.
    pub dedup_id: Option<String>,
    /// FIFO sequence number.
    pub sequence_number: Option<u128>,
    /// Set when the message was moved here from a source queue.
    pub dead_letter_source_arn: Option<String>,
}

/// One user attribute value as stored. Same fields as the command layer's
/// `MessageAttributeValue`, but owned by the store so that the protocol type can change freely.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredAttributeValue {
    /// Full DataType (`Number.java.lang.Long`).
    pub data_type: String,
    /// String and Number values.
    pub string_value: Option<String>,
    /// Binary values, decoded.
    pub binary_value: Option<Vec<u8>>,
    /// Reserved by AWS; kept because they count in the attribute MD5.
    pub string_list_values: Vec<String>,
    /// Reserved by AWS; kept because they count in the attribute MD5.
    pub binary_list_values: Vec<Vec<u8>>,
}

/// The mutable part of a message (table `message_state`). A message that has never been
/// received has no row: its state is [`StateRecord::initial`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StateRecord {
    /// When the message next becomes visible (epoch ms).
    pub visible_at_ms: u64,
    /// Receives so far.
    pub receive_count: u32,
    /// First receive (epoch ms).
    pub first_receive_ms: Option<u64>,
    /// Latest receive (epoch ms), for the 12-hour visibility cap.
    pub last_receive_ms: Option<u64>,
    /// Nonce of the latest receive; 0 before the first.
    pub nonce: u64,
}

/// A remembered FIFO send (table `dedup`), so the deduplication window survives a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DedupRecord {
    /// End of the window (epoch ms).
    pub expires_ms: u64,
    /// Message id of the original send.
    pub message_id: String,
    /// Sequence number of the original send.
    pub sequence_number: u128,
}

/// A message move task (table `move_tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// Task id (UUID).
    pub id: String,
    /// Opaque handle given to the client (§4).
    pub handle: String,
    /// Dead-letter queue ARN.
    pub source_arn: String,
    /// Destination ARN, when given.
    pub destination_arn: Option<String>,
    /// Rate limit, when given.
    pub rate: Option<u64>,
    /// The status as the wire shows it: RUNNING, COMPLETED, CANCELLED or FAILED.
    pub status: String,
    /// Moved so far.
    pub moved: u64,
    /// Messages in the source when the task started.
    pub to_move: u64,
    /// Why the task failed.
    pub failure_reason: Option<String>,
    /// Epoch ms.
    pub started_ms: u64,
}

static NO_EXTRA: MessageExtra = MessageExtra {
    attributes: BTreeMap::new(),
    trace_header: None,
    group_id: None,
    dedup_id: None,
    sequence_number: None,
    dead_letter_source_arn: None,
};

impl MessageRecord {
    /// The optional parts (all empty when there are none).
    #[must_use]
    pub fn extra(&self) -> &MessageExtra {
        self.extra.as_deref().unwrap_or(&NO_EXTRA)
    }

    /// The optional parts, for changing them.
    pub fn extra_mut(&mut self) -> &mut MessageExtra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// Drops the extra box again when everything in it is empty.
    pub fn compact(&mut self) {
        if self.extra.as_deref().is_some_and(|e| *e == NO_EXTRA) {
            self.extra = None;
        }
    }

    /// The message id as clients see it.
    #[must_use]
    pub fn message_id(&self) -> String {
        self.id.hyphenated().to_string()
    }

    /// When the message first becomes visible.
    #[must_use]
    pub fn first_visible_ms(&self) -> u64 {
        self.sent_ms + u64::from(self.delay_s) * 1000
    }
}

impl StateRecord {
    /// The state of a message that was never received: due at send + delay.
    #[must_use]
    pub fn initial(rec: &MessageRecord) -> Self {
        Self {
            visible_at_ms: rec.first_visible_ms(),
            ..Self::default()
        }
    }
}

impl From<MessageAttributeValue> for StoredAttributeValue {
    fn from(v: MessageAttributeValue) -> Self {
        Self {
            data_type: v.data_type,
            string_value: v.string_value,
            binary_value: v.binary_value,
            string_list_values: v.string_list_values,
            binary_list_values: v.binary_list_values,
        }
    }
}

impl From<&StoredAttributeValue> for MessageAttributeValue {
    fn from(v: &StoredAttributeValue) -> Self {
        Self {
            data_type: v.data_type.clone(),
            string_value: v.string_value.clone(),
            binary_value: v.binary_value.clone(),
            string_list_values: v.string_list_values.clone(),
            binary_list_values: v.binary_list_values.clone(),
        }
    }
}

/// What the loader needs of a stored message to index it (`index::Head`, the initial state,
/// FIFO sequence numbers), decoded from a [`MessageRecord`]'s bytes without copying its body:
/// a restart indexes a backlog without holding its bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexFields {
    /// Message id.
    pub id: uuid::Uuid,
    /// Epoch ms of the send.
    pub sent_ms: u64,
    /// Delay applied at the send, seconds.
    pub delay_s: u32,
    /// Group id.
    pub group_id: Option<String>,
    /// FIFO sequence number.
    pub sequence_number: Option<u128>,
}

impl IndexFields {
    /// The state of a message that was never received: due at send + delay.
    #[must_use]
    pub fn initial_state(&self) -> StateRecord {
        StateRecord {
            visible_at_ms: self.sent_ms + u64::from(self.delay_s) * 1000,
            ..StateRecord::default()
        }
    }
}

/// [`MessageRecord`]'s layout with the body borrowed (postcard writes a string and a byte
/// string alike: a length, then the bytes).
#[derive(Deserialize)]
struct MessageSkim<'a> {
    id: uuid::Uuid,
    #[serde(borrow)]
    _body: &'a [u8],
    sent_ms: u64,
    delay_s: u32,
    _md5_of_body: [u8; 16],
    extra: Option<Box<MessageExtra>>,
}

/// Decodes the index fields of a stored message record.
pub(crate) fn decode_index_fields(b: &[u8]) -> Result<IndexFields, String> {
    let m: MessageSkim<'_> = decode(b)?;
    let (group_id, sequence_number) = m
        .extra
        .map_or((None, None), |x| (x.group_id, x.sequence_number));
    Ok(IndexFields {
        id: m.id,
        sent_ms: m.sent_ms,
        delay_s: m.delay_s,
        group_id,
        sequence_number,
    })
}

/// Encodes a record for storage (postcard).
#[must_use]
pub(crate) fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    // postcard only fails on writer errors, which a Vec never raises.
    postcard::to_stdvec(v).unwrap_or_default()
}

/// Decodes a stored record.
pub(crate) fn decode<'a, T: Deserialize<'a>>(b: &'a [u8]) -> Result<T, String> {
    postcard::from_bytes(b).map_err(|e| e.to_string())
}

/// Converts a request's user attributes into their stored form.
#[must_use]
pub(crate) fn store_attributes(attrs: MessageAttributes) -> BTreeMap<String, StoredAttributeValue> {
    attrs.into_iter().map(|(k, v)| (k, v.into())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> MessageRecord {
        MessageRecord {
            id: uuid::Uuid::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
            body: "hi".into(),
            sent_ms: 1_700_000_000_000,
            delay_s: 5,
            md5_of_body: [7; 16],
            extra: None,
        }
    }

    #[test]
    fn plain_messages_have_no_extra() {
        let mut r = plain();
        assert_eq!(r.message_id(), "01020304-0506-0708-090a-0b0c0d0e0f10");
        assert_eq!(r.first_visible_ms(), 1_700_000_005_000);
        r.extra_mut().group_id = None;
        r.compact();
        assert!(r.extra.is_none());
        r.extra_mut().group_id = Some("g".into());
        r.compact();
        assert_eq!(r.extra().group_id.as_deref(), Some("g"));
    }

    #[test]
    fn index_fields_decode_without_the_body() {
        let mut r = plain();
        assert_eq!(
            decode_index_fields(&encode(&r)).expect("decodes"),
            IndexFields {
                id: r.id,
                sent_ms: r.sent_ms,
                delay_s: 5,
                group_id: None,
                sequence_number: None,
            }
        );
        r.extra_mut().group_id = Some("g".into());
        r.extra_mut().sequence_number = Some(42);
        r.extra_mut().trace_header = Some("t".into());
        let f = decode_index_fields(&encode(&r)).expect("decodes");
        assert_eq!(f.group_id.as_deref(), Some("g"));
        assert_eq!(f.sequence_number, Some(42));
        assert_eq!(f.initial_state(), StateRecord::initial(&r));
    }

    #[test]
    fn attribute_values_convert_both_ways() {
        let v = MessageAttributeValue::binary("Binary.gif", &[0, 255]);
        let stored = StoredAttributeValue::from(v.clone());
        assert_eq!(MessageAttributeValue::from(&stored), v);
    }

    /// Asserts that `rec` encodes to exactly `bytes` and that `bytes` decode back to `rec`.
    fn pinned<T>(rec: &T, bytes: &[u8])
    where
        T: Serialize + for<'a> Deserialize<'a> + PartialEq + std::fmt::Debug,
    {
        assert_eq!(encode(rec), bytes, "encoding of {rec:?}");
        assert_eq!(&decode::<T>(bytes).expect("decodes"), rec);
    }

    /// The bytes below were written by schema version 2 as released. If this test fails, the
    /// on-disk format changed: restore it, or bump `SCHEMA_VERSION` and update docs/storage.md.
    #[test]
    fn pinned_encodings() {
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "n".to_owned(),
            StoredAttributeValue::from(MessageAttributeValue::string("Number", "1")),
        );
        attributes.insert(
            "b".to_owned(),
            StoredAttributeValue::from(MessageAttributeValue::binary("Binary", &[0, 255])),
        );
        let full = MessageRecord {
            extra: Some(Box::new(MessageExtra {
                attributes,
                trace_header: Some("t".into()),
                group_id: Some("g".into()),
                dedup_id: Some("d".into()),
                sequence_number: Some((1 << 64) + 300),
                dead_letter_source_arn: Some("arn:aws:sqs:us-east-1:000000000000:s".into()),
            })),
            ..plain()
        };
        let head: &[u8] = &[
            16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 2, 104, 105, 128, 208, 149,
            255, 188, 49, 5, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        ];
        pinned(&plain(), &[head, &[0]].concat());
        let extra: &[u8] = &[
            1, 2, 1, 98, 6, 66, 105, 110, 97, 114, 121, 0, 1, 2, 0, 255, 0, 0, 1, 110, 6, 78, 117,
            109, 98, 101, 114, 1, 1, 49, 0, 0, 0, 1, 1, 116, 1, 1, 103, 1, 1, 100, 1, 172, 130,
            128, 128, 128, 128, 128, 128, 128, 2, 1, 36, 97, 114, 110, 58, 97, 119, 115, 58, 115,
            113, 115, 58, 117, 115, 45, 101, 97, 115, 116, 45, 49, 58, 48, 48, 48, 48, 48, 48, 48,
            48, 48, 48, 48, 48, 58, 115,
        ];
        pinned(&full, &[head, extra].concat());

        let state = StateRecord {
            visible_at_ms: 1_700_000_030_000,
            receive_count: 2,
            first_receive_ms: Some(1_700_000_000_500),
            last_receive_ms: None,
            nonce: 0xdead_beef,
        };
        pinned(
            &state,
            &[
                176, 186, 151, 255, 188, 49, 2, 1, 244, 211, 149, 255, 188, 49, 0, 239, 253, 182,
                245, 13,
            ],
        );

        let policy =
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d","maxReceiveCount":3}"#;
        let queue = QueueRecord {
            name: "q.fifo".into(),
            fifo: true,
            attributes: [("DelaySeconds", "0"), ("RedrivePolicy", policy)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            tags: [("team".to_owned(), "shop".to_owned())].into(),
            created_s: 1_700_000_000,
            modified_s: 1_700_000_001,
            last_purge_ms: Some(1_700_000_000_002),
            dedup_per_group: true,
            scope: None,
        };
        let mut bytes = vec![6, 113, 46, 102, 105, 102, 111, 1, 2, 12];
        bytes.extend_from_slice(b"DelaySeconds");
        bytes.extend_from_slice(&[1, 48, 13]);
        bytes.extend_from_slice(b"RedrivePolicy");
        bytes.push(82);
        bytes.extend_from_slice(policy.as_bytes());
        bytes.extend_from_slice(&[
            1, 4, 116, 101, 97, 109, 4, 115, 104, 111, 112, 128, 226, 207, 170, 6, 129, 226, 207,
            170, 6, 1, 130, 208, 149, 255, 188, 49, 1,
        ]);
        // Schema 2 wrote the same fields without the trailing scope: still readable.
        assert_eq!(decode_queue(&bytes), Ok(queue.clone()));
        bytes.push(0);
        pinned(&queue, &bytes);
        let scoped = QueueRecord {
            scope: Some(ScopeRecord {
                account: "123456789012".into(),
                region: "eu-west-1".into(),
            }),
            ..queue
        };
        let mut scoped_bytes = bytes[..bytes.len() - 1].to_vec();
        scoped_bytes.extend_from_slice(&[1, 12]);
        scoped_bytes.extend_from_slice(b"123456789012");
        scoped_bytes.push(9);
        scoped_bytes.extend_from_slice(b"eu-west-1");
        pinned(&scoped, &scoped_bytes);
        assert_eq!(decode_queue(&scoped_bytes), Ok(scoped));

        let dedup = DedupRecord {
            expires_ms: 1_700_000_300_000,
            message_id: "m".into(),
            sequence_number: (1 << 64) + 1,
        };
        pinned(
            &dedup,
            &[
                224, 247, 167, 255, 188, 49, 1, 109, 129, 128, 128, 128, 128, 128, 128, 128, 128, 2,
            ],
        );

        let task = TaskRecord {
            id: "t".into(),
            handle: "h".into(),
            source_arn: "s".into(),
            destination_arn: Some("d".into()),
            rate: Some(10),
            status: "FAILED".into(),
            moved: 3,
            to_move: 4,
            failure_reason: Some("r".into()),
            started_ms: 1_700_000_000_000,
        };
        pinned(
            &task,
            &[
                1, 116, 1, 104, 1, 115, 1, 1, 100, 1, 10, 6, 70, 65, 73, 76, 69, 68, 3, 4, 1, 1,
                114, 128, 208, 149, 255, 188, 49,
            ],
        );
    }
}
