//! Command layer: the MD5 checksums SQS returns (docs/protocol.md §6.3, §6.4), and the one
//! lower-case hex encoder.
//!
//! Pure functions over command types; imports neither `wire` nor `engine`.

use md5::{Digest, Md5};

use super::types::{MessageAttributeValue, MessageAttributes};

/// The raw MD5 of arbitrary bytes.
#[must_use]
pub fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

/// Lower-case hex of a digest (a table lookup per nibble; this runs on every send and receive).
/// The only hex encoder: MD5s here, content-based deduplication ids in the engine.
#[must_use]
pub fn hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(digest.len() * 2);
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

fn put_len_prefixed(h: &mut Md5, bytes: &[u8]) {
    // Lengths are bounded by the request size limit, far below u32::MAX.
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    h.update(len.to_be_bytes());
    h.update(bytes);
}

fn put_value(h: &mut Md5, v: &MessageAttributeValue) {
    if let Some(s) = &v.string_value {
        h.update([1u8]);
        put_len_prefixed(h, s.as_bytes());
    } else if let Some(b) = &v.binary_value {
        h.update([2u8]);
        put_len_prefixed(h, b);
    } else if !v.string_list_values.is_empty() {
        h.update([3u8]);
        for s in &v.string_list_values {
            put_len_prefixed(h, s.as_bytes());
        }
    } else if !v.binary_list_values.is_empty() {
        h.update([4u8]);
        for b in &v.binary_list_values {
            put_len_prefixed(h, b);
        }
    }
}

/// MD5 over a set of message attributes, as SDKs verify it (§6.4): names sorted, each of name,
/// full DataType and value length-prefixed, with a transport byte before the value. `None` when
/// the set is empty: AWS omits the member then (G-2).
#[must_use]
pub fn md5_of_attributes<'a>(
    attrs: impl IntoIterator<Item = (&'a String, &'a MessageAttributeValue)>,
) -> Option<String> {
    let mut h = Md5::new();
    let mut any = false;
    // Callers pass BTreeMap iterators, which are already in byte order.
    for (name, value) in attrs {
        any = true;
        put_len_prefixed(&mut h, name.as_bytes());
        put_len_prefixed(&mut h, value.data_type.as_bytes());
        put_value(&mut h, value);
    }
    any.then(|| hex(&h.finalize()))
}

/// Shorthand for a whole attribute map.
#[must_use]
pub fn md5_of_map(attrs: &MessageAttributes) -> Option<String> {
    md5_of_attributes(attrs.iter())
}

#[cfg(test)]
mod tests {
    use crate::command::checksum::*;

    fn s(pairs: &[(&str, &str, &str)]) -> MessageAttributes {
        pairs
            .iter()
            .map(|(n, t, v)| ((*n).to_owned(), MessageAttributeValue::string(t, v)))
            .collect()
    }

    #[test]
    fn body_md5() {
        assert_eq!(hex(&md5(b"msg")), "6e2baaf3b97dbeef01c0043275f9a0e7");
    }

    #[test]
    fn aws_recorded_vectors() {
        type Case<'a> = (&'a [(&'a str, &'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            (
                &[("Foo", "String", "Bar")],
                "ae7155c6026991b6d54b11589678bf9c",
            ),
            (
                &[("MyAttribute", "String", "foobar")],
                "adb59cd4678ea5a855436b949cd07ab6",
            ),
            (&[("k", "String", "x")], "a45daa70926828a2f0a1db3418e6feb4"),
            (
                &[("timestamp", "Number", "1493147359900")],
                "235c5c510d26fb653d073faed50ae77c",
            ),
            (
                &[
                    ("General", "String", "Kenobi"),
                    ("Hello", "String", "There"),
                    ("Help.Me", "String", "Me"),
                ],
                "4c360f3fdafd970e05fae2f149d997f5",
            ),
            (
                &[
                    ("General", "String", "Kenobi"),
                    ("Hello", "String", "There"),
                ],
                "fca026605781cb4126a1e9044df24232",
            ),
            (
                &[("Hello", "String", "There")],
                "a311262e065454b75da111d535b8dacd",
            ),
            (
                &[("Hello", "String", "There"), ("Help.Me", "String", "Me")],
                "83fee93c1bcd8b9a5a923ffacdc636c7",
            ),
            (
                &[("timestamp", "Number.java.lang.Long", "1493147359900")],
                "2e2e4876d8e0bd6b8c2c8f556831c349",
            ),
            (
                &[(
                    "AWSTraceHeader",
                    "String",
                    "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
                )],
                "5ae4d5d7636402d80f4eb6d213245a88",
            ),
        ];
        for (attrs, want) in cases {
            assert_eq!(md5_of_map(&s(attrs)).as_deref(), Some(*want), "{attrs:?}");
        }
    }

    #[test]
    fn insertion_order_does_not_matter() {
        let a = s(&[
            ("Hello", "String", "There"),
            ("General", "String", "Kenobi"),
        ]);
        assert_eq!(
            md5_of_map(&a).as_deref(),
            Some("fca026605781cb4126a1e9044df24232")
        );
    }

    #[test]
    fn binary_vectors_hash_decoded_bytes() {
        let mut m = MessageAttributes::new();
        m.insert(
            "attr1".into(),
            MessageAttributeValue::binary(
                "Binary",
                b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01",
            ),
        );
        assert_eq!(
            md5_of_map(&m).as_deref(),
            Some("8cbe4db156db8a94db8b801b7addb984")
        );
        let mut m = MessageAttributes::new();
        m.insert(
            "b".into(),
            MessageAttributeValue::binary("Binary", &[0, 1, 2]),
        );
        assert_eq!(
            md5_of_map(&m).as_deref(),
            Some("0911ac989fa4a4b3440f074ba9941547")
        );
    }

    #[test]
    fn no_attributes_no_md5() {
        assert_eq!(md5_of_map(&MessageAttributes::new()), None);
    }
}
