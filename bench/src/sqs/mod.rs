//! SQS requests rendered for both protocols (`request`), responses parsed only as far as the
//! bench needs (`response`: message ids, receipt handles, bodies, batch failures), and the
//! bench's message bodies, which carry a tag and the send time.

mod request;
mod response;

use std::fmt::Write as _;

pub use request::{
    create_queue, delete, delete_batch, delete_queue, get_attributes, list_queues, purge_queue,
    receive, send, send_batch,
};
pub use response::{
    check_batch, check_send, describe, parse_attribute, parse_queue_url, parse_receive,
};

/// One received message.
#[derive(Debug, Clone)]
pub struct Msg {
    pub handle: String,
    pub body: String,
}

/// One entry of a send batch: (message group, deduplication id, body).
pub struct Entry<'a> {
    pub group: Option<&'a str>,
    pub dedup: Option<&'a str>,
    pub body: &'a str,
}

// Message bodies: `<tag:16 hex>.<send time µs:12 hex>.` then filler to the wanted length.

const FILLER: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A body carrying `tag` and the send time, `len` bytes long (at least 30).
pub fn body(tag: u64, sent_us: u64, len: usize) -> String {
    static FILL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let fill = FILL.get_or_init(|| {
        FILLER
            .iter()
            .cycle()
            .take((1 << 20) + 64)
            .map(|&b| char::from(b))
            .collect()
    });
    let mut s = String::with_capacity(len.max(30));
    let _ = write!(s, "{tag:016x}.{:012x}.", sent_us & 0xffff_ffff_ffff);
    while s.len() < len {
        let n = (len - s.len()).min(fill.len());
        s.push_str(&fill[..n]);
    }
    s
}

/// The tag and send time of a body made by [`body`].
pub fn parse_body(b: &str) -> Option<(u64, u64)> {
    let tag = u64::from_str_radix(b.get(0..16)?, 16).ok()?;
    let ts = u64::from_str_radix(b.get(17..29)?, 16).ok()?;
    Some((tag, ts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_round_trip() {
        let b = body(0xdead_beef, 123_456, 200);
        assert_eq!(b.len(), 200);
        assert_eq!(parse_body(&b), Some((0xdead_beef, 123_456)));
        let big = body(7, 9, 1 << 20);
        assert_eq!(big.len(), 1 << 20);
        assert_eq!(parse_body(&big), Some((7, 9)));
    }
}
