//! Wire layer: the [`Out`] trait that result encoders write through, and that the XML, JSON and
//! Query-JSON writers implement. Service-neutral: a service's encoders name the members, the
//! writer decides how they look.

use crate::command::{MessageAttributes, Pairs};

/// A sink for result members. Names are given in both spellings where the protocols differ:
/// `json` is the model member name, `xml` the flattened element name.
pub trait Out {
    /// A string member.
    fn string(&mut self, name: &str, v: &str);
    /// An integer member (a JSON number).
    fn int(&mut self, name: &str, v: i64);
    /// A boolean member.
    fn boolean(&mut self, name: &str, v: bool);
    /// A list of strings; nothing is written when empty.
    fn string_list(&mut self, json: &str, xml: &str, items: &[String]);
    /// A string map; XML writes `<xml><key>k</key><value>v</value></xml>` per entry.
    fn string_map(&mut self, json: &str, xml: &str, key: &str, value: &str, items: &Pairs);
    /// A list of structures; nothing is written when `n == 0`.
    fn struct_list(
        &mut self,
        json: &str,
        xml: &str,
        n: usize,
        item: &mut dyn FnMut(usize, &mut dyn Out),
    );
    /// A map of message attributes; nothing is written when empty.
    fn message_attributes(&mut self, json: &str, xml: &str, attrs: &MessageAttributes);
}
