//! Engine layer: the stored form of a message, kept small because a backlog holds millions.
//!
//! The common case (a standard message without attributes) needs only the core fields; every
//! optional part lives in one boxed [`MessageExtra`] that is absent when empty.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::receipt::fingerprint;
use crate::command::MessageAttributes;

/// The immutable part of a message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MessageRecord {
    /// Message id (a UUID).
    pub id: uuid::Uuid,
    /// Body.
    pub body: String,
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
pub struct MessageExtra {
    /// User attributes.
    pub attributes: MessageAttributes,
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

/// Parses a generated message id; ids that are not UUIDs (never produced by the id
/// generators) are hashed into one so that nothing panics.
#[must_use]
pub fn parse_id(id: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(id)
        .unwrap_or_else(|_| uuid::Uuid::from_u64_pair(fingerprint(id.as_bytes()), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_plain_messages_have_no_extra() {
        let id = "4c0e4e1e-0b6f-4b7e-9c43-6f0c7b8c1a2d";
        let mut r = MessageRecord {
            id: parse_id(id),
            body: "b".into(),
            sent_ms: 1000,
            delay_s: 2,
            md5_of_body: [0; 16],
            extra: None,
        };
        assert_eq!(r.message_id(), id);
        assert_eq!(r.first_visible_ms(), 3000);
        r.extra_mut().group_id = None;
        r.compact();
        assert!(r.extra.is_none());
        r.extra_mut().group_id = Some("g".into());
        r.compact();
        assert_eq!(r.extra().group_id.as_deref(), Some("g"));
        assert_ne!(parse_id("not-a-uuid"), parse_id("other"));
    }
}
