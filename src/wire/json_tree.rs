//! Wire layer: the borrowed JSON tree that AWS JSON 1.0 request bodies are parsed into.
//!
//! It accepts exactly the documents `serde_json::Value` accepts (the same parser does the work,
//! through `deserialize_any`, so strings, escapes, numbers and nesting are checked identically)
//! and keeps what the JSON reader (`JsonParams` in `params.rs`) reads from a `Value`, without
//! its costs: strings without escapes borrow from the body, objects are plain vectors of members
//! in document order (no per-object hash map, no owned keys), and numbers keep only what
//! `Value::as_i64` would say. Duplicate keys are kept; readers give them `Value`'s meaning (the
//! last value wins, at the position of the first).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One JSON value, borrowing from the request body where it can.
#[derive(Debug, Clone, PartialEq)]
pub enum Jv<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: `Some` when `serde_json::Value::as_i64` would give one (an integer within
    /// `i64`), `None` for every other number (fractions, exponents, `-0`, beyond `i64`).
    Num(Option<i64>),
    /// A string, unescaped.
    Str(Cow<'a, str>),
    /// An array.
    Arr(Vec<Jv<'a>>),
    /// An object's members, in document order, duplicates included.
    Obj(Vec<(Cow<'a, str>, Jv<'a>)>),
}

impl<'a> Jv<'a> {
    /// Parses a whole document: the same syntax, limits and errors as
    /// `serde_json::from_slice::<Value>`.
    pub fn parse(text: &'a [u8]) -> serde_json::Result<Jv<'a>> {
        serde_json::from_slice(text)
    }

    /// The string, if this is one.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Jv::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is a number `Value::as_i64` reads.
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Jv::Num(n) => *n,
            _ => None,
        }
    }

    /// The members, if this is an object.
    #[must_use]
    pub fn as_object(&self) -> Option<&[(Cow<'a, str>, Jv<'a>)]> {
        match self {
            Jv::Obj(m) => Some(m),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    #[must_use]
    pub fn as_array(&self) -> Option<&[Jv<'a>]> {
        match self {
            Jv::Arr(a) => Some(a),
            _ => None,
        }
    }

    /// Whether this is `null`.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Jv::Null)
    }
}

/// The value of `key` in an object's members as `Value` would hold it: the last one given.
#[must_use]
pub fn member<'m, 'a>(members: &'m [(Cow<'a, str>, Jv<'a>)], key: &str) -> Option<&'m Jv<'a>> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Members with duplicates resolved as `Value`'s map does: each key once, at the position of
/// its first appearance, with the value of its last. Linear for small objects, hashed for big
/// ones, so a body with many repeated keys cannot make this quadratic.
#[must_use]
pub fn unique<'m, 'a>(members: &'m [(Cow<'a, str>, Jv<'a>)]) -> Vec<(&'m str, &'m Jv<'a>)> {
    let mut out: Vec<(&'m str, &'m Jv<'a>)> = Vec::with_capacity(members.len());
    if members.len() <= 16 {
        for (k, v) in members {
            match out.iter_mut().find(|(seen, _)| *seen == k.as_ref()) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
    } else {
        let mut at: HashMap<&'m str, usize> = HashMap::with_capacity(members.len());
        for (k, v) in members {
            match at.get(k.as_ref()) {
                Some(&i) => out[i].1 = v,
                None => {
                    at.insert(k, out.len());
                    out.push((k, v));
                }
            }
        }
    }
    out
}

struct JvVisitor;

impl<'de> Visitor<'de> for JvVisitor {
    type Value = Jv<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Jv<'de>, E> {
        Ok(Jv::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Jv<'de>, E> {
        Ok(Jv::Num(Some(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Jv<'de>, E> {
        Ok(Jv::Num(i64::try_from(v).ok()))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Jv<'de>, E> {
        Ok(Jv::Num(None))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Jv<'de>, E> {
        Ok(Jv::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Jv<'de>, E> {
        Ok(Jv::Str(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Jv<'de>, E> {
        Ok(Jv::Str(Cow::Owned(v)))
    }

    fn visit_none<E>(self) -> Result<Jv<'de>, E> {
        Ok(Jv::Null)
    }

    fn visit_unit<E>(self) -> Result<Jv<'de>, E> {
        Ok(Jv::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Jv<'de>, D::Error> {
        Jv::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Jv<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Jv::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Jv<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).clamp(4, 64));
        while let Some(Key(k)) = map.next_key()? {
            members.push((k, map.next_value()?));
        }
        Ok(Jv::Obj(members))
    }
}

impl<'de> Deserialize<'de> for Jv<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Jv<'de>, D::Error> {
        d.deserialize_any(JvVisitor)
    }
}

/// An object key, borrowed from the body unless it holds escapes.
struct Key<'a>(Cow<'a, str>);

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key<'de>, E> {
        std::str::from_utf8(v)
            .map(|s| Key(Cow::Owned(s.to_owned())))
            .map_err(|_| E::invalid_value(de::Unexpected::Bytes(v), &self))
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::wire::json_tree::*;

    /// What a `Value` holds, in the tree's terms, for comparing the two parsers.
    fn from_value(v: &Value) -> Jv<'static> {
        match v {
            Value::Null => Jv::Null,
            Value::Bool(b) => Jv::Bool(*b),
            Value::Number(n) => Jv::Num(n.as_i64()),
            Value::String(s) => Jv::Str(Cow::Owned(s.clone())),
            Value::Array(a) => Jv::Arr(a.iter().map(from_value).collect()),
            Value::Object(o) => Jv::Obj(
                o.iter()
                    .map(|(k, v)| (Cow::Owned(k.clone()), from_value(v)))
                    .collect(),
            ),
        }
    }

    fn resolved(v: &Jv<'_>) -> Jv<'static> {
        match v {
            Jv::Null => Jv::Null,
            Jv::Bool(b) => Jv::Bool(*b),
            Jv::Num(n) => Jv::Num(*n),
            Jv::Str(s) => Jv::Str(Cow::Owned(s.to_string())),
            Jv::Arr(a) => Jv::Arr(a.iter().map(resolved).collect()),
            Jv::Obj(m) => Jv::Obj(
                unique(m)
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.to_owned()), resolved(v)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn accepts_and_refuses_what_value_does_and_holds_the_same() {
        let docs: &[&str] = &[
            r#"{"a":1,"b":"x","a":null,"c":[1,-2,3.5,1e2,-0,18446744073709551615,9223372036854775807]}"#,
            r#"{"k\u0041":"\ud83d\ude00\n","k\u0041":{"z":true,"y":false,"z":[]}}"#,
            r#"  {"x":"\"\\\/\b\f\n\r\t"}  "#,
            r#"[1,{"a":{}}]"#,
            r#""s""#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00x"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":-1e400}"#,
            r#"{"a":1,}"#,
            r#"{"a":"x"} trailing"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":01}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"#,
            r#"{"a":9223372036854775808,"b":-9223372036854775808,"c":-9223372036854775809}"#,
        ];
        for doc in docs {
            let want = serde_json::from_slice::<Value>(doc.as_bytes());
            let got = Jv::parse(doc.as_bytes());
            match (&want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(resolved(g), from_value(w), "{doc}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{doc}: Value {want:?}, tree {got:?}"),
            }
        }
        let bad = b"{\"a\":\"\xff\"}";
        assert!(serde_json::from_slice::<Value>(bad).is_err());
        assert!(Jv::parse(bad).is_err());
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(serde_json::from_slice::<Value>(deep.as_bytes()).is_err());
        assert!(Jv::parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn plain_strings_borrow_and_duplicates_resolve_like_value() {
        let doc = br#"{"QueueUrl":"u","MessageBody":"b\n","QueueUrl":"v"}"#;
        let v = Jv::parse(doc).expect("parses");
        let m = v.as_object().expect("object");
        assert!(matches!(&m[0].0, Cow::Borrowed("QueueUrl")));
        assert!(matches!(&m[0].1, Jv::Str(Cow::Borrowed("u"))));
        assert!(matches!(&m[1].1, Jv::Str(Cow::Owned(s)) if s == "b\n"));
        assert_eq!(member(m, "QueueUrl").and_then(Jv::as_str), Some("v"));
        let u = unique(m);
        assert_eq!(u.len(), 2);
        assert_eq!((u[0].0, u[0].1.as_str()), ("QueueUrl", Some("v")));
        let many: String = (0..40)
            .map(|i| format!("\"k{}\":{i}", i % 20))
            .collect::<Vec<_>>()
            .join(",");
        let doc = format!("{{{many}}}");
        let v = Jv::parse(doc.as_bytes()).expect("parses");
        let u = unique(v.as_object().expect("object"));
        assert_eq!(u.len(), 20);
        assert_eq!((u[3].0, u[3].1.as_i64()), ("k3", Some(23)));
    }
}
