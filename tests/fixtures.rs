//! The protocol fixture suite: replays every transcript under `protocol/` against a real
//! localsqs server started in-process, with a fixed [`ManualClock`] and [`SeededIds`].
//!
//! The transcript format is documented in `protocol/README.md`. In short: a `source:` preamble,
//! then `>>> request` / `<<< response` blocks and `advance: <n>ms` steps. Status and listed
//! headers are compared exactly; XML bodies as element trees, JSON bodies as values; `{{any}}`,
//! `{{capture:NAME}}` and `{{NAME}}` handle values that vary.
//!
//! Two tests: `protocol_fixtures` replays every file (set `FIXTURES=<substring>` to replay only
//! matching paths); `every_action_has_a_query_and_a_json_transcript` checks, from the requests
//! themselves, that each of the 23 actions is exercised over both protocols. No Rust SDK speaks
//! the Query protocol, so these files are its main guard (house-style.md, "Tests").

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use localsqs::command::Action;
use localsqs::engine::{ManualClock, SeededIds};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Where every server's clock starts: 2023-11-14T22:13:20Z, so `CreatedTimestamp` is
/// `1700000000` and the first `SentTimestamp` is `1700000000000`.
const START_MS: u64 = 1_700_000_000_000;
/// Seed of the id generator (message ids, request ids, receipt-handle nonces).
const SEED: u64 = 1;
/// Host header sent when a request does not set one; queue URLs are built from it.
const DEFAULT_HOST: &str = "localhost:9324";
/// Longest a single exchange may take before it counts as a hang.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);

// =============================================================================================
// Transcript files

/// One parsed transcript file.
#[derive(Debug)]
struct Transcript {
    path: PathBuf,
    sources: Vec<String>,
    /// Server options from `server:` lines.
    options: ServerOptions,
    steps: Vec<Step>,
}

/// How the server of one transcript is configured beyond the fixed clock and ids.
#[derive(Debug, Default, Clone, Copy)]
struct ServerOptions {
    /// `server: enforce-cooloffs`: AWS's 60-second PurgeQueue and DeleteQueue cool-offs, which
    /// localsqs leaves off by default.
    enforce_cooloffs: bool,
}

impl ServerOptions {
    fn set(&mut self, option: &str) -> Result<(), String> {
        match option {
            "enforce-cooloffs" => self.enforce_cooloffs = true,
            other => return Err(format!("unknown server option `{other}`")),
        }
        Ok(())
    }
}

#[derive(Debug)]
enum Step {
    Exchange(Box<Exchange>),
    Advance { ms: u64 },
}

#[derive(Debug)]
struct Exchange {
    /// 1-based position among the file's exchanges.
    number: usize,
    /// Line of the `>>> request` marker.
    line: usize,
    note: String,
    request: RequestSpec,
    response: ResponseSpec,
}

#[derive(Debug)]
struct RequestSpec {
    method: String,
    target: String,
    headers: Headers,
    body: String,
}

#[derive(Debug)]
struct ResponseSpec {
    status: u16,
    headers: Headers,
    body: String,
}

impl RequestSpec {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Mirrors the server's protocol detection (sqs-protocol.md §1.1).
    fn is_json(&self) -> bool {
        self.header("x-amz-target").is_some()
            || self
                .header("content-type")
                .is_some_and(|c| c.starts_with("application/x-amz-json-1.0"))
    }

    fn is_form(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"))
    }

    /// The action this request invokes and whether it is JSON, read from the request itself:
    /// `X-Amz-Target: AmazonSQS.<Action>` for JSON, the `Action` field of the URL query string
    /// or form body for Query.
    fn action(&self) -> Option<(String, bool)> {
        if self.is_json() {
            let t = self.header("x-amz-target")?;
            return Some((t.strip_prefix("AmazonSQS.")?.to_owned(), true));
        }
        let query = self.target.split_once('?').map_or("", |(_, q)| q);
        let from = |s: &str| {
            form_urlencoded::parse(s.as_bytes())
                .find(|(k, _)| k == "Action")
                .map(|(_, v)| v.into_owned())
        };
        // The body wins over the URL, as in the server (§2.1).
        from(&self.body).or_else(|| from(query)).map(|a| (a, false))
    }
}

fn is_marker(line: &str) -> bool {
    line.starts_with(">>>") || line.starts_with("<<<") || line.starts_with("advance:")
}

/// Parses `31000ms` or `31s`.
fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(n) = s.strip_suffix("ms") {
        n.trim().parse().ok()
    } else if let Some(n) = s.strip_suffix('s') {
        n.trim().parse::<u64>().ok().map(|v| v * 1000)
    } else {
        None
    }
}

/// Header lines of a request or response block, in order.
type Headers = Vec<(String, String)>;

/// Splits a block into its start line, its header lines and its body.
fn split_block(
    lines: &[(usize, &str)],
    what: &str,
    marker_line: usize,
) -> Result<(String, Headers, String), String> {
    let mut it = lines.iter().skip_while(|(_, l)| l.trim().is_empty());
    let Some((_, start)) = it.next() else {
        return Err(format!("line {marker_line}: empty {what} block"));
    };
    let mut headers = Vec::new();
    let mut body_lines: Vec<&str> = Vec::new();
    let mut in_body = false;
    for (n, l) in it {
        if in_body {
            body_lines.push(l);
        } else if l.trim().is_empty() {
            in_body = true;
        } else {
            let (k, v) = l
                .split_once(':')
                .ok_or_else(|| format!("line {n}: expected `Name: value` in the {what} headers"))?;
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    while body_lines.last().is_some_and(|l| l.trim().is_empty()) {
        body_lines.pop();
    }
    Ok((start.trim().to_owned(), headers, body_lines.join("\n")))
}

fn parse_request(lines: &[(usize, &str)], marker: usize) -> Result<RequestSpec, String> {
    let (start, headers, body) = split_block(lines, "request", marker)?;
    let mut parts = start.split_whitespace();
    let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
        return Err(format!(
            "line {marker}: request must start with `METHOD /path`, got `{start}`"
        ));
    };
    if let Some(v) = parts.next()
        && v != "HTTP/1.1"
    {
        return Err(format!(
            "line {marker}: only HTTP/1.1 is supported, got `{v}`"
        ));
    }
    let mut req = RequestSpec {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body,
    };
    if req.is_form() {
        // Long form bodies may be split over lines (each continuation starting with `&`).
        req.body = req.body.lines().map(str::trim).collect();
    }
    Ok(req)
}

fn parse_response(lines: &[(usize, &str)], marker: usize) -> Result<ResponseSpec, String> {
    let (start, headers, body) = split_block(lines, "response", marker)?;
    let mut parts = start.split_whitespace();
    let mut code = parts.next().unwrap_or("");
    if code.starts_with("HTTP/") {
        code = parts.next().unwrap_or("");
    }
    let status = code
        .parse()
        .map_err(|_| format!("line {marker}: response must start with a status, got `{start}`"))?;
    Ok(ResponseSpec {
        status,
        headers,
        body,
    })
}

enum Section {
    Preamble,
    Request(usize, String),
    Response(usize),
}

fn parse_transcript(path: &Path, text: &str) -> Result<Transcript, String> {
    let mut t = Transcript {
        path: path.to_owned(),
        sources: Vec::new(),
        options: ServerOptions::default(),
        steps: Vec::new(),
    };
    let mut section = Section::Preamble;
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut pending: Option<(usize, String, RequestSpec)> = None;
    let mut exchanges = 0;

    // Closes the current section.
    let mut flush = |section: &Section,
                     lines: &mut Vec<(usize, &str)>,
                     pending: &mut Option<(usize, String, RequestSpec)>,
                     steps: &mut Vec<Step>|
     -> Result<(), String> {
        match section {
            Section::Preamble => {}
            Section::Request(marker, note) => {
                *pending = Some((*marker, note.clone(), parse_request(lines, *marker)?));
            }
            Section::Response(marker) => {
                let response = parse_response(lines, *marker)?;
                let (line, note, request) = pending
                    .take()
                    .ok_or_else(|| format!("line {marker}: `<<< response` without a request"))?;
                exchanges += 1;
                steps.push(Step::Exchange(Box::new(Exchange {
                    number: exchanges,
                    line,
                    note,
                    request,
                    response,
                })));
            }
        }
        lines.clear();
        Ok(())
    };

    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.starts_with('#') {
            continue;
        }
        if !is_marker(line) {
            match section {
                Section::Preamble => {
                    if let Some(s) = line.strip_prefix("source:") {
                        if !t.steps.is_empty() {
                            return Err(format!(
                                "line {n}: `source:` lines go before the first step"
                            ));
                        }
                        if s.trim().is_empty() {
                            return Err(format!("line {n}: empty `source:`"));
                        }
                        t.sources.push(s.trim().to_owned());
                    } else if let Some(opts) = line.strip_prefix("server:") {
                        if !t.steps.is_empty() {
                            return Err(format!(
                                "line {n}: `server:` lines go before the first step"
                            ));
                        }
                        for o in opts.split([',', ' ']).filter(|o| !o.is_empty()) {
                            t.options.set(o).map_err(|e| format!("line {n}: {e}"))?;
                        }
                    } else if !line.trim().is_empty() {
                        return Err(format!(
                            "line {n}: expected `source:`, `server:`, `#`, `>>> request` or `advance:`, got `{line}`"
                        ));
                    }
                }
                _ => lines.push((n, line)),
            }
            continue;
        }
        flush(&section, &mut lines, &mut pending, &mut t.steps)?;
        if let Some(rest) = line.strip_prefix(">>>") {
            let rest = rest.trim();
            let note = rest
                .strip_prefix("request")
                .ok_or_else(|| format!("line {n}: expected `>>> request`, got `{line}`"))?;
            if let Some((prev, ..)) = &pending {
                return Err(format!(
                    "line {n}: the request at line {prev} has no `<<< response`"
                ));
            }
            let note = note.trim().trim_start_matches(':').trim().to_owned();
            section = Section::Request(n, note);
        } else if let Some(rest) = line.strip_prefix("<<<") {
            if rest.trim() != "response" {
                return Err(format!("line {n}: expected `<<< response`, got `{line}`"));
            }
            if pending.is_none() {
                return Err(format!("line {n}: `<<< response` without a request"));
            }
            section = Section::Response(n);
        } else if let Some(rest) = line.strip_prefix("advance:") {
            if let Some((prev, ..)) = &pending {
                return Err(format!(
                    "line {n}: the request at line {prev} has no `<<< response`"
                ));
            }
            let ms = parse_duration(rest)
                .ok_or_else(|| format!("line {n}: expected `advance: <n>ms` or `<n>s`"))?;
            t.steps.push(Step::Advance { ms });
            section = Section::Preamble;
        }
    }
    flush(&section, &mut lines, &mut pending, &mut t.steps)?;
    if let Some((prev, ..)) = pending {
        return Err(format!("line {prev}: the request has no `<<< response`"));
    }
    if t.sources.is_empty() {
        return Err("no `source:` line".into());
    }
    if exchanges == 0 {
        return Err("no exchanges".into());
    }
    Ok(t)
}

fn protocol_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol")
}

/// Every `*.txt` under `protocol/`, sorted.
fn transcript_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "txt") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&protocol_dir(), &mut out);
    out.sort();
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

fn load(path: &Path) -> Result<Transcript, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", rel(path)))?;
    parse_transcript(path, &text).map_err(|e| format!("{}: {e}", rel(path)))
}

// =============================================================================================
// Placeholders

/// Values captured so far in one transcript.
type Vars = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Lit(String),
    Any,
    Capture(String),
}

/// How a substituted value is written into a request.
#[derive(Debug, Clone, Copy)]
enum Encoding {
    Raw,
    /// Percent-encoded, for URL query strings and form bodies.
    Form,
    /// Escaped for the inside of a JSON string.
    Json,
}

fn placeholders(s: &str) -> Result<Vec<(usize, usize, &str)>, String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find("{{") {
        let start = from + i;
        let end = s[start..]
            .find("}}")
            .map(|j| start + j + 2)
            .ok_or_else(|| format!("unclosed `{{{{` in `{s}`"))?;
        out.push((start, end, s[start + 2..end - 2].trim()));
        from = end;
    }
    Ok(out)
}

/// Replaces `{{NAME}}` with captured values in a request part.
fn substitute(s: &str, vars: &Vars, enc: Encoding) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (start, end, name) in placeholders(s)? {
        out.push_str(&s[last..start]);
        let v = vars
            .get(name)
            .ok_or_else(|| format!("`{{{{{name}}}}}` is used before it is captured"))?;
        match enc {
            Encoding::Raw => out.push_str(v),
            Encoding::Form => out.extend(form_urlencoded::byte_serialize(v.as_bytes())),
            Encoding::Json => {
                let quoted = serde_json::to_string(v).map_err(|e| e.to_string())?;
                out.push_str(&quoted[1..quoted.len() - 1]);
            }
        }
        last = end;
    }
    out.push_str(&s[last..]);
    Ok(out)
}

/// Turns an expected value into tokens: `{{any}}`, `{{capture:NAME}}`, and `{{NAME}}`
/// (replaced by its captured value).
fn tokenize(pattern: &str, vars: &Vars) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut lit = String::new();
    for (start, end, name) in placeholders(pattern)? {
        lit.push_str(&pattern[last..start]);
        last = end;
        let token = if name == "any" {
            Token::Any
        } else if let Some(c) = name.strip_prefix("capture:") {
            Token::Capture(c.trim().to_owned())
        } else if name == "absent" {
            return Err("`{{absent}}` is only valid as a whole header value".into());
        } else {
            lit.push_str(
                vars.get(name)
                    .ok_or_else(|| format!("`{{{{{name}}}}}` is used before it is captured"))?,
            );
            continue;
        };
        if !lit.is_empty() {
            out.push(Token::Lit(std::mem::take(&mut lit)));
        }
        out.push(token);
    }
    lit.push_str(&pattern[last..]);
    if !lit.is_empty() {
        out.push(Token::Lit(lit));
    }
    Ok(out)
}

/// Matches `s` against tokens; wildcards take the shortest text that lets the rest match.
fn match_tokens(tokens: &[Token], s: &str, caps: &mut Vec<(String, String)>) -> bool {
    match tokens.split_first() {
        None => s.is_empty(),
        Some((Token::Lit(l), rest)) => s
            .strip_prefix(l.as_str())
            .is_some_and(|tail| match_tokens(rest, tail, caps)),
        Some((wild, rest)) => {
            let cuts = s
                .char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(s.len()));
            for i in cuts {
                let mark = caps.len();
                if match_tokens(rest, &s[i..], caps) {
                    if let Token::Capture(name) = wild {
                        caps.push((name.clone(), s[..i].to_owned()));
                    }
                    return true;
                }
                caps.truncate(mark);
            }
            false
        }
    }
}

/// Whether `actual` matches the expected text `pattern`; captures go to `caps`.
fn text_matches(
    pattern: &str,
    actual: &str,
    vars: &Vars,
    caps: &mut Vec<(String, String)>,
) -> Result<bool, String> {
    Ok(match_tokens(&tokenize(pattern, vars)?, actual, caps))
}

/// One comparison: the values captured so far in the file, and those this response captures.
struct Cmp<'a> {
    vars: &'a Vars,
    caps: Vec<(String, String)>,
}

impl Cmp<'_> {
    fn text(&mut self, at: &str, expected: &str, actual: &str) -> Result<(), String> {
        if text_matches(expected, actual, self.vars, &mut self.caps)? {
            Ok(())
        } else {
            // Show what `{{NAME}}` stood for, if the pattern used any captured value.
            let resolved: String = tokenize(expected, self.vars)?
                .iter()
                .map(|t| match t {
                    Token::Lit(l) => l.clone(),
                    Token::Any => "{{any}}".to_owned(),
                    Token::Capture(c) => format!("{{{{capture:{c}}}}}"),
                })
                .collect();
            let shown = if resolved == expected {
                format!("{expected:?}")
            } else {
                format!("{expected:?} (= {resolved:?})")
            };
            Err(format!("{at}: expected {shown}, got {actual:?}"))
        }
    }
}

// =============================================================================================
// XML: element trees

#[derive(Debug, Clone)]
enum Node {
    Elem(Elem),
    Text(String),
}

#[derive(Debug, Clone)]
struct Elem {
    name: String,
    /// Sorted by name; values kept escaped as on the wire.
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
    /// Written `<X/>` rather than `<X></X>` (significant: G-16).
    self_closing: bool,
}

#[derive(Debug)]
struct XmlDoc {
    /// The XML declaration's content, e.g. `version="1.0"`.
    decl: Option<String>,
    root: Elem,
}

fn utf8(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|e| format!("invalid UTF-8 in XML: {e}"))
}

fn start_elem(e: &quick_xml::events::BytesStart<'_>, self_closing: bool) -> Result<Elem, String> {
    let mut attrs = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|e| format!("bad XML attribute: {e}"))?;
        attrs.push((utf8(a.key.as_ref())?, utf8(&a.value)?));
    }
    attrs.sort();
    Ok(Elem {
        name: utf8(e.name().as_ref())?,
        attrs,
        children: Vec::new(),
        self_closing,
    })
}

/// Drops whitespace-only text next to elements (indentation); keeps the text of leaf elements
/// verbatim. Adjacent text pieces are merged.
fn normalise_children(children: Vec<Node>) -> Vec<Node> {
    let has_elems = children.iter().any(|c| matches!(c, Node::Elem(_)));
    let mut out: Vec<Node> = Vec::new();
    for c in children {
        match c {
            Node::Text(t) if has_elems && t.trim().is_empty() => {}
            Node::Text(t) => match out.last_mut() {
                Some(Node::Text(prev)) => prev.push_str(&t),
                _ => out.push(Node::Text(t)),
            },
            e @ Node::Elem(_) => out.push(e),
        }
    }
    out
}

/// Parses XML into a tree. Text is kept *escaped* as written (`&quot;` stays `&quot;`), so the
/// escaping SQS applies (§3.1, G-7) is compared too.
fn parse_xml(s: &str) -> Result<XmlDoc, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(s);
    let mut decl = None;
    let mut stack: Vec<Elem> = Vec::new();
    let mut root: Option<Elem> = None;
    let mut close = |stack: &mut Vec<Elem>, mut e: Elem| -> Result<(), String> {
        e.children = normalise_children(std::mem::take(&mut e.children));
        match stack.last_mut() {
            Some(parent) => parent.children.push(Node::Elem(e)),
            None if root.is_none() => root = Some(e),
            None => return Err("more than one root element".into()),
        }
        Ok(())
    };
    loop {
        let ev = reader
            .read_event()
            .map_err(|e| format!("XML error at byte {}: {e}", reader.buffer_position()))?;
        match ev {
            Event::Decl(d) => {
                let mut v = format!(
                    "version=\"{}\"",
                    utf8(&d.version().map_err(|e| e.to_string())?)?
                );
                if let Some(enc) = d.encoding() {
                    let enc = enc.map_err(|e| e.to_string())?;
                    let _ = write!(v, " encoding=\"{}\"", utf8(&enc)?);
                }
                if let Some(sa) = d.standalone() {
                    let sa = sa.map_err(|e| e.to_string())?;
                    let _ = write!(v, " standalone=\"{}\"", utf8(&sa)?);
                }
                decl = Some(v);
            }
            Event::Start(e) => stack.push(start_elem(&e, false)?),
            Event::Empty(e) => {
                let el = start_elem(&e, true)?;
                close(&mut stack, el)?;
            }
            Event::End(_) => {
                let el = stack.pop().ok_or("unbalanced end tag")?;
                close(&mut stack, el)?;
            }
            Event::Text(t) => {
                let t = utf8(&t)?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(Node::Text(t)),
                    None if t.trim().is_empty() => {}
                    None => return Err(format!("text outside the root element: {t:?}")),
                }
            }
            Event::CData(c) => {
                let t = quick_xml::escape::escape(utf8(&c)?).into_owned();
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Node::Text(t));
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err("unclosed element at end of document".into());
    }
    let root = root.ok_or("no root element")?;
    Ok(XmlDoc { decl, root })
}

fn unescape(s: &str) -> String {
    quick_xml::escape::unescape(s).map_or_else(|_| s.to_owned(), |c| c.into_owned())
}

fn child_names(children: &[Node]) -> String {
    children
        .iter()
        .map(|c| match c {
            Node::Elem(e) => format!("<{}>", e.name),
            Node::Text(t) => format!("{t:?}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Cmp<'_> {
    fn xml_doc(&mut self, exp: &XmlDoc, act: &XmlDoc) -> Result<(), String> {
        if exp.decl != act.decl {
            return Err(format!(
                "XML declaration: expected {:?}, got {:?}",
                exp.decl, act.decl
            ));
        }
        self.xml_elem(&format!("/{}", exp.root.name), &exp.root, &act.root)
    }

    fn xml_text(&mut self, at: &str, exp: &str, act: &str) -> Result<(), String> {
        let mark = self.caps.len();
        self.text(at, exp, act)?;
        // Store captured values unescaped: they are reused as plain values.
        for c in &mut self.caps[mark..] {
            c.1 = unescape(&c.1);
        }
        Ok(())
    }

    fn xml_elem(&mut self, at: &str, exp: &Elem, act: &Elem) -> Result<(), String> {
        if exp.name != act.name {
            return Err(format!(
                "{at}: expected element <{}>, got <{}>",
                exp.name, act.name
            ));
        }
        let exp_keys: Vec<&String> = exp.attrs.iter().map(|(k, _)| k).collect();
        let act_keys: Vec<&String> = act.attrs.iter().map(|(k, _)| k).collect();
        if exp_keys != act_keys {
            return Err(format!(
                "{at}: expected attributes {exp_keys:?}, got {act_keys:?}"
            ));
        }
        for ((k, ev), (_, av)) in exp.attrs.iter().zip(&act.attrs) {
            self.xml_text(&format!("{at}/@{k}"), ev, av)?;
        }
        if exp.self_closing != act.self_closing {
            let form = |sc: bool| {
                if sc {
                    format!("<{}/>", exp.name)
                } else {
                    format!("<{0}>…</{0}>", exp.name)
                }
            };
            return Err(format!(
                "{at}: expected the form {}, got {}",
                form(exp.self_closing),
                form(act.self_closing)
            ));
        }
        // A leaf with no text is the same as a leaf with empty text.
        let leaf_text = |e: &Elem| -> Option<String> {
            match e.children.as_slice() {
                [] => Some(String::new()),
                [Node::Text(t)] => Some(t.clone()),
                _ => None,
            }
        };
        if let (Some(et), Some(atxt)) = (leaf_text(exp), leaf_text(act)) {
            return self.xml_text(at, &et, &atxt);
        }
        // Differently named children are structure members, which SDK parsers read by name, so
        // their relative order is free; same-named children form a list (or a flattened map)
        // and are compared in order.
        let group = |e: &'_ Elem| {
            let mut elems: BTreeMap<String, Vec<Elem>> = BTreeMap::new();
            let mut texts: Vec<String> = Vec::new();
            for c in &e.children {
                match c {
                    Node::Elem(c) => elems.entry(c.name.clone()).or_default().push(c.clone()),
                    Node::Text(t) => texts.push(t.clone()),
                }
            }
            (elems, texts)
        };
        let (exp_elems, exp_texts) = group(exp);
        let (act_elems, act_texts) = group(act);
        let exp_names: Vec<&String> = exp_elems.keys().collect();
        let act_names: Vec<&String> = act_elems.keys().collect();
        if exp_names != act_names || exp_texts.len() != act_texts.len() {
            return Err(format!(
                "{at}: expected children [{}], got [{}]",
                child_names(&exp.children),
                child_names(&act.children)
            ));
        }
        for (name, es) in &exp_elems {
            let acts = &act_elems[name];
            if es.len() != acts.len() {
                return Err(format!(
                    "{at}: expected {} <{name}>, got {}",
                    es.len(),
                    acts.len()
                ));
            }
            for (i, (e, a)) in es.iter().zip(acts).enumerate() {
                self.xml_elem(&format!("{at}/{name}[{}]", i + 1), e, a)?;
            }
        }
        for (e, a) in exp_texts.iter().zip(&act_texts) {
            self.xml_text(&format!("{at}/text()"), e, a)?;
        }
        Ok(())
    }
}

/// An indented rendering of a tree, for failure reports.
fn render_xml(doc: &XmlDoc) -> String {
    fn go(e: &Elem, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let attrs: String = e
            .attrs
            .iter()
            .map(|(k, v)| format!(" {k}=\"{v}\""))
            .collect();
        if e.self_closing {
            let _ = writeln!(out, "{pad}<{}{attrs}/>", e.name);
            return;
        }
        match e.children.as_slice() {
            [] => {
                let _ = writeln!(out, "{pad}<{0}{attrs}></{0}>", e.name);
            }
            [Node::Text(t)] => {
                let _ = writeln!(out, "{pad}<{0}{attrs}>{t}</{0}>", e.name);
            }
            children => {
                let _ = writeln!(out, "{pad}<{}{attrs}>", e.name);
                for c in children {
                    match c {
                        Node::Elem(c) => go(c, depth + 1, out),
                        Node::Text(t) => {
                            let _ = writeln!(out, "{pad}  {t}");
                        }
                    }
                }
                let _ = writeln!(out, "{pad}</{}>", e.name);
            }
        }
    }
    let mut out = String::new();
    if let Some(d) = &doc.decl {
        let _ = writeln!(out, "<?xml {d}?>");
    }
    go(&doc.root, 0, &mut out);
    out
}

// =============================================================================================
// JSON: values

fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Cmp<'_> {
    fn json(
        &mut self,
        at: &str,
        exp: &serde_json::Value,
        act: &serde_json::Value,
    ) -> Result<(), String> {
        use serde_json::Value;
        match (exp, act) {
            (Value::String(p), _) if p.contains("{{") => {
                let toks = tokenize(p, self.vars)?;
                match (toks.as_slice(), act) {
                    (_, Value::String(s)) => self.text(at, p, s),
                    ([Token::Any], _) => Ok(()),
                    ([Token::Capture(name)], _) => {
                        self.caps.push((name.clone(), act.to_string()));
                        Ok(())
                    }
                    _ => Err(format!("{at}: expected a string matching {p:?}, got {act}")),
                }
            }
            (Value::Object(e), Value::Object(a)) => {
                let ek: BTreeSet<&String> = e.keys().collect();
                let ak: BTreeSet<&String> = a.keys().collect();
                let missing: Vec<_> = ek.difference(&ak).collect();
                let extra: Vec<_> = ak.difference(&ek).collect();
                if !missing.is_empty() || !extra.is_empty() {
                    return Err(format!(
                        "{at}: keys differ: missing {missing:?}, unexpected {extra:?}"
                    ));
                }
                for (k, ev) in e {
                    self.json(&format!("{at}.{k}"), ev, &a[k])?;
                }
                Ok(())
            }
            (Value::Array(e), Value::Array(a)) => {
                if e.len() != a.len() {
                    return Err(format!("{at}: expected {} items, got {}", e.len(), a.len()));
                }
                for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                    self.json(&format!("{at}[{i}]"), ev, av)?;
                }
                Ok(())
            }
            _ if exp == act => Ok(()),
            _ if json_kind(exp) != json_kind(act) => Err(format!(
                "{at}: expected {} ({exp}), got {} ({act})",
                json_kind(exp),
                json_kind(act)
            )),
            _ => Err(format!("{at}: expected {exp}, got {act}")),
        }
    }
}

// =============================================================================================
// Bodies and headers

impl Cmp<'_> {
    /// Compares a body by the form of the expected one: `<` → XML tree, `{`/`[` → JSON value,
    /// anything else (a whole-body placeholder, plain text, nothing) → text.
    fn body(&mut self, expected: &str, actual: &str) -> Result<(), String> {
        let e = expected.trim();
        if e.starts_with('<') {
            let exp = parse_xml(e).map_err(|err| format!("expected body is not XML: {err}"))?;
            let act =
                parse_xml(actual).map_err(|err| format!("body is not well-formed XML: {err}"))?;
            self.xml_doc(&exp, &act)
                .map_err(|err| format!("body {err}"))
        } else if (e.starts_with('{') && !e.starts_with("{{")) || e.starts_with('[') {
            let exp: serde_json::Value = serde_json::from_str(e)
                .map_err(|err| format!("expected body is not JSON: {err}"))?;
            let act: serde_json::Value =
                serde_json::from_str(actual).map_err(|err| format!("body is not JSON: {err}"))?;
            self.json("body $", &exp, &act)
        } else {
            self.text("body", e, actual.trim())
        }
    }

    fn headers(
        &mut self,
        expected: &[(String, String)],
        actual: &[(String, String)],
    ) -> Result<(), String> {
        for (name, pattern) in expected {
            let got: Vec<&str> = actual
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect();
            match (pattern.as_str(), got.as_slice()) {
                ("{{absent}}", []) => {}
                ("{{absent}}", [v, ..]) => {
                    return Err(format!("header {name}: expected absent, got {v:?}"));
                }
                (_, []) => {
                    return Err(format!(
                        "header {name}: expected {pattern:?}, but it is absent"
                    ));
                }
                (_, [v]) => self.text(&format!("header {name}"), pattern, v)?,
                (_, many) => {
                    return Err(format!(
                        "header {name}: sent {} times: {many:?}",
                        many.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

// =============================================================================================
// HTTP over a raw TCP stream

#[derive(Debug)]
struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn decode_chunked(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk size")?;
        let size_line = std::str::from_utf8(&b[..eol]).map_err(|e| e.to_string())?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|e| format!("bad chunk size {size_line:?}: {e}"))?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}

fn parse_http(raw: &[u8]) -> Result<HttpResponse, String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no end of headers in {} bytes", raw.len()))?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|e| format!("bad head: {e}"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut resp = HttpResponse {
        status,
        headers,
        body: String::new(),
    };
    let rest = &raw[split + 4..];
    let body = if resp
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        decode_chunked(rest)?
    } else if let Some(len) = resp.header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| format!("bad content-length {len:?}"))?;
        rest.get(..len)
            .ok_or_else(|| format!("body shorter than content-length {len}"))?
            .to_vec()
    } else {
        rest.to_vec()
    };
    resp.body = String::from_utf8(body).map_err(|e| format!("body is not UTF-8: {e}"))?;
    Ok(resp)
}

/// Builds the raw HTTP/1.1 request, with captured values substituted.
fn build_request(req: &RequestSpec, vars: &Vars) -> Result<(String, Vec<u8>), String> {
    let target = match req.target.split_once('?') {
        Some((p, q)) => format!(
            "{}?{}",
            substitute(p, vars, Encoding::Form)?,
            substitute(q, vars, Encoding::Form)?
        ),
        None => substitute(&req.target, vars, Encoding::Form)?,
    };
    let body_enc = if req.is_json() {
        Encoding::Json
    } else if req.is_form() {
        Encoding::Form
    } else {
        Encoding::Raw
    };
    let body = substitute(&req.body, vars, body_enc)?;
    let mut head = format!("{} {target} HTTP/1.1\r\n", req.method);
    let mut has_host = false;
    for (k, v) in &req.headers {
        if k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("connection") {
            return Err(format!(
                "`{k}` is set by the runner; remove it from the fixture"
            ));
        }
        has_host |= k.eq_ignore_ascii_case("host");
        let _ = write!(head, "{k}: {}\r\n", substitute(v, vars, Encoding::Raw)?);
    }
    if !has_host {
        let _ = write!(head, "Host: {DEFAULT_HOST}\r\n");
    }
    let _ = write!(
        head,
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let summary = format!(
        "{} {target}{}{}",
        req.method,
        req.header("x-amz-target")
            .map(|t| format!(" [X-Amz-Target: {t}]"))
            .unwrap_or_default(),
        if body.is_empty() {
            String::new()
        } else {
            format!("\n{}", indent(&body).trim_end())
        }
    );
    let mut raw = head.into_bytes();
    raw.extend_from_slice(body.as_bytes());
    Ok((summary, raw))
}

async fn send(addr: SocketAddr, raw: &[u8]) -> Result<HttpResponse, String> {
    let exchange = async {
        let mut s = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        s.write_all(raw).await.map_err(|e| format!("write: {e}"))?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf)
            .await
            .map_err(|e| format!("read: {e}"))?;
        parse_http(&buf)
    };
    tokio::time::timeout(EXCHANGE_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no response within {EXCHANGE_TIMEOUT:?}"))?
}

// =============================================================================================
// Replay

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

fn render_actual(resp: &HttpResponse) -> String {
    let mut out = format!("HTTP {}\n", resp.status);
    for (k, v) in &resp.headers {
        let _ = writeln!(out, "{k}: {v}");
    }
    out.push('\n');
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&resp.body)
        && v.is_object()
    {
        out.push_str(&serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        out.push_str(&resp.body);
        if let Ok(doc) = parse_xml(&resp.body) {
            out.push_str("\n\n(indented:)\n");
            out.push_str(&render_xml(&doc));
        }
    }
    out
}

fn render_expected(spec: &ResponseSpec) -> String {
    let mut out = format!("HTTP {}\n", spec.status);
    for (k, v) in &spec.headers {
        let _ = writeln!(out, "{k}: {v}");
    }
    out.push('\n');
    out.push_str(&spec.body);
    out
}

/// Checks one response; on success, records its captures in `vars`.
fn check(spec: &ResponseSpec, resp: &HttpResponse, vars: &mut Vars) -> Result<(), String> {
    if spec.status != resp.status {
        return Err(format!(
            "status: expected {}, got {}",
            spec.status, resp.status
        ));
    }
    // Headers first: what they capture (e.g. the request id) may be used in the body.
    let mut cmp = Cmp {
        vars,
        caps: Vec::new(),
    };
    cmp.headers(&spec.headers, &resp.headers)?;
    let mut with_headers = vars.clone();
    with_headers.extend(cmp.caps);
    let mut cmp = Cmp {
        vars: &with_headers,
        caps: Vec::new(),
    };
    cmp.body(&spec.body, &resp.body)?;
    let caps = cmp.caps;
    *vars = with_headers;
    vars.extend(caps);
    Ok(())
}

/// Replays one transcript on a fresh server. Returns the number of exchanges.
async fn run_transcript(t: &Transcript) -> Result<usize, String> {
    let clock = Arc::new(ManualClock::new(START_MS));
    let server = localsqs::Server::builder()
        .clock(clock.clone())
        .ids(Arc::new(SeededIds::new(SEED)))
        .enforce_cooloffs(t.options.enforce_cooloffs)
        .start()
        .await
        .map_err(|e| format!("{}: server did not start: {e}", rel(&t.path)))?;
    let addr = server.local_addr();
    let mut vars = Vars::new();
    let mut result = Ok(0);
    for step in &t.steps {
        match step {
            Step::Advance { ms } => {
                clock.advance_ms(*ms);
                server.engine().wake_all();
            }
            Step::Exchange(x) => {
                let outcome = async {
                    let (summary, raw) = build_request(&x.request, &vars).map_err(|e| {
                        (
                            format!("{} {}", x.request.method, x.request.target),
                            e,
                            None,
                        )
                    })?;
                    let resp = send(addr, &raw)
                        .await
                        .map_err(|e| (summary.clone(), e, None))?;
                    match check(&x.response, &resp, &mut vars) {
                        Ok(()) => Ok(()),
                        Err(e) => Err((summary, e, Some(resp))),
                    }
                }
                .await;
                match outcome {
                    Ok(()) => {
                        if let Ok(n) = &mut result {
                            *n += 1;
                        }
                    }
                    Err((summary, why, resp)) => {
                        let mut msg = format!(
                            "{}:{}: exchange {}{}\n  request: {summary}\n  mismatch: {why}\n",
                            rel(&t.path),
                            x.line,
                            x.number,
                            if x.note.is_empty() {
                                String::new()
                            } else {
                                format!(" ({})", x.note)
                            }
                        );
                        for s in &t.sources {
                            let _ = writeln!(msg, "  source: {s}");
                        }
                        msg.push_str("  expected:\n");
                        msg.push_str(&indent(&render_expected(&x.response)));
                        if let Some(resp) = resp {
                            msg.push_str("  actual:\n");
                            msg.push_str(&indent(&render_actual(&resp)));
                        }
                        result = Err(msg);
                        break;
                    }
                }
            }
        }
    }
    server.shutdown().await;
    result
}

#[tokio::test]
async fn protocol_fixtures() {
    let only = std::env::var("FIXTURES").ok();
    let files: Vec<PathBuf> = transcript_files()
        .into_iter()
        .filter(|p| only.as_deref().is_none_or(|o| rel(p).contains(o)))
        .collect();
    assert!(!files.is_empty(), "no transcripts under protocol/");
    let mut failures = Vec::new();
    let mut exchanges = 0;
    for path in &files {
        let outcome = match load(path) {
            Ok(t) => run_transcript(&t).await,
            Err(e) => Err(format!("{e}\n")),
        };
        match outcome {
            Ok(n) => exchanges += n,
            Err(e) => failures.push(e),
        }
    }
    eprintln!(
        "replayed {} transcripts, {exchanges} exchanges passed",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} transcripts failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn every_action_has_a_query_and_a_json_transcript() {
    let mut query: BTreeSet<String> = BTreeSet::new();
    let mut json: BTreeSet<String> = BTreeSet::new();
    let mut errors = Vec::new();
    for path in transcript_files() {
        match load(&path) {
            Ok(t) => {
                for step in &t.steps {
                    if let Step::Exchange(x) = step
                        && let Some((action, is_json)) = x.request.action()
                    {
                        if is_json { &mut json } else { &mut query }.insert(action);
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    assert!(
        errors.is_empty(),
        "unparseable transcripts:\n{}",
        errors.join("\n")
    );
    let missing: Vec<String> = Action::ALL
        .iter()
        .flat_map(|a| {
            let name = a.name();
            [
                (!query.contains(name)).then(|| format!("{name} (Query)")),
                (!json.contains(name)).then(|| format!("{name} (JSON)")),
            ]
        })
        .flatten()
        .collect();
    assert!(
        missing.is_empty(),
        "actions without a transcript under protocol/: {}",
        missing.join(", ")
    );
}

// =============================================================================================
// The runner's own checks: a comparison that should fail must fail.

mod runner {
    use super::*;

    fn body_cmp(expected: &str, actual: &str) -> Result<Vars, String> {
        let vars = Vars::new();
        let mut c = Cmp {
            vars: &vars,
            caps: Vec::new(),
        };
        c.body(expected, actual)?;
        Ok(c.caps.into_iter().collect())
    }

    #[test]
    fn xml_ignores_indentation_but_not_text_order_names_or_escaping() {
        let act = r#"<?xml version="1.0"?><A xmlns="n"><B>x&quot;y&#xD;</B><C/></A>"#;
        let exp = "<?xml version=\"1.0\"?>\n<A xmlns=\"n\">\n  <B>x&quot;y&#xD;</B>\n  <C/>\n</A>";
        assert!(body_cmp(exp, act).is_ok());
        // Escaping is significant: a raw quote is not `&quot;`.
        assert!(body_cmp(r#"<A xmlns="n"><B>x"y&#xD;</B><C/></A>"#, act).is_err());
        // Declaration, namespace, names, self-closing form, missing children.
        assert!(body_cmp(r#"<A xmlns="n"><B>x&quot;y&#xD;</B><C/></A>"#, act).is_err());
        assert!(
            body_cmp(
                r#"<?xml version="1.0"?><A xmlns="m"><B>x&quot;y&#xD;</B><C/></A>"#,
                act
            )
            .is_err()
        );
        // Members may come in any order; list items may not.
        assert!(
            body_cmp(
                r#"<?xml version="1.0"?><A xmlns="n"><C/><B>x&quot;y&#xD;</B></A>"#,
                act
            )
            .is_ok()
        );
        let list = "<L><M>1</M><N/><M>2</M></L>";
        assert!(body_cmp("<L><N/><M>1</M><M>2</M></L>", list).is_ok());
        assert!(body_cmp("<L><M>2</M><N/><M>1</M></L>", list).is_err());
        assert!(body_cmp("<L><M>1</M><N/></L>", list).is_err());
        assert!(
            body_cmp(
                r#"<?xml version="1.0"?><A xmlns="n"><B>x&quot;y&#xD;</B><C></C></A>"#,
                act
            )
            .is_err()
        );
        assert!(
            body_cmp(
                r#"<?xml version="1.0"?><A xmlns="n"><B>x&quot;y&#xD;</B></A>"#,
                act
            )
            .is_err()
        );
        assert!(body_cmp("not xml", act).is_err());
    }

    #[test]
    fn json_ignores_key_order_but_not_extra_keys_or_types() {
        let act = r#"{"a":"1","b":[1,2],"c":{}}"#;
        assert!(body_cmp(r#"{"c":{},"b":[1,2],"a":"1"}"#, act).is_ok());
        assert!(body_cmp(r#"{"a":"1","b":[1,2]}"#, act).is_err());
        assert!(body_cmp(r#"{"a":1,"b":[1,2],"c":{}}"#, act).is_err());
        assert!(body_cmp(r#"{"a":"1","b":[2,1],"c":{}}"#, act).is_err());
        assert!(body_cmp(r#"{"a":"{{any}}","b":"{{any}}","c":"{{any}}"}"#, act).is_ok());
    }

    #[test]
    fn placeholders_match_and_capture() {
        let caps = body_cmp(
            r#"<R><H>{{capture:rh}}</H><U>http://h/{{any}}/q</U></R>"#,
            r#"<R><H>AQEB+/a=&amp;</H><U>http://h/000/q</U></R>"#,
        )
        .unwrap();
        assert_eq!(caps["rh"], "AQEB+/a=&");
        let caps = body_cmp(
            r#"{"X":"{{capture:x}}","N":"{{capture:n}}"}"#,
            r#"{"X":"v","N":3}"#,
        )
        .unwrap();
        assert_eq!((caps["x"].as_str(), caps["n"].as_str()), ("v", "3"));
        assert!(body_cmp(r#"<U>http://h/{{any}}/q</U>"#, r"<U>http://h/000/r</U>").is_err());
        assert!(body_cmp("{{any}}", "whatever").is_ok());
        assert!(body_cmp("", "something").is_err());
        let mut vars = Vars::new();
        vars.insert("rh".into(), "a+b".into());
        assert_eq!(
            substitute("ReceiptHandle={{rh}}", &vars, Encoding::Form).unwrap(),
            "ReceiptHandle=a%2Bb"
        );
        assert!(substitute("{{nope}}", &vars, Encoding::Raw).is_err());
    }

    #[test]
    fn headers_exact_or_absent() {
        let vars = Vars::new();
        let mut c = Cmp {
            vars: &vars,
            caps: Vec::new(),
        };
        let actual = vec![("content-type".to_owned(), "text/xml".to_owned())];
        let exp = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        assert!(c.headers(&exp("Content-Type", "text/xml"), &actual).is_ok());
        assert!(
            c.headers(&exp("content-type", "text/xml; charset=utf-8"), &actual)
                .is_err()
        );
        assert!(
            c.headers(&exp("x-amzn-query-error", "{{absent}}"), &actual)
                .is_ok()
        );
        assert!(
            c.headers(&exp("content-type", "{{absent}}"), &actual)
                .is_err()
        );
        assert!(
            c.headers(&exp("x-amzn-query-error", "X;Sender"), &actual)
                .is_err()
        );
    }

    #[test]
    fn transcript_format() {
        let text = "source: here\n\n>>> request: one\nPOST /\nContent-Type: application/x-www-form-urlencoded\n\nAction=ListQueues\n  &Version=2012-11-05\n\n<<< response\nHTTP/1.1 200 OK\ncontent-type: text/xml\n\n<A/>\n\nadvance: 2s\n";
        let t = parse_transcript(Path::new("x.txt"), text).unwrap();
        assert_eq!(t.sources, ["here"]);
        let Step::Exchange(x) = &t.steps[0] else {
            panic!("expected an exchange")
        };
        assert_eq!(x.note, "one");
        assert_eq!(x.request.body, "Action=ListQueues&Version=2012-11-05");
        assert_eq!(x.request.action(), Some(("ListQueues".into(), false)));
        assert_eq!(x.response.status, 200);
        assert!(matches!(t.steps[1], Step::Advance { ms: 2000, .. }));
        assert!(parse_transcript(Path::new("x.txt"), ">>> request\nGET /\n\n").is_err());
        let opts = "source: s\nserver: enforce-cooloffs\n>>> request\nGET /\n<<< response\n200\n";
        assert!(
            parse_transcript(Path::new("x.txt"), opts)
                .unwrap()
                .options
                .enforce_cooloffs
        );
        let bad = "source: s\nserver: turbo\n>>> request\nGET /\n<<< response\n200\n";
        assert!(parse_transcript(Path::new("x.txt"), bad).is_err());
        assert!(parse_transcript(Path::new("x.txt"), "source: s\n>>> request\nGET /\n").is_err());
        assert!(parse_transcript(Path::new("x.txt"), "source: s\n<<< response\n200\n").is_err());
    }
}
