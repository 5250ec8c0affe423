//! Engine layer, store: a message record as memory holds it: its stored encoding in one allocation.
//!
//! A backlog holds millions of records, so their in-memory form is what a message costs beyond
//! its index entry. A [`MessageRecord`] takes two allocations (the record, shared through an
//! `Arc`, and its body): 96 + 208 bytes for a 200-byte body. Its postcard encoding
//! (`record::encode`, the bytes of the `messages` table) holds the same fields in 43 bytes plus
//! the body, in one exactly sized allocation (256 bytes for that body). So the index keeps that
//! encoding ([`PackedRecord`]), and the store writes the same bytes without encoding them again.
//! A reader unpacks a copy; a render needs its own body anyway. Packing goes through a reused
//! per-thread buffer, so the result is allocated once, at its exact size.

use std::cell::RefCell;

use super::record::{self, MessageRecord};

/// The stored encoding of a [`MessageRecord`] (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PackedRecord(Box<[u8]>);

thread_local! {
    /// The buffer records are encoded into before they are copied out at their size.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Buffers larger than this are not kept between packs.
const KEEP_BUFFER: usize = 64 * 1024;

impl PackedRecord {
    /// Encodes a record.
    #[must_use]
    pub fn pack(rec: &MessageRecord) -> Self {
        BUFFER.with(|b| {
            let mut buf = b.take();
            buf.clear();
            // postcard only fails on writer errors, which a Vec never raises.
            let buf = postcard::to_extend(rec, buf).unwrap_or_default();
            let packed = Self(Box::from(buf.as_slice()));
            if buf.capacity() <= KEEP_BUFFER {
                b.replace(buf);
            }
            packed
        })
    }

    /// The encoding, as the `messages` table stores it.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The record.
    ///
    /// # Errors
    /// When the bytes are not a record (a stored record that is damaged).
    pub fn unpack(&self) -> Result<MessageRecord, String> {
        record::decode(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::store::record::MessageExtra;

    fn rec(body: &str, extra: Option<Box<MessageExtra>>) -> MessageRecord {
        MessageRecord {
            id: uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0),
            body: body.into(),
            sent_ms: 1_764_000_000_000,
            delay_s: 900,
            md5_of_body: [7; 16],
            extra,
        }
    }

    #[test]
    fn packs_to_the_stored_encoding_and_back() {
        let extra = MessageExtra {
            group_id: Some("g".into()),
            sequence_number: Some(u128::MAX),
            ..MessageExtra::default()
        };
        for r in [rec("hello", None), rec("", Some(Box::new(extra)))] {
            let p = PackedRecord::pack(&r);
            assert_eq!(p.bytes(), record::encode(&r).as_slice());
            assert_eq!(p.unpack(), Ok(r.clone()));
        }
        assert!(PackedRecord(Box::new([1, 2])).unpack().is_err());
    }

    /// A plain record without delay costs 43 bytes besides its body (module comment;
    /// docs/storage.md).
    #[test]
    fn fixed_fields_stay_small() {
        let mut r = rec(&"x".repeat(200), None);
        r.delay_s = 0;
        assert_eq!(PackedRecord::pack(&r).bytes().len(), 200 + 43);
        assert_eq!(std::mem::size_of::<Option<PackedRecord>>(), 16);
    }

    /// The reused buffer never leaks one record's bytes into the next.
    #[test]
    fn packs_of_different_sizes_in_a_row() {
        let long = rec(&"y".repeat(100_000), None);
        let short = rec("z", None);
        let a = PackedRecord::pack(&long);
        let b = PackedRecord::pack(&short);
        assert_eq!(a.unpack(), Ok(long));
        assert_eq!(b.unpack(), Ok(short));
    }
}
