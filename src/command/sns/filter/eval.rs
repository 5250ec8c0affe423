//! Command layer, SNS: matching a compiled filter policy (docs/sns.md §8.1, §8.2): every key
//! must match and, per key, any matcher for any of the value's elements. Attribute scope: a
//! message without attributes matches nothing, `Binary` attributes take no part, `Number`
//! values compare as numbers and `String.Array` values element-wise. Body scope: the body must
//! be a JSON object; keys follow nested objects (a dotted key `a.b` reaches `{"a":{"b":…}}`).

use std::net::IpAddr;

use serde_json::Value;

use super::types::{Field, FilterPolicy, Lit, Matcher, NumOp, Pattern};
use crate::command::MessageAttributes;
use crate::command::sns::validate::base_type;

impl FilterPolicy {
    /// Whether a message with these attributes and this body passes.
    #[must_use]
    pub fn matches(&self, attributes: &MessageAttributes, body: &str) -> bool {
        if self.body_scope() {
            let Ok(v) = serde_json::from_str::<Value>(body) else {
                return false;
            };
            v.is_object() && matches_pattern(self.pattern(), &|path| body_values(&v, path))
        } else {
            if attributes.is_empty() {
                return false;
            }
            matches_pattern(self.pattern(), &|path| attribute_values(attributes, path))
        }
    }
}

/// The values at a key path, `None` when the key is absent.
type Lookup<'a> = dyn Fn(&[&str]) -> Option<Vec<Lit>> + 'a;

fn matches_pattern(p: &Pattern, get: &Lookup<'_>) -> bool {
    matches_at(p, &[], get)
}

fn matches_at(p: &Pattern, at: &[&str], get: &Lookup<'_>) -> bool {
    p.fields.iter().all(|(key, field)| {
        let mut path: Vec<&str> = at.to_vec();
        path.extend(key.split('.'));
        match field {
            Field::Leaf(ms) => {
                let values = get(&path);
                ms.iter().any(|m| matcher(m, values.as_deref()))
            }
            Field::Nested(n) => matches_at(n, &path, get),
        }
    }) && p
        .ors
        .iter()
        .all(|group| group.iter().any(|alt| matches_at(alt, at, get)))
}

fn attribute_values(attrs: &MessageAttributes, path: &[&str]) -> Option<Vec<Lit>> {
    let name = path.join(".");
    let v = attrs.get(&name)?;
    let s = v.string_value.as_deref()?;
    match (base_type(&v.data_type)?, v.data_type.as_str()) {
        ("Binary", _) => None,
        ("Number", _) => Some(vec![
            s.trim().parse().map_or(Lit::Str(s.to_owned()), Lit::Num),
        ]),
        (_, "String.Array") => match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) => Some(items.iter().filter_map(to_lit).collect()),
            _ => Some(vec![Lit::Str(s.to_owned())]),
        },
        _ => Some(vec![Lit::Str(s.to_owned())]),
    }
}

fn to_lit(v: &Value) -> Option<Lit> {
    Some(match v {
        Value::String(s) => Lit::Str(s.clone()),
        Value::Number(n) => Lit::Num(n.as_f64()?),
        Value::Bool(b) => Lit::Bool(*b),
        Value::Null => Lit::Null,
        _ => return None,
    })
}

/// Values at `path` in a JSON body: objects are followed (a segment may also name a dotted
/// key), arrays on the way are searched element-wise, and arrays at the end give their items.
fn body_values(v: &Value, path: &[&str]) -> Option<Vec<Lit>> {
    let mut out = Vec::new();
    let found = collect(v, path, &mut out);
    found.then_some(out)
}

fn collect(v: &Value, path: &[&str], out: &mut Vec<Lit>) -> bool {
    match v {
        Value::Array(items) => {
            let mut any = false;
            for i in items {
                any |= collect(i, path, out);
            }
            any
        }
        _ if path.is_empty() => {
            out.extend(to_lit(v));
            true
        }
        Value::Object(m) => {
            // `a.b.c` as keys `a`, `a.b` …: try each split of the remaining path.
            let mut any = false;
            for n in 1..=path.len() {
                if let Some(next) = m.get(&path[..n].join(".")) {
                    any |= collect(next, &path[n..], out);
                }
            }
            any
        }
        _ => false,
    }
}

fn same(a: &Lit, b: &Lit) -> bool {
    match (a, b) {
        (Lit::Num(x), Lit::Num(y)) => (x - y).abs() < 1e-9,
        _ => a == b,
    }
}

fn matcher(m: &Matcher, values: Option<&[Lit]>) -> bool {
    match m {
        Matcher::Exists(want) => values.is_some() == *want,
        _ => values.is_some_and(|vs| vs.iter().any(|v| one(m, v))),
    }
}

fn one(m: &Matcher, v: &Lit) -> bool {
    let text = match v {
        Lit::Str(s) => Some(s.as_str()),
        _ => None,
    };
    match m {
        Matcher::Exact(l) => same(l, v),
        Matcher::Prefix(p) => text.is_some_and(|t| t.starts_with(p.as_str())),
        Matcher::Suffix(s) => text.is_some_and(|t| t.ends_with(s.as_str())),
        Matcher::IgnoreCase(s) => text.is_some_and(|t| t.to_lowercase() == s.to_lowercase()),
        Matcher::AnythingBut(list) => !list.iter().any(|l| same(l, v)),
        Matcher::AnythingButPrefix(p) => text.is_some_and(|t| !t.starts_with(p.as_str())),
        Matcher::Numeric(ranges) => match v {
            Lit::Num(n) => ranges.iter().all(|&(op, b)| match op {
                NumOp::Eq => (n - b).abs() < 1e-9,
                NumOp::Lt => *n < b,
                NumOp::Le => *n <= b,
                NumOp::Gt => *n > b,
                NumOp::Ge => *n >= b,
            }),
            _ => false,
        },
        Matcher::Cidr(net, bits) => text
            .and_then(|t| t.parse::<IpAddr>().ok())
            .is_some_and(|ip| in_network(ip, *net, *bits)),
        Matcher::Exists(_) => false,
    }
}

fn in_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    let (a, b, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b)), 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    let bits = u32::from(bits);
    if bits == 0 {
        return true;
    }
    let shift = width - bits;
    (a >> shift) == (b >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::MessageAttributeValue;

    fn attrs(pairs: &[(&str, &str, &str)]) -> MessageAttributes {
        pairs
            .iter()
            .map(|(k, t, v)| ((*k).to_owned(), MessageAttributeValue::string(t, v)))
            .collect()
    }

    fn hit(policy: &str, a: &MessageAttributes) -> bool {
        FilterPolicy::compile(policy, false)
            .expect("valid")
            .matches(a, "")
    }

    fn body(policy: &str, b: &str) -> bool {
        FilterPolicy::compile(policy, true)
            .expect("valid")
            .matches(&MessageAttributes::new(), b)
    }

    #[test]
    fn attribute_policies() {
        let a = attrs(&[
            ("store", "String", "example_corp"),
            ("price", "Number", "301.5"),
            ("tags", "String.Array", r#"["a","b"]"#),
            ("ip", "String", "10.0.0.7"),
        ]);
        assert!(hit(r#"{"store":["example_corp"]}"#, &a));
        assert!(!hit(r#"{"store":["other"]}"#, &a));
        assert!(hit(r#"{"price":[{"numeric":["=",3.015e2]}]}"#, &a));
        assert!(hit(r#"{"price":[{"numeric":[">",0,"<=",301.5]}]}"#, &a));
        assert!(hit(r#"{"price":[301.5]}"#, &a));
        assert!(hit(r#"{"tags":["b"]}"#, &a));
        assert!(hit(r#"{"store":[{"prefix":"example"}]}"#, &a));
        assert!(hit(r#"{"store":[{"suffix":"corp"}]}"#, &a));
        assert!(hit(
            r#"{"store":[{"equals-ignore-case":"EXAMPLE_CORP"}]}"#,
            &a
        ));
        assert!(!hit(r#"{"store":[{"anything-but":["example_corp"]}]}"#, &a));
        assert!(hit(r#"{"store":[{"anything-but":{"prefix":"x"}}]}"#, &a));
        assert!(hit(r#"{"gone":[{"exists":false}]}"#, &a));
        assert!(!hit(r#"{"store":[{"exists":false}]}"#, &a));
        assert!(hit(r#"{"ip":[{"cidr":"10.0.0.0/24"}]}"#, &a));
        assert!(!hit(r#"{"ip":[{"cidr":"10.0.1.0/24"}]}"#, &a));
        assert!(hit(r#"{"$or":[{"store":["x"]},{"price":[301.5]}]}"#, &a));
        assert!(!hit(
            r#"{"gone":[{"exists":false}]}"#,
            &MessageAttributes::new()
        ));
        let bin: MessageAttributes = [(
            "b".to_owned(),
            MessageAttributeValue::binary("Binary", &[1]),
        )]
        .into();
        assert!(hit(r#"{"b":[{"exists":false}]}"#, &bin));
    }

    #[test]
    fn body_policies() {
        let b =
            r#"{"order":{"kind":"book","n":3},"object.nested":"x","list":[{"k":"a"},{"k":"b"}]}"#;
        assert!(body(r#"{"order":{"kind":["book"]}}"#, b));
        assert!(body(r#"{"order.kind":["book"]}"#, b));
        assert!(body(r#"{"object":{"nested":["x"]}}"#, b));
        assert!(body(r#"{"list":{"k":["b"]}}"#, b));
        assert!(!body(r#"{"order":{"kind":["cd"]}}"#, b));
        assert!(body(r#"{"order":{"n":[{"numeric":[">",2]}]}}"#, b));
        assert!(!body(r#"{"order":{"kind":["book"]}}"#, "not json"));
    }
}
