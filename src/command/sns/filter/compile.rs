//! Command layer, SNS: compiling a filter policy, with AWS's limits and texts (docs/sns.md
//! §8.3, §8.4; recorded against AWS in LocalStack's filter-policy snapshots). Texts that AWS
//! follows with a Jackson position suffix are given without it.

use std::net::IpAddr;

use serde_json::{Map, Value};

use super::types::{Field, FilterPolicy, Lit, Matcher, NumOp, Pattern};

/// Most top-level keys (§8.3).
const MAX_KEYS: usize = 5;
/// Most combinations (§8.3).
const MAX_COMPLEXITY: u64 = 150;
/// Largest policy, 256 KiB (§8.3).
const MAX_BYTES: usize = 256 * 1024;

/// Why a policy is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    /// A reason that follows the caller's prefix and `FilterPolicy: `.
    Reason(String),
    /// A full message of its own (`Invalid parameter: Filter policy scope …`).
    Whole(String),
}

fn reason(s: impl Into<String>) -> PolicyError {
    PolicyError::Reason(s.into())
}

impl FilterPolicy {
    /// Parses and checks a policy for its scope (`body_scope`: MessageBody).
    pub fn compile(text: &str, body_scope: bool) -> Result<Self, PolicyError> {
        if text.len() > MAX_BYTES {
            return Err(reason("Filter policy is too long"));
        }
        let v: Value =
            serde_json::from_str(text).map_err(|e| reason(format!("failed to parse JSON. {e}")))?;
        let Value::Object(obj) = v else {
            return Err(reason(
                "failed to parse JSON. Filter policy must be an object",
            ));
        };
        let keys = obj.keys().filter(|k| *k != "$or").count();
        let pattern = pattern(&obj, body_scope)?;
        if keys > MAX_KEYS {
            return Err(reason("Filter policy can not have more than 5 keys"));
        }
        if complexity(&pattern) > MAX_COMPLEXITY {
            return Err(reason("Filter policy is too complex"));
        }
        Ok(Self {
            pattern,
            body_scope,
        })
    }

    /// Whether the policy filters on the message body.
    #[must_use]
    pub fn body_scope(&self) -> bool {
        self.body_scope
    }

    pub(super) fn pattern(&self) -> &Pattern {
        &self.pattern
    }
}

fn complexity(p: &Pattern) -> u64 {
    let mut c: u64 = 1;
    for (_, f) in &p.fields {
        c = c.saturating_mul(match f {
            Field::Leaf(m) => m.len() as u64,
            Field::Nested(n) => complexity(n),
        });
    }
    for group in &p.ors {
        c = c.saturating_mul(group.iter().map(complexity).sum::<u64>().max(1));
    }
    c
}

fn pattern(obj: &Map<String, Value>, body_scope: bool) -> Result<Pattern, PolicyError> {
    let mut out = Pattern::default();
    for (key, v) in obj {
        match v {
            Value::Array(alts) if key == "$or" => {
                let mut group = Vec::new();
                for alt in alts {
                    let Value::Object(m) = alt else {
                        return Err(reason("\"$or\" must be an array of objects"));
                    };
                    group.push(pattern(m, body_scope)?);
                }
                if group.len() < 2 {
                    // [E] EventBridge's rule: $or needs at least two alternatives.
                    return Err(reason("Or condition must have at least 2 elements"));
                }
                out.ors.push(group);
            }
            Value::Array(list) => out.fields.push((key.clone(), Field::Leaf(matchers(list)?))),
            Value::Object(nested) if body_scope => {
                out.fields
                    .push((key.clone(), Field::Nested(pattern(nested, body_scope)?)));
            }
            Value::Object(_) => {
                return Err(PolicyError::Whole(
                    "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"
                        .into(),
                ));
            }
            _ => return Err(reason(format!("\"{key}\" must be an object or an array"))),
        }
    }
    Ok(out)
}

fn lit(v: &Value) -> Option<Lit> {
    Some(match v {
        Value::String(s) => Lit::Str(s.clone()),
        Value::Number(n) => Lit::Num(n.as_f64()?),
        Value::Bool(b) => Lit::Bool(*b),
        Value::Null => Lit::Null,
        _ => return None,
    })
}

fn matchers(list: &[Value]) -> Result<Vec<Matcher>, PolicyError> {
    if list.is_empty() {
        return Err(reason("Empty arrays are not allowed"));
    }
    list.iter()
        .map(|v| match v {
            Value::Object(op) => operator(op),
            Value::Array(_) => Err(reason(
                "Match value must be String, number, true, false, or null",
            )),
            other => lit(other)
                .map(Matcher::Exact)
                .ok_or_else(|| reason("Match value must be String, number, true, false, or null")),
        })
        .collect()
}

fn string_arg(name: &str, arg: &Value) -> Result<String, PolicyError> {
    arg.as_str()
        .map(str::to_owned)
        .ok_or_else(|| reason(format!("{name} match pattern must be a string")))
}

fn operator(op: &Map<String, Value>) -> Result<Matcher, PolicyError> {
    let mut it = op.iter();
    let (Some((name, arg)), None) = (it.next(), it.next()) else {
        return Err(reason("Only one key allowed in match expression"));
    };
    match name.as_str() {
        "prefix" => string_arg("prefix", arg).map(Matcher::Prefix),
        "suffix" => string_arg("suffix", arg).map(Matcher::Suffix),
        "equals-ignore-case" => string_arg("equals-ignore-case", arg).map(Matcher::IgnoreCase),
        "exists" => arg
            .as_bool()
            .map(Matcher::Exists)
            .ok_or_else(|| reason("exists match pattern must be either true or false.")),
        "cidr" => cidr(arg),
        "numeric" => numeric(arg).map(Matcher::Numeric),
        "anything-but" => anything_but(arg),
        other => Err(reason(format!("Unrecognized match type {other}"))),
    }
}

fn anything_but(arg: &Value) -> Result<Matcher, PolicyError> {
    match arg {
        Value::Object(inner) => {
            let mut it = inner.iter();
            let (Some((name, v)), None) = (it.next(), it.next()) else {
                return Err(reason("Only one key allowed in match expression"));
            };
            match name.as_str() {
                "prefix" => string_arg("prefix", v).map(Matcher::AnythingButPrefix),
                other => Err(reason(format!("Unsupported anything-but pattern: {other}"))),
            }
        }
        Value::Array(vals) => vals
            .iter()
            .map(|v| match v {
                Value::String(_) | Value::Number(_) => lit(v).ok_or(()),
                _ => Err(()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Matcher::AnythingBut)
            .map_err(|()| reason("Inside anything but list, start|null|boolean is not supported.")),
        Value::String(_) | Value::Number(_) => {
            Ok(Matcher::AnythingBut(lit(arg).into_iter().collect()))
        }
        _ => Err(reason(
            "Value of anything-but must be an array or single string/number value.",
        )),
    }
}

fn num_op(s: &str) -> Option<NumOp> {
    Some(match s {
        "=" => NumOp::Eq,
        "<" => NumOp::Lt,
        "<=" => NumOp::Le,
        ">" => NumOp::Gt,
        ">=" => NumOp::Ge,
        _ => return None,
    })
}

fn numeric(arg: &Value) -> Result<Vec<(NumOp, f64)>, PolicyError> {
    let Some(items) = arg.as_array() else {
        return Err(reason("Value of numeric must be an array."));
    };
    let Some(first) = items.first() else {
        return Err(reason("Invalid member in numeric match: ]"));
    };
    let op_at = |i: usize| -> Result<(NumOp, &str), PolicyError> {
        let v = &items[i];
        let Some(s) = v.as_str() else {
            return Err(reason(format!("Invalid member in numeric match: {v}")));
        };
        num_op(s)
            .map(|o| (o, s))
            .ok_or_else(|| reason(format!("Unrecognized numeric range operator: {s}")))
    };
    let value_at = |i: usize, name: &str| -> Result<f64, PolicyError> {
        let n = items
            .get(i)
            .and_then(Value::as_f64)
            .ok_or_else(|| reason(format!("Value of {name} must be numeric")))?;
        if n.abs() > 1e9 {
            return Err(reason(format!("Bad value in numeric range: {n}")));
        }
        Ok(n)
    };
    let _ = first;
    let (op, name) = op_at(0)?;
    let name = if op == NumOp::Eq { "equals" } else { name };
    let bound = value_at(1, name)?;
    let mut out = vec![(op, bound)];
    match op {
        NumOp::Gt | NumOp::Ge if items.len() > 2 => {
            let (top_op, top_name) = op_at(2)?;
            if !matches!(top_op, NumOp::Lt | NumOp::Le) {
                return Err(reason(format!("Bad numeric range operator: {top_name}")));
            }
            let top = value_at(3, top_name)?;
            if items.len() > 4 {
                return Err(reason("Too many terms in numeric range expression"));
            }
            if bound >= top {
                return Err(reason("Bottom must be less than top"));
            }
            out.push((top_op, top));
        }
        _ if items.len() > 2 => return Err(reason("Too many elements in numeric expression")),
        _ => {}
    }
    Ok(out)
}

fn cidr(arg: &Value) -> Result<Matcher, PolicyError> {
    let s = string_arg("prefix", arg)?;
    let Some((ip, bits)) = s.split_once('/') else {
        return Err(reason("Malformed CIDR, one '/' required"));
    };
    let addr: IpAddr = ip
        .parse()
        .map_err(|_| reason(format!("Nonstandard IP address: {ip}")))?;
    let bits: u8 = bits
        .parse()
        .map_err(|_| reason("Malformed CIDR, mask bits must be an integer"))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(reason("Malformed CIDR, mask bits must be an integer"));
    }
    Ok(Matcher::Cidr(addr, bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p: &str) -> String {
        match FilterPolicy::compile(p, false).unwrap_err() {
            PolicyError::Reason(r) | PolicyError::Whole(r) => r,
        }
    }

    #[test]
    fn texts_of_invalid_policies() {
        assert_eq!(
            err(r#"{"a":[["x"]]}"#),
            "Match value must be String, number, true, false, or null"
        );
        assert_eq!(
            err(r#"{"a":[{"wrong-operator":1}]}"#),
            "Unrecognized match type wrong-operator"
        );
        assert_eq!(
            err(r#"{"a":[{"prefix":"x","suffix":"y"}]}"#),
            "Only one key allowed in match expression"
        );
        assert_eq!(err(r#"{"a":[]}"#), "Empty arrays are not allowed");
        assert_eq!(
            err(r#"{"key_a":"value_one"}"#),
            "\"key_a\" must be an object or an array"
        );
        assert_eq!(
            err(r#"{"a":[{"suffix":1}]}"#),
            "suffix match pattern must be a string"
        );
        assert_eq!(
            err(r#"{"a":[{"cidr":["x"]}]}"#),
            "prefix match pattern must be a string"
        );
        assert_eq!(
            err(r#"{"a":[{"cidr":"10.0.0.0"}]}"#),
            "Malformed CIDR, one '/' required"
        );
        assert_eq!(
            err(r#"{"a":[{"cidr":"10.0.0/24"}]}"#),
            "Nonstandard IP address: 10.0.0"
        );
        assert_eq!(
            err(r#"{"a":[{"cidr":"10.0.0.0/x"}]}"#),
            "Malformed CIDR, mask bits must be an integer"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":[]}]}"#),
            "Invalid member in numeric match: ]"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":[1]}]}"#),
            "Invalid member in numeric match: 1"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":["operator",1]}]}"#),
            "Unrecognized numeric range operator: operator"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":["=","x"]}]}"#),
            "Value of equals must be numeric"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":[">=","x"]}]}"#),
            "Value of >= must be numeric"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":["<",100,">",10]}]}"#),
            "Too many elements in numeric expression"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":[">=",1,">",2]}]}"#),
            "Bad numeric range operator: >"
        );
        assert_eq!(
            err(r#"{"a":[{"numeric":[">",10,"<",5]}]}"#),
            "Bottom must be less than top"
        );
        assert_eq!(
            err(r#"{"a":[{"exists":"yes"}]}"#),
            "exists match pattern must be either true or false."
        );
        assert_eq!(
            err(r#"{"a":[{"anything-but":{"suffix":"x"}}]}"#),
            "Unsupported anything-but pattern: suffix"
        );
        assert_eq!(
            err(r#"{"a":[{"anything-but":{"prefix":false}}]}"#),
            "prefix match pattern must be a string"
        );
        assert_eq!(
            err(r#"{"a":{"b":["x"]}}"#),
            "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"
        );
        assert!(FilterPolicy::compile(r#"{"a":{"b":["x"]}}"#, true).is_ok());
        assert_eq!(
            err(r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}"#),
            "Filter policy can not have more than 5 keys"
        );
    }

    #[test]
    fn complexity_is_the_product_of_the_lists() {
        let many: Vec<String> = (0..151).map(|i| i.to_string()).collect();
        assert_eq!(
            err(&format!(r#"{{"a":[{}]}}"#, many.join(","))),
            "Filter policy is too complex"
        );
        let ok: Vec<String> = (0..150).map(|i| i.to_string()).collect();
        assert!(FilterPolicy::compile(&format!(r#"{{"a":[{}]}}"#, ok.join(",")), false).is_ok());
        let l = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        let p = format!(
            r#"{{"a":[{}],"b":[{}],"c":[{}],"d":[{}],"e":[{}]}}"#,
            l(3),
            l(4),
            l(2),
            l(3),
            l(3)
        );
        assert_eq!(err(&p), "Filter policy is too complex");
    }
}
