//! Admin layer: one message as the console's JSON shows it (state, time left, body cut to a
//! limit, ids, system and user attributes), and the names of the states a page filters by.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::admin::state::AdminError;
use crate::command::Message;
use crate::engine::{Inspected, PeekState};

/// Bodies longer than this many bytes are cut on a page; `?id=` answers the whole body.
pub(super) const BODY_LIMIT: usize = 16 * 1024;

/// The name of a state on the wire of the console.
pub(super) fn state_name(s: PeekState) -> &'static str {
    match s {
        PeekState::Visible => "visible",
        PeekState::InFlight => "in_flight",
        PeekState::Delayed => "delayed",
    }
}

/// Which messages a page shows: one state, or all (`None`).
pub(super) fn state_filter(v: Option<&str>) -> Result<Option<PeekState>, AdminError> {
    match v.unwrap_or("all") {
        "" | "all" => Ok(None),
        "visible" => Ok(Some(PeekState::Visible)),
        "in_flight" => Ok(Some(PeekState::InFlight)),
        "delayed" => Ok(Some(PeekState::Delayed)),
        other => Err(AdminError::bad_request(format!(
            "state must be all, visible, in_flight or delayed, not {other:?}"
        ))),
    }
}

/// A system attribute of a message.
pub(super) fn attribute<'a>(m: &'a Message, name: &str) -> Option<&'a str> {
    m.attributes
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn attribute_ms(m: &Message, name: &str) -> Option<u64> {
    attribute(m, name).and_then(|v| v.parse().ok())
}

/// The longest prefix of `s` of at most `limit` bytes that ends on a character boundary.
pub(super) fn cut(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s;
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A message looked at by the console, at server time `now_ms`.
pub(super) fn inspected(i: &Inspected, now_ms: u64, body_limit: usize) -> Value {
    let left = i
        .visible_at_ms
        .and_then(|at| at.checked_sub(now_ms))
        .filter(|l| *l > 0);
    render(&i.message, i.state, left, body_limit)
}

/// The base64 text of a binary attribute value, as the console shows and searches it.
pub(super) fn base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

fn render(m: &Message, state: PeekState, time_left_ms: Option<u64>, body_limit: usize) -> Value {
    let body = cut(&m.body, body_limit);
    let system: Map<String, Value> = m
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let user: BTreeMap<&str, Value> = m
        .message_attributes
        .iter()
        .map(|(k, v)| {
            let mut a = json!({ "data_type": v.data_type });
            if let Some(sv) = &v.string_value {
                a["string_value"] = json!(sv);
            }
            if let Some(bv) = &v.binary_value {
                a["binary_value"] = json!(base64(bv));
            }
            (k.as_str(), a)
        })
        .collect();
    json!({
        "id": m.message_id,
        "state": state_name(state),
        "time_left_ms": time_left_ms,
        "body": body,
        "body_bytes": m.body.len(),
        "body_truncated": body.len() < m.body.len(),
        "md5_of_body": m.md5_of_body,
        "sent_ms": attribute_ms(m, "SentTimestamp"),
        "receive_count": attribute_ms(m, "ApproximateReceiveCount").unwrap_or_default(),
        "first_receive_ms": attribute_ms(m, "ApproximateFirstReceiveTimestamp"),
        "group_id": attribute(m, "MessageGroupId"),
        "dedup_id": attribute(m, "MessageDeduplicationId"),
        "sequence_number": attribute(m, "SequenceNumber"),
        "attributes": system,
        "message_attributes": user,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
