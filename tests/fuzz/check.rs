//! What a well-formed answer is: an XML reader that builds a small tree (every text unescaped,
//! every character checked against XML 1.0's `Char` production), and the checks that an error
//! response is one AWS could have sent in its protocol.

use localsqs::wire::{JSON_CONTENT_TYPE, QUERY_JSON_CONTENT_TYPE, WireResponse, XML_CONTENT_TYPE};
use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;

/// Whether XML 1.0 can carry `c` at all (its `Char` production), written here independently of
/// the server's own copy.
pub fn xml_char(c: char) -> bool {
    matches!(u32::from(c), 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10_FFFF)
}

/// What an XML writer must turn `s` into: characters XML cannot carry become U+FFFD.
pub fn xml_visible(s: &str) -> String {
    s.chars()
        .map(|c| if xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// One element: its name, its unescaped text (all text nodes joined) and its child elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Element name as written (prefix included).
    pub name: String,
    /// Text content, unescaped.
    pub text: String,
    /// Child elements, in document order.
    pub children: Vec<Node>,
}

impl Node {
    /// A leaf element with text.
    pub fn leaf(name: &str, text: &str) -> Node {
        Node {
            name: name.to_owned(),
            text: text.to_owned(),
            children: Vec::new(),
        }
    }

    /// An element with children and no text.
    pub fn parent(name: &str, children: Vec<Node>) -> Node {
        Node {
            name: name.to_owned(),
            text: String::new(),
            children,
        }
    }

    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The same tree with each element's children stably sorted by name: list order is kept,
    /// the order of distinct members is not compared.
    pub fn canonical(&self) -> Node {
        let mut children: Vec<Node> = self.children.iter().map(Node::canonical).collect();
        children.sort_by(|a, b| a.name.cmp(&b.name));
        Node {
            name: self.name.clone(),
            text: self.text.clone(),
            children,
        }
    }
}

/// Parses a whole XML document into its one root element. Fails on anything quick-xml
/// rejects, on mismatched or missing end tags, on text outside the root, on a second root, and
/// on any character (raw or from a character reference) that XML forbids.
pub fn parse_xml(body: &str) -> Result<Node, String> {
    if let Some(c) = body.chars().find(|c| !xml_char(*c)) {
        return Err(format!(
            "raw character U+{:04X} that XML forbids",
            u32::from(c)
        ));
    }
    let mut reader = Reader::from_str(body);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at {}: {e}", reader.buffer_position()))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) if root.is_some() => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                return Err(format!("a second root element <{name}>"));
            }
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                stack.push(Node::parent(&name, Vec::new()));
            }
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                let node = Node::parent(&name, Vec::new());
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => root = Some(node),
                }
            }
            Event::End(_) => {
                let node = stack.pop().ok_or("an end tag without a start")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => root = Some(node),
                }
            }
            Event::Text(t) => {
                let text = t.unescape().map_err(|e| format!("bad escape: {e}"))?;
                if let Some(c) = text.chars().find(|c| !xml_char(*c)) {
                    return Err(format!("escaped character U+{:04X}", u32::from(c)));
                }
                match stack.last_mut() {
                    Some(node) => node.text.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => return Err(format!("text outside the root: {text:?}")),
                }
            }
            Event::CData(c) => {
                let node = stack.last_mut().ok_or("CDATA outside the root")?;
                node.text.push_str(&String::from_utf8_lossy(&c));
            }
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) => {}
            Event::DocType(_) => return Err("a DOCTYPE".into()),
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(format!(
            "unclosed element <{}>",
            stack[stack.len() - 1].name
        ));
    }
    root.ok_or_else(|| "no root element".into())
}

/// Asserts that a rejection is a well-formed AWS error: a 4xx status and, by content type, a
/// JSON object with a string `__type` (and the `x-amzn-query-error` header), an XML
/// `ErrorResponse` with `Type`, `Code`, `Message` and `RequestId`, or Query-as-JSON's `Error`
/// object. The one other shape AWS sends is the bare `<UnknownOperationException/>` (404) for
/// a Query request without an `Action` (docs/protocol.md §1.4).
pub fn assert_error(resp: &WireResponse, what: &dyn std::fmt::Debug) {
    let ctx = || format!("{what:?} → {} {}", resp.status, resp.body);
    assert!((400..500).contains(&resp.status), "not a 4xx: {}", ctx());
    match resp.content_type {
        JSON_CONTENT_TYPE => {
            let v: Value = serde_json::from_str(&resp.body)
                .unwrap_or_else(|e| panic!("JSON error body does not parse ({e}): {}", ctx()));
            assert!(
                v.get("__type").is_some_and(Value::is_string),
                "no __type: {}",
                ctx()
            );
            if let Some(m) = v.get("message") {
                assert!(m.is_string(), "message is not a string: {}", ctx());
            }
            let header = resp
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("x-amzn-query-error"));
            let (_, value) = header.unwrap_or_else(|| panic!("no x-amzn-query-error: {}", ctx()));
            assert!(
                value.ends_with(";Sender") || value.ends_with(";Receiver"),
                "x-amzn-query-error {value}: {}",
                ctx()
            );
        }
        XML_CONTENT_TYPE => {
            let root = parse_xml(&resp.body)
                .unwrap_or_else(|e| panic!("XML error body is not well-formed ({e}): {}", ctx()));
            if root.name == "UnknownOperationException" {
                assert_eq!(resp.status, 404, "{}", ctx());
                return;
            }
            assert_eq!(root.name, "ErrorResponse", "{}", ctx());
            let error = root
                .child("Error")
                .unwrap_or_else(|| panic!("no <Error>: {}", ctx()));
            for part in ["Type", "Code", "Message"] {
                assert!(error.child(part).is_some(), "no <{part}>: {}", ctx());
            }
            assert!(
                root.child("RequestId").is_some(),
                "no <RequestId>: {}",
                ctx()
            );
        }
        QUERY_JSON_CONTENT_TYPE => {
            let v: Value = serde_json::from_str(&resp.body)
                .unwrap_or_else(|e| panic!("JSON error body does not parse ({e}): {}", ctx()));
            for part in ["Code", "Message", "Type"] {
                assert!(
                    v.pointer(&format!("/Error/{part}"))
                        .is_some_and(Value::is_string),
                    "no Error.{part}: {}",
                    ctx()
                );
            }
        }
        other => panic!("unexpected content type {other}: {}", ctx()),
    }
}

/// Asserts that a successful answer parses in its protocol and returns the parsed body: the
/// XML root as a [`Node`] or the JSON value.
pub fn assert_success(resp: &WireResponse, what: &dyn std::fmt::Debug) -> Result<Node, Value> {
    let ctx = || format!("{what:?} → {} {}", resp.status, resp.body);
    assert_eq!(resp.status, 200, "{}", ctx());
    match resp.content_type {
        XML_CONTENT_TYPE => Ok(parse_xml(&resp.body)
            .unwrap_or_else(|e| panic!("XML answer is not well-formed ({e}): {}", ctx()))),
        JSON_CONTENT_TYPE | QUERY_JSON_CONTENT_TYPE => Err(serde_json::from_str(&resp.body)
            .unwrap_or_else(|e| panic!("JSON answer does not parse ({e}): {}", ctx()))),
        other => panic!("unexpected content type {other}: {}", ctx()),
    }
}

/// Asserts either shape: a 200 that parses, or a well-formed error.
pub fn assert_answer(resp: &WireResponse, what: &dyn std::fmt::Debug) {
    if resp.status == 200 {
        let _ = assert_success(resp, what);
    } else {
        assert_error(resp, what);
    }
}

#[test]
fn the_xml_reader_refuses_what_clients_refuse() {
    assert!(parse_xml("<a><b>x</b></a>").is_ok());
    assert!(parse_xml("<a><b>x</a>").is_err());
    assert!(parse_xml("<a>\u{1}</a>").is_err());
    assert!(parse_xml("<a>&#x1;</a>").is_err());
    assert!(parse_xml("<a>&bogus;</a>").is_err());
    assert!(parse_xml("<a/><b/>").is_err());
    assert!(parse_xml("<a>").is_err());
    let n = parse_xml("<?xml version=\"1.0\"?><a>x&#xD;&lt;<b/></a>").expect("parses");
    assert_eq!(n.text, "x\r<");
    assert_eq!(n.children, vec![Node::parent("b", Vec::new())]);
}
