//! Wire layer: the fields of an AWS Query request, merged from the URL query string and the
//! form body (§2.1), borrowed from the request wherever they need no decoding.
//!
//! A [`Form`] holds each name once, sorted, so that a name and the flattened members under it
//! (`Attribute.1.Name`, `Attribute.1.Value`, …) are found by binary search, and names can be
//! looked up as the concatenation of their parts without building them.
//!
//! Service-neutral: every AWS Query service sends its parameters this way. The one failure,
//! [`NotUtf8`], is turned into an error by the service that reads the form (SQS's is in
//! `sqs/codec.rs`).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A form whose percent-decoded name or value is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8;

/// The merged fields of one request: sorted by name, each name once (the body wins over the
/// query string, and a later field over an earlier one, as map insertion would have it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form<'a> {
    fields: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// Compares `k` with the concatenation of `parts`, byte by byte (the order of `str`).
///
/// Written as a loop over bytes: names are short, and a `memcmp` call per part cost far more
/// than the comparison itself in profiles.
fn cmp_parts(k: &str, parts: &[&str]) -> Ordering {
    let mut rest = k.as_bytes().iter();
    for b in parts.iter().flat_map(|p| p.bytes()) {
        match rest.next() {
            None => return Ordering::Less,
            Some(a) if *a != b => return a.cmp(&b),
            Some(_) => {}
        }
    }
    if rest.next().is_none() {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// `k` without the concatenation of `parts` at its start, if it starts with it.
fn strip_parts<'k>(k: &'k str, parts: &[&str]) -> Option<&'k str> {
    let mut rest = k.as_bytes().iter();
    for b in parts.iter().flat_map(|p| p.bytes()) {
        if rest.next() != Some(&b) {
            return None;
        }
    }
    // The parts are whole strings, so what follows them starts on a character boundary.
    k.get(k.len() - rest.len()..)
}

impl<'a> Form<'a> {
    /// Parses and merges the URL query string and a form body; the body wins (§2.1). A name or
    /// value whose percent-decoded bytes are not UTF-8 is refused rather than altered:
    /// replacing them with U+FFFD would store, and checksum, a message the client never sent.
    pub fn parse(query: Option<&'a str>, body: &'a [u8]) -> Result<Form<'a>, NotUtf8> {
        let mut fields = Vec::new();
        for part in [query.map(str::as_bytes), Some(body)].into_iter().flatten() {
            // memchr finds the separators: splitting byte by byte was most of a Query
            // request's decoding.
            let mut rest = Some(part);
            while let Some(r) = rest {
                let (pair, next) = match memchr::memchr(b'&', r) {
                    Some(i) => (&r[..i], Some(&r[i + 1..])),
                    None => (r, None),
                };
                rest = next;
                if pair.is_empty() {
                    continue;
                }
                let (name, value) = match memchr::memchr(b'=', pair) {
                    Some(i) => (&pair[..i], &pair[i + 1..]),
                    None => (pair, &[][..]),
                };
                fields.push((form_decode(name)?, form_decode(value)?));
            }
        }
        Ok(Self::sorted(fields))
    }

    /// Sorts `fields` by name, keeping for each name the value given last.
    fn sorted(mut fields: Vec<(Cow<'a, str>, Cow<'a, str>)>) -> Self {
        // Stable: fields of one name stay in the order given.
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        fields.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
        Self { fields }
    }

    fn find(&self, parts: &[&str]) -> Result<usize, usize> {
        self.fields.binary_search_by(|(k, _)| cmp_parts(k, parts))
    }

    /// The value of the field named `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.joined(&[key])
    }

    /// The value of the field named by the concatenation of `parts`.
    #[must_use]
    pub fn joined(&self, parts: &[&str]) -> Option<&str> {
        self.find(parts).ok().map(|i| self.fields[i].1.as_ref())
    }

    /// The fields whose names start with the concatenation of `parts`, in name order, each as
    /// the rest of its name and its value.
    pub fn under<'s>(
        &'s self,
        parts: &[&str],
    ) -> impl Iterator<Item = (&'s str, &'s str)> + use<'s, 'a> {
        let start = self
            .fields
            .partition_point(|(k, _)| cmp_parts(k, parts) == Ordering::Less);
        let len = self.fields[start..]
            .iter()
            .take_while(|(k, _)| strip_parts(k, parts).is_some())
            .count();
        let skip: usize = parts.iter().map(|p| p.len()).sum();
        self.fields[start..start + len]
            .iter()
            .map(move |(k, v)| (k.get(skip..).unwrap_or_default(), v.as_ref()))
    }

    /// Takes the field named `key` out.
    pub fn remove(&mut self, key: &str) -> Option<Cow<'a, str>> {
        let i = self.find(&[key]).ok()?;
        Some(self.fields.remove(i).1)
    }

    /// Adds a field unless one of that name is present.
    pub fn insert_absent(&mut self, key: &'a str, value: &'a str) {
        if let Err(i) = self.find(&[key]) {
            self.fields
                .insert(i, (Cow::Borrowed(key), Cow::Borrowed(value)));
        }
    }

    /// The fields as an owned map.
    #[must_use]
    pub fn into_map(self) -> BTreeMap<String, String> {
        self.fields
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for Form<'a> {
    /// Fields given as plain names and values, later ones winning.
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(iter: I) -> Self {
        Self::sorted(
            iter.into_iter()
                .map(|(k, v)| (Cow::Borrowed(k), Cow::Borrowed(v)))
                .collect(),
        )
    }
}

/// The value of one hex digit.
fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes one `application/x-www-form-urlencoded` component: `+` is a space, `%XX` a byte.
/// Borrowed when there is nothing to decode.
fn form_decode(raw: &[u8]) -> Result<Cow<'_, str>, NotUtf8> {
    if memchr::memchr2(b'+', b'%', raw).is_none() {
        return std::str::from_utf8(raw)
            .map(Cow::Borrowed)
            .map_err(|_| NotUtf8);
    }
    // One pass: runs without `+` or `%` are copied whole; `+` is a space; `%` with two hex
    // digits is a byte, any other `%` itself.
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = memchr::memchr2(b'+', b'%', rest) {
        bytes.extend_from_slice(&rest[..at]);
        let escaped = match rest[at..] {
            [b'%', h, l, ..] => hex_digit(h).zip(hex_digit(l)),
            _ => None,
        };
        match (rest[at], escaped) {
            (_, Some((h, l))) => {
                bytes.push(h << 4 | l);
                rest = &rest[at + 3..];
            }
            (b'+', None) => {
                bytes.push(b' ');
                rest = &rest[at + 1..];
            }
            (b, None) => {
                bytes.push(b);
                rest = &rest[at + 1..];
            }
        }
    }
    bytes.extend_from_slice(rest);
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| NotUtf8)
}

#[cfg(test)]
mod tests {
    use crate::wire::form::*;

    fn form_fields(query: Option<&str>, body: &[u8]) -> Result<BTreeMap<String, String>, NotUtf8> {
        Form::parse(query, body).map(Form::into_map)
    }

    #[test]
    fn form_fields_decode_and_merge_with_the_body_winning() {
        let f = form_fields(
            Some("Action=A&QueueUrl=u1"),
            b"QueueUrl=u%2F2&MessageBody=a+b%20c",
        )
        .expect("decodes");
        assert_eq!(f.get("Action").map(String::as_str), Some("A"));
        assert_eq!(f.get("QueueUrl").map(String::as_str), Some("u/2"));
        assert_eq!(f.get("MessageBody").map(String::as_str), Some("a b c"));
        let e = form_fields(None, b"MessageBody=%C3%A9").expect("UTF-8 decodes");
        assert_eq!(e.get("MessageBody").map(String::as_str), Some("\u{e9}"));
        let f = Form::parse(Some("a=1&b=2&a=3"), b"b=4&c&b=5&=6").expect("decodes");
        let want: Form<'_> = [("", "6"), ("a", "3"), ("b", "5"), ("c", "")]
            .into_iter()
            .collect();
        assert_eq!(f, want);
        assert!(matches!(f.fields[1].1, Cow::Borrowed("3")));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused_not_replaced() {
        let err = form_fields(None, b"Action=SendMessage&MessageBody=%FF%FE").unwrap_err();
        assert_eq!(err, NotUtf8);
        assert!(form_fields(None, b"Action=SendMessage&MessageBody=\xff").is_err());
        assert!(form_fields(None, b"Action\xff=SendMessage").is_err());
        // Only `%` with two hex digits is an escape; `+` is a space even next to one.
        for (raw, want) in [
            ("a%41%4a%zz%4", "aAJ%zz%4"),
            ("%+1+%2+%", "% 1 %2 %"),
            ("%%41", "%A"),
            ("%e2%82%AC+", "\u{20ac} "),
        ] {
            assert_eq!(form_decode(raw.as_bytes()).expect("decodes"), want, "{raw}");
        }
        // An escape at every offset of a long component, across the fast path's chunks.
        for esc in ["%41", "+", "%", "%4"] {
            for i in 0..70 {
                let raw = format!("{}{esc}{}", "a".repeat(i), "z".repeat(69 - i));
                let want = format!(
                    "{}{}{}",
                    "a".repeat(i),
                    match esc {
                        "%41" => "A",
                        "+" => " ",
                        other => other,
                    },
                    "z".repeat(69 - i)
                );
                assert_eq!(form_decode(raw.as_bytes()).expect("decodes"), want, "{raw}");
            }
        }
        // The same bytes as the percent-encoding crate's decoder after turning `+` into spaces.
        let alphabet = [b'%', b'+', b'2', b'a', b'F', b'g', b'0', b'~'];
        for n in 0..=5u32 {
            for mut code in 0..8usize.pow(n) {
                let mut raw = Vec::new();
                for _ in 0..n {
                    raw.push(alphabet[code % 8]);
                    code /= 8;
                }
                let spaced: Vec<u8> = raw
                    .iter()
                    .map(|&b| if b == b'+' { b' ' } else { b })
                    .collect();
                let want: Vec<u8> = percent_encoding::percent_decode(&spaced).collect();
                let got = form_decode(&raw).map(|s| s.into_owned().into_bytes());
                match String::from_utf8(want) {
                    Ok(w) => assert_eq!(got.ok(), Some(w.into_bytes()), "{raw:?}"),
                    Err(_) => assert!(got.is_err(), "{raw:?}"),
                }
            }
        }
    }

    #[test]
    fn names_are_found_by_their_parts() {
        let mut f: Form<'_> = [
            ("Attribute.1.Name", "a"),
            ("Attribute.1.Value", "b"),
            ("Attribute.10.Name", "c"),
            ("AttributeName", "d"),
            ("Attribute", "e"),
            ("B", "f"),
        ]
        .into_iter()
        .collect();
        assert_eq!(f.joined(&["Attri", "bute.1", ".", "Value"]), Some("b"));
        assert_eq!(f.joined(&["Attribute", ".1"]), None);
        assert_eq!(f.get("Attribute"), Some("e"));
        let under: Vec<_> = f.under(&["Attribute", "."]).collect();
        assert_eq!(
            under,
            vec![("1.Name", "a"), ("1.Value", "b"), ("10.Name", "c")]
        );
        assert_eq!(f.under(&["C"]).count(), 0);
        assert_eq!(f.remove("B").as_deref(), Some("f"));
        assert_eq!(f.remove("B"), None);
        f.insert_absent("QueueUrl", "/1/q");
        f.insert_absent("QueueUrl", "/2/q");
        assert_eq!(f.get("QueueUrl"), Some("/1/q"));
        for (k, parts) in [
            ("ab", &["a", "b"][..]),
            ("a", &["a", "b"][..]),
            ("abc", &["a", "b"][..]),
            ("b", &["a", "b"][..]),
            ("aa", &["a", "b"][..]),
            ("", &[""][..]),
            ("x", &[][..]),
        ] {
            assert_eq!(cmp_parts(k, parts), k.cmp(parts.concat().as_str()), "{k}");
        }
    }
}
