//! Engine layer, model: the receipt-handle codec.
//!
//! A handle encodes the queue id, the message's sequence number, the nonce of the receive that
//! issued it and a fingerprint of the message id, so it needs no table of its own. The
//! fingerprint matters because sequence numbers (and queue ids) of deleted messages can be
//! reused after a restart: a stale handle must never reach a different message. Clients treat
//! the handle as opaque (§4).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const VERSION: u8 = 2;
const LEN: usize = 1 + 8 + 8 + 8 + 8 + 8;

/// What a receipt handle points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    /// Internal queue id (changes if a queue is deleted and re-created).
    pub queue_id: u64,
    /// Message sequence number within the queue.
    pub seq: u64,
    /// Nonce of the receive that issued the handle.
    pub nonce: u64,
    /// [`fingerprint`] of the message id.
    pub message: u64,
}

/// A 64-bit FNV-1a hash of a message id, carried in handles. The engine's one FNV: a message id
/// that is not a UUID is stored as its fingerprint too (`ops/message.rs`).
#[must_use]
pub fn fingerprint(message_id: &[u8]) -> u64 {
    message_id.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Receipt {
    /// Encodes the handle; `salt` pads it so it looks like AWS's opaque handles.
    #[must_use]
    pub fn encode(&self, salt: u64) -> String {
        let mut b = Vec::with_capacity(LEN);
        b.push(VERSION);
        b.extend_from_slice(&self.queue_id.to_be_bytes());
        b.extend_from_slice(&self.seq.to_be_bytes());
        b.extend_from_slice(&self.nonce.to_be_bytes());
        b.extend_from_slice(&self.message.to_be_bytes());
        b.extend_from_slice(&salt.to_be_bytes());
        format!("AQEB{}", STANDARD.encode(b))
    }

    /// Decodes a handle; `None` for anything that is not one of ours.
    #[must_use]
    pub fn decode(handle: &str) -> Option<Receipt> {
        let b = STANDARD.decode(handle.strip_prefix("AQEB")?).ok()?;
        if b.len() != LEN || b[0] != VERSION {
            return None;
        }
        let word = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Some(Receipt {
            queue_id: word(1),
            seq: word(9),
            nonce: word(17),
            message: word(25),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let r = Receipt {
            queue_id: 3,
            seq: 99,
            nonce: 0xdead_beef,
            message: fingerprint(b"4c0e4e1e-0b6f-4b7e-9c43-6f0c7b8c1a2d"),
        };
        let h = r.encode(42);
        assert!(h.starts_with("AQEB"));
        assert_eq!(Receipt::decode(&h), Some(r));
        assert_eq!(Receipt::decode("garbage"), None);
        assert_eq!(Receipt::decode("AQEBAAAA"), None);
        assert_eq!(Receipt::decode(""), None);
    }
}
