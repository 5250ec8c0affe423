//! Tools layer: Lambda's event-filter patterns, applied to each record of a push target.
//!
//! A pattern is a JSON object whose keys follow the record's (`body`, `attributes`,
//! `messageAttributes`, …) and whose leaves are arrays of matchers; a record matches when every
//! key matches (`$or` takes a list of patterns, any of which may match). A leaf matches when any
//! of its matchers matches the field (or, for an array field, any of its elements):
//!
//! - exact values: `"order"`, `5`, `true`, `null`, `""`;
//! - `{"prefix": "ord"}`, `{"suffix": ".png"}`, `{"equals-ignore-case": "ORDER"}`;
//! - `{"anything-but": …}` with a value, a list of values, or `{"prefix": …}`/`{"suffix": …}`;
//! - `{"numeric": [">", 0, "<=", 5]}` with `=`, `<`, `<=`, `>`, `>=`;
//! - `{"exists": true}` / `{"exists": false}`.
//!
//! The body is matched as JSON when it parses as JSON, as a plain string otherwise. A target
//! may carry several patterns (a JSON array): a record matching any of them is delivered.

use serde_json::{Map, Value};

/// A compiled, validated filter: one or more patterns, any of which may match.
#[derive(Debug, Clone)]
pub struct Filter {
    patterns: Vec<Map<String, Value>>,
}

impl Filter {
    /// Checks and compiles a filter as users write it: a pattern object, a list of them, or a
    /// string holding either as JSON (Lambda's `FilterCriteria` form).
    pub fn compile(value: &Value) -> Result<Self, String> {
        let parsed;
        let value = match value {
            Value::String(s) => {
                parsed = serde_json::from_str::<Value>(s)
                    .map_err(|e| format!("filter is not valid JSON: {e}"))?;
                &parsed
            }
            v => v,
        };
        let patterns = match value {
            Value::Object(m) => vec![m.clone()],
            Value::Array(items) if !items.is_empty() => items
                .iter()
                .map(|p| match p {
                    Value::Object(m) => Ok(m.clone()),
                    _ => Err("each filter pattern must be a JSON object".to_owned()),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err("filter must be a pattern object or a list of them".into()),
        };
        for p in &patterns {
            check_pattern(p, "")?;
        }
        Ok(Self { patterns })
    }

    /// Whether `record` (a record of the Lambda event) passes the filter.
    #[must_use]
    pub fn matches(&self, record: &Value) -> bool {
        let mut view = record.clone();
        if let Some(body) = record.get("body").and_then(Value::as_str)
            && let Ok(json) = serde_json::from_str::<Value>(body)
        {
            view["body"] = json;
        }
        self.patterns.iter().any(|p| matches_object(p, &view))
    }
}

fn check_pattern(p: &Map<String, Value>, at: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err(format!("filter pattern{at} is empty"));
    }
    for (key, v) in p {
        let here = format!("{at}.{key}");
        match v {
            Value::Object(m) => check_pattern(m, &here)?,
            Value::Array(alts) if key == "$or" => {
                for alt in alts {
                    let Value::Object(m) = alt else {
                        return Err(format!("{here} must list pattern objects"));
                    };
                    check_pattern(m, &here)?;
                }
            }
            Value::Array(matchers) if !matchers.is_empty() => {
                for m in matchers {
                    check_matcher(m, &here)?;
                }
            }
            _ => {
                return Err(format!(
                    "filter {here}: a value must be a non-empty array of matchers or a nested object"
                ));
            }
        }
    }
    Ok(())
}

fn check_matcher(m: &Value, at: &str) -> Result<(), String> {
    let Value::Object(op) = m else {
        return match m {
            Value::Array(_) => Err(format!("filter {at}: nested arrays are not matchers")),
            _ => Ok(()),
        };
    };
    let mut entries = op.iter();
    let (Some((name, arg)), None) = (entries.next(), entries.next()) else {
        return Err(format!(
            "filter {at}: an operator object has exactly one key"
        ));
    };
    let bad = |what: &str| Err(format!("filter {at}: {name} {what}"));
    match name.as_str() {
        "prefix" | "suffix" | "equals-ignore-case" => {
            if arg.is_string() {
                Ok(())
            } else {
                bad("takes a string")
            }
        }
        "exists" => {
            if arg.is_boolean() {
                Ok(())
            } else {
                bad("takes true or false")
            }
        }
        "anything-but" => match arg {
            Value::Object(inner) => match inner.iter().next() {
                Some((k, Value::String(_))) if inner.len() == 1 && (k == "prefix" || k == "suffix") => {
                    Ok(())
                }
                _ => bad("takes a value, a list of values, or {\"prefix\"|\"suffix\": string}"),
            },
            Value::Array(vals) if vals.iter().all(|v| v.is_string() || v.is_number()) => Ok(()),
            Value::String(_) | Value::Number(_) => Ok(()),
            _ => bad("takes a value, a list of values, or {\"prefix\"|\"suffix\": string}"),
        },
        "numeric" => numeric_ranges(arg).map(|_| ()).ok_or_else(|| {
            format!("filter {at}: numeric takes [op, number] or [op, number, op, number] with =, <, <=, >, >=")
        }),
        other => Err(format!(
            "filter {at}: unknown operator {other:?} (prefix, suffix, equals-ignore-case, anything-but, numeric, exists)"
        )),
    }
}

/// `[">", 0, "<=", 5]` as (operator, bound) pairs.
fn numeric_ranges(arg: &Value) -> Option<Vec<(&str, f64)>> {
    let items = arg.as_array()?;
    if items.is_empty() || items.len() > 4 || items.len() % 2 != 0 {
        return None;
    }
    items
        .chunks(2)
        .map(|pair| {
            let op = pair[0].as_str()?;
            let n = pair[1].as_f64()?;
            matches!(op, "=" | "<" | "<=" | ">" | ">=").then_some((op, n))
        })
        .collect()
}

fn matches_object(pattern: &Map<String, Value>, event: &Value) -> bool {
    pattern.iter().all(|(key, p)| {
        if key == "$or"
            && let Value::Array(alts) = p
        {
            return alts
                .iter()
                .any(|alt| alt.as_object().is_some_and(|m| matches_object(m, event)));
        }
        let field = event.get(key);
        match p {
            Value::Object(nested) => {
                let empty = Value::Object(Map::new());
                matches_object(nested, field.filter(|f| f.is_object()).unwrap_or(&empty))
            }
            Value::Array(matchers) => matchers.iter().any(|m| matches_leaf(m, field)),
            _ => false,
        }
    })
}

fn matches_leaf(matcher: &Value, field: Option<&Value>) -> bool {
    if let Some(exists) = matcher.get("exists").and_then(Value::as_bool) {
        return field.is_some() == exists;
    }
    match field {
        None => false,
        Some(Value::Array(items)) => items.iter().any(|v| matches_value(matcher, v)),
        Some(v) => matches_value(matcher, v),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

fn matches_value(matcher: &Value, v: &Value) -> bool {
    let Value::Object(op) = matcher else {
        return same(matcher, v);
    };
    let Some((name, arg)) = op.iter().next() else {
        return false;
    };
    let text = v.as_str();
    match name.as_str() {
        "prefix" => text
            .zip(arg.as_str())
            .is_some_and(|(t, p)| t.starts_with(p)),
        "suffix" => text.zip(arg.as_str()).is_some_and(|(t, s)| t.ends_with(s)),
        "equals-ignore-case" => text
            .zip(arg.as_str())
            .is_some_and(|(t, s)| t.to_lowercase() == s.to_lowercase()),
        "anything-but" => match arg {
            Value::Array(vals) => !vals.iter().any(|x| same(x, v)),
            Value::Object(inner) => match (inner.get("prefix"), inner.get("suffix")) {
                (Some(Value::String(p)), _) => text.is_some_and(|t| !t.starts_with(p.as_str())),
                (_, Some(Value::String(s))) => text.is_some_and(|t| !t.ends_with(s.as_str())),
                _ => false,
            },
            x => !same(x, v),
        },
        "numeric" => {
            let (Some(n), Some(ranges)) =
                (v.as_f64().filter(|_| v.is_number()), numeric_ranges(arg))
            else {
                return false;
            };
            ranges.iter().all(|&(op, bound)| match op {
                "=" => n == bound,
                "<" => n < bound,
                "<=" => n <= bound,
                ">" => n > bound,
                ">=" => n >= bound,
                _ => false,
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(body: &str) -> Value {
        json!({
            "messageId": "m1",
            "body": body,
            "attributes": { "ApproximateReceiveCount": "1" },
            "messageAttributes": { "kind": { "stringValue": "order", "dataType": "String" } },
        })
    }

    fn hit(filter: Value, body: &str) -> bool {
        Filter::compile(&filter)
            .expect("valid filter")
            .matches(&record(body))
    }

    #[test]
    fn exact_values_match_json_bodies_and_plain_text() {
        let f = json!({ "body": { "kind": ["order"] } });
        assert!(hit(f.clone(), r#"{"kind":"order"}"#));
        assert!(!hit(f.clone(), r#"{"kind":"refund"}"#));
        assert!(!hit(f, "kind=order"));
        assert!(hit(json!({ "body": ["plain text"] }), "plain text"));
        assert!(hit(json!({ "body": { "n": [5] } }), r#"{"n":5.0}"#));
        assert!(hit(
            json!({ "body": { "tags": ["b"] } }),
            r#"{"tags":["a","b"]}"#
        ));
        assert!(hit(json!({ "body": { "x": [null] } }), r#"{"x":null}"#));
        assert!(hit(json!({ "body": { "x": [""] } }), r#"{"x":""}"#));
        assert!(hit(
            json!({ "messageAttributes": { "kind": { "stringValue": ["order"] } } }),
            "x"
        ));
    }

    #[test]
    fn operators() {
        let b = r#"{"name":"Order-42.png","n":7,"s":"7"}"#;
        assert!(hit(
            json!({ "body": { "name": [{ "prefix": "Order" }] } }),
            b
        ));
        assert!(!hit(
            json!({ "body": { "name": [{ "prefix": "order" }] } }),
            b
        ));
        assert!(hit(
            json!({ "body": { "name": [{ "suffix": ".png" }] } }),
            b
        ));
        assert!(hit(
            json!({ "body": { "name": [{ "equals-ignore-case": "order-42.PNG" }] } }),
            b
        ));
        assert!(hit(
            json!({ "body": { "name": [{ "anything-but": ["x", "y"] }] } }),
            b
        ));
        assert!(!hit(json!({ "body": { "n": [{ "anything-but": 7 }] } }), b));
        assert!(hit(
            json!({ "body": { "name": [{ "anything-but": { "prefix": "Refund" } }] } }),
            b
        ));
        assert!(hit(
            json!({ "body": { "n": [{ "numeric": [">", 5, "<=", 7] }] } }),
            b
        ));
        assert!(!hit(
            json!({ "body": { "n": [{ "numeric": ["<", 7] }] } }),
            b
        ));
        assert!(!hit(
            json!({ "body": { "s": [{ "numeric": ["=", 7] }] } }),
            b
        ));
        assert!(hit(json!({ "body": { "n": [{ "exists": true }] } }), b));
        assert!(hit(json!({ "body": { "gone": [{ "exists": false }] } }), b));
        assert!(!hit(json!({ "body": { "n": [{ "exists": false }] } }), b));
        assert!(hit(
            json!({ "body": { "deep": { "x": [{ "exists": false }] } } }),
            b
        ));
        assert!(!hit(
            json!({ "body": { "gone": [{ "anything-but": "x" }] } }),
            b
        ));
    }

    #[test]
    fn or_and_lists_of_patterns() {
        let f = json!([{ "body": { "k": ["a"] } }, { "body": { "k": ["b"] } }]);
        assert!(hit(f.clone(), r#"{"k":"b"}"#));
        assert!(!hit(f, r#"{"k":"c"}"#));
        let or = json!({ "$or": [{ "body": { "k": ["a"] } }, { "attributes": { "ApproximateReceiveCount": ["1"] } }] });
        assert!(hit(or, r#"{"k":"z"}"#));
        let text = json!(r#"{"body": {"k": ["a"]}}"#);
        assert!(hit(text, r#"{"k":"a"}"#));
    }

    #[test]
    fn bad_patterns_are_refused_with_a_reason() {
        let err = |v: Value| Filter::compile(&v).unwrap_err();
        assert!(err(json!({ "body": "order" })).contains("non-empty array"));
        assert!(
            err(json!({ "body": { "k": [{ "wildcard": "*" }] } })).contains("unknown operator")
        );
        assert!(err(json!({ "body": { "k": [{ "numeric": [">", "x"] }] } })).contains("numeric"));
        assert!(err(json!({ "body": { "k": [{ "prefix": 1 }] } })).contains("prefix"));
        assert!(err(json!({ "body": { "k": [{ "exists": "yes" }] } })).contains("exists"));
        assert!(err(json!(42)).contains("pattern object"));
        assert!(err(json!("{not json")).contains("not valid JSON"));
        assert!(err(json!({})).contains("empty"));
    }
}
