//! Wire layer: the AWS Query response writer (XML), its envelopes and its error body (§3.1, §5.1).
//!
//! Written by hand into a `String`: the envelope is fixed and the escaping rules are SQS's own
//! (`"` as `&quot;`, carriage return as `&#xD;`, G-7), which generic serializers do not follow.
//! Service-neutral: the envelopes take the [`Service`] they answer for (its namespace, and
//! whether its errors carry `<Detail/>`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::out::Out;
use super::service::Service;
use crate::command::{MessageAttributes, Pairs};

/// Appends `s` escaped as SQS does. A character XML cannot carry (a control character, say,
/// echoed from a client's input in an error message) is written as U+FFFD instead, so the
/// writer can never produce a document that a client's parser rejects.
pub fn escape_into(buf: &mut String, s: &str) {
    // Runs of characters that need nothing are copied whole; only the bytes that start an
    // escape or a character XML cannot carry are looked at one by one.
    let bytes = s.as_bytes();
    if !may_need_escape(bytes) {
        buf.push_str(s);
        return;
    }
    let (mut start, mut i) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        let (replacement, len) = match b {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' => ("&gt;", 1),
            b'"' => ("&quot;", 1),
            b'\r' => ("&#xD;", 1),
            b'\t' | b'\n' => {
                i += 1;
                continue;
            }
            0x00..=0x1F => ("\u{FFFD}", 1),
            // U+FFFE and U+FFFF, the only characters above U+001F that XML excludes and a
            // `str` can hold.
            0xEF if matches!(bytes.get(i + 1..i + 3), Some([0xBF, 0xBE | 0xBF])) => ("\u{FFFD}", 3),
            _ => {
                i += 1;
                continue;
            }
        };
        // `i` is at an ASCII byte or a UTF-8 lead byte: a character boundary.
        buf.push_str(&s[start..i]);
        buf.push_str(replacement);
        i += len;
        start = i;
    }
    buf.push_str(&s[start..]);
}

/// Whether [`escape_into`] may have to change any byte of `bytes` (a lead byte 0xEF only may).
/// Chunks are checked without an early exit, so that the compiler vectorises the common case.
fn may_need_escape(bytes: &[u8]) -> bool {
    bytes.chunks(32).any(|chunk| {
        chunk.iter().fold(false, |any, &b| {
            any | (b < 0x20) | (b == b'&') | (b == b'<') | (b == b'>') | (b == b'"') | (b == 0xEF)
        })
    })
}

/// Writes result members as XML elements.
#[derive(Debug, Default)]
pub struct XmlOut {
    /// The XML written so far.
    pub buf: String,
}

impl XmlOut {
    fn element(&mut self, name: &str, text: &str) {
        self.buf.push('<');
        self.buf.push_str(name);
        self.buf.push('>');
        escape_into(&mut self.buf, text);
        self.buf.push_str("</");
        self.buf.push_str(name);
        self.buf.push('>');
    }

    fn open(&mut self, name: &str) {
        self.buf.push('<');
        self.buf.push_str(name);
        self.buf.push('>');
    }

    fn close(&mut self, name: &str) {
        self.buf.push_str("</");
        self.buf.push_str(name);
        self.buf.push('>');
    }
}

impl Out for XmlOut {
    fn string(&mut self, name: &str, v: &str) {
        self.element(name, v);
    }

    fn int(&mut self, name: &str, v: i64) {
        use std::fmt::Write as _;
        self.open(name);
        let _ = write!(self.buf, "{v}");
        self.close(name);
    }

    fn boolean(&mut self, name: &str, v: bool) {
        self.element(name, if v { "true" } else { "false" });
    }

    fn string_list(&mut self, _json: &str, xml: &str, items: &[String]) {
        for i in items {
            self.element(xml, i);
        }
    }

    fn string_map(&mut self, _json: &str, xml: &str, key: &str, value: &str, items: &Pairs) {
        for (k, v) in items {
            self.open(xml);
            self.element(key, k);
            self.element(value, v);
            self.close(xml);
        }
    }

    fn struct_list(
        &mut self,
        _json: &str,
        xml: &str,
        n: usize,
        item: &mut dyn FnMut(usize, &mut dyn Out),
    ) {
        for i in 0..n {
            self.open(xml);
            item(i, self);
            self.close(xml);
        }
    }

    fn message_attributes(&mut self, _json: &str, xml: &str, attrs: &MessageAttributes) {
        for (name, v) in attrs {
            self.open(xml);
            self.element("Name", name);
            self.open("Value");
            if let Some(s) = &v.string_value {
                self.element("StringValue", s);
            }
            if let Some(b) = &v.binary_value {
                self.element("BinaryValue", &STANDARD.encode(b));
            }
            for s in &v.string_list_values {
                self.element("StringListValue", s);
            }
            for b in &v.binary_list_values {
                self.element("BinaryListValue", &STANDARD.encode(b));
            }
            self.element("DataType", &v.data_type);
            self.close("Value");
            self.close(xml);
        }
    }
}

/// A response document written in one pass: the `<Action>Response` envelope is opened, the
/// result members are written into it through [`Out`] (via [`Response::out`]), and
/// [`Response::finish`] closes it, so the result is never built apart and copied in.
#[derive(Debug)]
pub struct Response<'n> {
    out: XmlOut,
    action: &'n str,
    /// Where the result's members start, when the action has a result element.
    result_at: Option<usize>,
}

impl<'n> Response<'n> {
    /// Opens the envelope of `service`'s answer to `action`, and its result element when
    /// `with_result`.
    #[must_use]
    pub fn new(service: &Service, action: &'n str, with_result: bool) -> Self {
        let mut buf = String::with_capacity(512);
        buf.push_str("<?xml version=\"1.0\"?><");
        buf.push_str(action);
        buf.push_str("Response xmlns=\"");
        buf.push_str(service.xmlns);
        buf.push_str("\">");
        let result_at = with_result.then(|| {
            buf.push('<');
            buf.push_str(action);
            buf.push_str("Result>");
            buf.len()
        });
        Self {
            out: XmlOut { buf },
            action,
            result_at,
        }
    }

    /// The writer of the result's members.
    pub fn out(&mut self) -> &mut XmlOut {
        &mut self.out
    }

    /// Closes the result (self-closing when nothing was written in it, G-16) and the envelope.
    #[must_use]
    pub fn finish(self, request_id: &str) -> String {
        let Self {
            out: XmlOut { mut buf },
            action,
            result_at,
        } = self;
        match result_at {
            None => {}
            Some(at) if at == buf.len() => {
                buf.truncate(at - "Result>".len());
                buf.push_str("Result/>");
            }
            Some(_) => {
                buf.push_str("</");
                buf.push_str(action);
                buf.push_str("Result>");
            }
        }
        buf.push_str("<ResponseMetadata><RequestId>");
        escape_into(&mut buf, request_id);
        buf.push_str("</RequestId></ResponseMetadata></");
        buf.push_str(action);
        buf.push_str("Response>");
        buf
    }
}

/// The `ErrorResponse` body (§5.1): `Error` with `Type`, `Code`, `Message` (and `<Detail/>`
/// when the service writes one), then `RequestId` beside it.
#[must_use]
pub fn error_body(
    service: &Service,
    fault: &str,
    code: &str,
    message: &str,
    request_id: &str,
) -> String {
    let mut s = String::with_capacity(256 + message.len());
    s.push_str("<?xml version=\"1.0\"?><ErrorResponse xmlns=\"");
    s.push_str(service.xmlns);
    s.push_str("\"><Error><Type>");
    s.push_str(fault);
    s.push_str("</Type><Code>");
    escape_into(&mut s, code);
    s.push_str("</Code><Message>");
    escape_into(&mut s, message);
    s.push_str("</Message>");
    if service.error_detail {
        s.push_str("<Detail/>");
    }
    s.push_str("</Error><RequestId>");
    escape_into(&mut s, request_id);
    s.push_str("</RequestId></ErrorResponse>");
    s
}

#[cfg(test)]
mod tests {
    use crate::wire::service::SQS;
    use crate::wire::xml::*;

    /// Whether XML 1.0 can carry `c` at all, escaped or not (its `Char` production).
    fn is_xml_char(c: char) -> bool {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    }

    /// Wraps result XML in SQS's `<Action>Response` envelope. `result` is `None` for actions
    /// without output; an empty result is written self-closing (`<ReceiveMessageResult/>`,
    /// G-16).
    fn envelope(action: &str, result: Option<&str>, request_id: &str) -> String {
        let mut r = Response::new(&SQS, action, result.is_some());
        r.out().buf.push_str(result.unwrap_or_default());
        r.finish(request_id)
    }

    #[test]
    fn envelope_matches_aws_byte_for_byte() {
        let s = envelope(
            "DeleteMessage",
            None,
            "43c8c5a0-bae0-5851-b839-9343d5f8fa35",
        );
        assert_eq!(
            s,
            "<?xml version=\"1.0\"?><DeleteMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ResponseMetadata><RequestId>43c8c5a0-bae0-5851-b839-9343d5f8fa35</RequestId></ResponseMetadata></DeleteMessageResponse>"
        );
        // boto3 #2338 reports content-length 215 for this response.
        assert_eq!(s.len(), 215);
        assert!(envelope("ReceiveMessage", Some(""), "r").contains("<ReceiveMessageResult/>"));
        let mut r = Response::new(&SQS, "ListQueues", true);
        r.out()
            .string_list("QueueUrls", "QueueUrl", &["u&".to_owned()]);
        r.out().int("N", -3);
        assert_eq!(
            r.finish("r<"),
            format!(
                "<?xml version=\"1.0\"?><ListQueuesResponse xmlns=\"{}\"><ListQueuesResult>\
                 <QueueUrl>u&amp;</QueueUrl><N>-3</N></ListQueuesResult><ResponseMetadata>\
                 <RequestId>r&lt;</RequestId></ResponseMetadata></ListQueuesResponse>",
                SQS.xmlns
            )
        );
    }

    #[test]
    fn another_service_answers_in_its_own_namespace_and_envelope() {
        const OTHER: Service = Service {
            name: "other",
            version: "2010-03-31",
            xmlns: "http://other.amazonaws.com/doc/2010-03-31/",
            error_detail: false,
        };
        let r = Response::new(&OTHER, "Publish", true);
        assert!(
            r.finish("r")
                .starts_with("<?xml version=\"1.0\"?><PublishResponse xmlns=\"http://other.amazonaws.com/doc/2010-03-31/\"><PublishResult/>")
        );
        assert_eq!(
            error_body(&OTHER, "Sender", "NotFound", "Topic does not exist", "r"),
            "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"http://other.amazonaws.com/doc/2010-03-31/\"><Error><Type>Sender</Type><Code>NotFound</Code><Message>Topic does not exist</Message></Error><RequestId>r</RequestId></ErrorResponse>"
        );
    }

    #[test]
    fn characters_xml_cannot_carry_are_never_written() {
        let mut s = String::new();
        escape_into(&mut s, "a\u{1}b\u{b}c\u{fffe}d\te\u{1F600}");
        assert_eq!(s, "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\te\u{1F600}");
        let body = error_body(
            &SQS,
            "Sender",
            "InvalidAction",
            "The action A\u{0}B is bad",
            "r",
        );
        let mut reader = quick_xml::Reader::from_str(&body);
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{e}: {body}"),
            }
        }
        assert!(!body.contains('\u{0}'));
    }

    #[test]
    fn escaping_is_the_character_rule_applied_to_every_character() {
        fn by_char(s: &str) -> String {
            s.chars()
                .map(|c| match c {
                    '&' => "&amp;".to_owned(),
                    '<' => "&lt;".to_owned(),
                    '>' => "&gt;".to_owned(),
                    '"' => "&quot;".to_owned(),
                    '\r' => "&#xD;".to_owned(),
                    c if !is_xml_char(c) => '\u{FFFD}'.to_string(),
                    c => c.to_string(),
                })
                .collect()
        }
        let mut all: String = (0u32..0x300).filter_map(char::from_u32).collect();
        all.extend([
            '\u{D7FF}',
            '\u{E000}',
            '\u{FFFD}',
            '\u{FFFE}',
            '\u{FFFF}',
            '\u{10000}',
        ]);
        all.extend(['\u{EFBF}', '\u{FBFF}', '\u{1F600}', '\u{10FFFF}']);
        // One character to change at every offset, across the 32-byte chunks of the fast path.
        let long: Vec<String> = ["&", "<", "\"", "\r", "\u{1}", "\u{FFFE}", "\u{FFFD}"]
            .iter()
            .flat_map(|c| {
                (0..70).map(move |i| format!("{}{c}{}", "a".repeat(i), "b".repeat(69 - i)))
            })
            .collect();
        let fixed = [
            all.as_str(),
            "",
            "plain",
            "\u{FFFE}x\u{FFFF}",
            "a\u{EF}\u{BF}b",
        ];
        for s in fixed.into_iter().chain(long.iter().map(String::as_str)) {
            let mut buf = String::from("<");
            escape_into(&mut buf, s);
            assert_eq!(buf, format!("<{}", by_char(s)), "{s:?}");
        }
    }

    #[test]
    fn escaping_keeps_carriage_returns_and_quotes() {
        let mut s = String::new();
        escape_into(&mut s, "a\"b\r\n<&>");
        assert_eq!(s, "a&quot;b&#xD;\n&lt;&amp;&gt;");
    }

    #[test]
    fn error_envelope() {
        let s = error_body(
            &SQS,
            "Sender",
            "AWS.SimpleQueueService.NonExistentQueue",
            "The specified queue does not exist for this wsdl version.",
            "d26e8772-3036-5dfb-a868-ca8ba22a0a63",
        );
        assert_eq!(
            s,
            "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code><Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error><RequestId>d26e8772-3036-5dfb-a868-ca8ba22a0a63</RequestId></ErrorResponse>"
        );
    }
}
