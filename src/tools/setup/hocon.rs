//! Tools layer: the part of HOCON (Typesafe Config's format) that ElasticMQ's configs use, read
//! into a tree whose every member remembers the line it was written on, so that an error names
//! the line and the key the user wrote.
//!
//! Read: nested objects (`name { … }`, `name = { … }`, `name: { … }`), dotted paths
//! (`aws.region = x`, `queues."jobs.fifo".delay = 1 s`), quoted, triple-quoted and unquoted
//! strings (numbers, booleans and durations such as `10 seconds` are unquoted strings here),
//! arrays (kept as written: ElasticMQ's queue keys never take one), `//` and `#` comments,
//! commas or newlines between members, `include` lines (skipped: they name ElasticMQ's own
//! defaults), and HOCON's merging of an object given twice. Substitutions (`${VAR}`, `${?VAR}`)
//! are kept as written and resolved, from the environment, by the reader of the key
//! ([`substitute`]); durations are read as HOCON reads them ([`seconds`]).

/// A member of an object: its key, the line its key is on, its value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Member {
    /// The key (one path segment, unquoted).
    pub key: String,
    /// 1-based line of the key (of its last assignment, for a value given twice).
    pub line: usize,
    /// The value.
    pub value: Value,
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// A string, number, boolean, duration or array, as written (quotes removed).
    Scalar(String),
    /// A nested object, members in the order they first appear.
    Object(Vec<Member>),
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn line(&self) -> usize {
        self.src[..self.pos].iter().filter(|&&b| b == b'\n').count() + 1
    }

    fn err(&self, what: &str) -> String {
        format!("line {}: {what}", self.line())
    }

    /// Skips spaces, commas, newlines and comments.
    fn skip(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => self.pos += 1,
                b'#' => self.skip_line(),
                b'/' if self.src.get(self.pos + 1) == Some(&b'/') => self.skip_line(),
                // A byte-order mark at the start of the file.
                0xEF if self.src[self.pos..].starts_with(&[0xEF, 0xBB, 0xBF]) => self.pos += 3,
                _ => break,
            }
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|b| b != b'\n') {
            self.pos += 1;
        }
    }

    fn skip_inline(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Members until `}` (or the end of the file, at top level).
    fn object(&mut self, top: bool) -> Result<Vec<Member>, String> {
        let mut out = Vec::new();
        // A file may wrap everything in one pair of braces.
        let braced_top = top && {
            self.skip();
            self.peek() == Some(b'{')
        };
        if braced_top {
            self.pos += 1;
        }
        let closing = !top || braced_top;
        loop {
            self.skip();
            match self.peek() {
                None if !closing => return Ok(out),
                None => return Err(self.err("a { is never closed")),
                Some(b'}') if closing => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'}') => return Err(self.err("a } closes nothing")),
                Some(_) => {}
            }
            let line = self.line();
            let path = self.path()?;
            if path.len() == 1 && path[0] == "include" && self.at_include() {
                // `include classpath("application.conf")` and friends: ElasticMQ's defaults.
                self.skip_line();
                continue;
            }
            self.skip_inline();
            let value = match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    Value::Object(self.object(false)?)
                }
                Some(b'=' | b':') => {
                    self.pos += 1;
                    self.skip_inline();
                    match self.peek() {
                        Some(b'{') => {
                            self.pos += 1;
                            Value::Object(self.object(false)?)
                        }
                        Some(b'[') => Value::Scalar(self.array()?),
                        _ => Value::Scalar(self.scalar()?),
                    }
                }
                Some(b'+') if self.src.get(self.pos + 1) == Some(&b'=') => {
                    return Err(self.err(&format!(
                        "{} += …: appending to an array is not read by localsqs",
                        path.join(".")
                    )));
                }
                _ => {
                    return Err(self.err(&format!("expected = or {{ after {}", path.join("."))));
                }
            };
            insert(&mut out, &path, line, value);
        }
    }

    /// Whether the `include` just read starts an include directive rather than a key.
    fn at_include(&self) -> bool {
        let rest = &self.src[self.pos..];
        let rest = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t'))
            .map_or(&[][..], |i| &rest[i..]);
        rest.first() == Some(&b'"')
            || ["classpath(", "file(", "url(", "required("]
                .iter()
                .any(|p| rest.starts_with(p.as_bytes()))
    }

    /// A key: path segments separated by `.`, each quoted or unquoted.
    fn path(&mut self) -> Result<Vec<String>, String> {
        let mut segs = Vec::new();
        loop {
            if self.peek() == Some(b'"') {
                segs.push(self.quoted()?);
            } else {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
                {
                    self.pos += 1;
                }
                if start == self.pos {
                    return Err(self.err(if segs.is_empty() {
                        "expected a key"
                    } else {
                        "expected a key after ."
                    }));
                }
                segs.push(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned());
            }
            if self.peek() == Some(b'.') {
                self.pos += 1;
            } else {
                return Ok(segs);
            }
        }
    }

    fn quoted(&mut self) -> Result<String, String> {
        if self.src[self.pos..].starts_with(b"\"\"\"") {
            self.pos += 3;
            let rest = &self.src[self.pos..];
            let end = rest
                .windows(3)
                .position(|w| w == b"\"\"\"")
                .ok_or_else(|| self.err("a \"\"\" string is never closed"))?;
            let text = String::from_utf8(rest[..end].to_vec()).map_err(|_| self.err("not UTF-8"));
            self.pos += end + 3;
            return text;
        }
        self.pos += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|_| self.err("not UTF-8")),
                b'\\' => {
                    let e = self
                        .peek()
                        .ok_or_else(|| self.err("a string is never closed"))?;
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        other => other,
                    });
                }
                b'\n' => return Err(self.err("a string is never closed")),
                other => out.push(other),
            }
        }
        Err(self.err("a string is never closed"))
    }

    /// `[ … ]`, kept as written (it may span lines; brackets inside strings do not count).
    fn array(&mut self) -> Result<String, String> {
        let start = self.pos;
        let line = self.line();
        let mut depth = 0usize;
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    self.quoted()?;
                    continue;
                }
                b'[' => depth += 1,
                b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned());
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        Err(format!("line {line}: a [ is never closed"))
    }

    /// A value up to the end of the line, a comma, a comment or a closing brace; a quoted
    /// string may be followed by more text on the line (HOCON's concatenation).
    fn scalar(&mut self) -> Result<String, String> {
        let quoted = self.peek() == Some(b'"');
        let mut text = if quoted {
            self.quoted()?
        } else {
            String::new()
        };
        let start = self.pos;
        while let Some(b) = self.peek() {
            let comment = b == b'#' || (b == b'/' && self.src.get(self.pos + 1) == Some(&b'/'));
            if matches!(b, b'\n' | b',' | b'}' | b']') || comment {
                break;
            }
            self.pos += 1;
        }
        let rest = String::from_utf8_lossy(&self.src[start..self.pos]);
        if !quoted {
            let rest = rest.trim();
            if rest.is_empty() {
                return Err(self.err("expected a value"));
            }
            return Ok(rest.to_owned());
        }
        text.push_str(rest.trim_end());
        Ok(text)
    }
}

/// Puts `value` at `path` in `into`, merging objects given twice (HOCON: a later object is
/// merged into an earlier one; any other later value replaces it).
fn insert(into: &mut Vec<Member>, path: &[String], line: usize, value: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let value = if rest.is_empty() {
        value
    } else {
        let mut inner = Vec::new();
        insert(&mut inner, rest, line, value);
        Value::Object(inner)
    };
    merge(
        into,
        Member {
            key: first.clone(),
            line,
            value,
        },
    );
}

fn merge(into: &mut Vec<Member>, m: Member) {
    let Some(existing) = into.iter_mut().find(|e| e.key == m.key) else {
        into.push(m);
        return;
    };
    match (&mut existing.value, m.value) {
        (Value::Object(old), Value::Object(new)) => {
            for member in new {
                merge(old, member);
            }
        }
        (slot, value) => {
            *slot = value;
            existing.line = m.line;
        }
    }
}

/// Parses HOCON text into its top-level members.
pub(super) fn parse(text: &str) -> Result<Vec<Member>, String> {
    Parser {
        src: text.as_bytes(),
        pos: 0,
    }
    .object(true)
}

/// The member called `key`, if any.
pub(super) fn get<'a>(members: &'a [Member], key: &str) -> Option<&'a Member> {
    members.iter().find(|m| m.key == key)
}

/// A key as the user would write it in a path: quoted when it holds anything but letters,
/// digits, `-` and `_`.
pub(super) fn show_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
    {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

/// Resolves `${VAR}` and `${?VAR}` from the environment (localsqs has no other source of
/// substitutions). An optional one that is unset makes the whole value unset when it is the
/// whole value, and empty inside a longer one.
pub(super) fn substitute(raw: &str) -> Result<Option<String>, String> {
    if !raw.contains("${") {
        return Ok(Some(raw.to_owned()));
    }
    if let Some(name) = raw
        .trim()
        .strip_prefix("${?")
        .and_then(|r| r.strip_suffix('}'))
        .filter(|n| !n.contains('}'))
    {
        return Ok(std::env::var(name.trim()).ok());
    }
    let mut out = String::new();
    let mut rest = raw;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("{raw:?}: a ${{ is never closed"))?;
        let (optional, name) = match after[..end].strip_prefix('?') {
            Some(name) => (true, name.trim()),
            None => (false, after[..end].trim()),
        };
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) if optional => {}
            Err(_) => {
                return Err(format!(
                    "${{{name}}} is not set (localsqs takes substitutions from environment variables only)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// Whole seconds in a HOCON duration: a number and an optional unit (`10 seconds`, `30s`,
/// `1.5 minutes`, `500 ms`); a bare number is milliseconds, as HOCON reads it. Rounded down,
/// as ElasticMQ reads these keys.
pub(super) fn seconds(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| format!("{text:?} is not a duration (write e.g. 10 seconds)"))?;
    let unit_secs = match unit.trim() {
        // HOCON: a number without a unit is milliseconds.
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1e-3,
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => 1e-9,
        "us" | "micro" | "micros" | "microsecond" | "microseconds" => 1e-6,
        "s" | "second" | "seconds" => 1.0,
        "m" | "minute" | "minutes" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} in {text:?} (HOCON's units: ns, us, ms, s, m, h, d, or their names, in lower case)"
            ));
        }
    };
    // A tiny tolerance so that 0.1 s × 10 is a whole second. Past u64 the range check fails.
    let secs = (n * unit_secs + 1e-9).floor();
    Ok(if secs >= u64::MAX as f64 {
        u64::MAX
    } else {
        secs as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar_at(members: &[Member], path: &[&str]) -> Option<(String, usize)> {
        let (first, rest) = path.split_first()?;
        let m = get(members, first)?;
        match (&m.value, rest.is_empty()) {
            (Value::Scalar(s), true) => Some((s.clone(), m.line)),
            (Value::Object(inner), false) => scalar_at(inner, rest),
            _ => None,
        }
    }

    #[test]
    fn paths_merges_and_lines() {
        let text = "include classpath(\"application.conf\")\n\
                    aws.region = eu-west-1\n\
                    queues {\n  \"jobs.fifo\" { fifo = true }\n}\n\
                    queues.\"jobs.fifo\".delay = 5 seconds // soon\n\
                    aws { accountId: \"123456789012\" }\n";
        let top = parse(text).expect("parses");
        assert_eq!(
            scalar_at(&top, &["aws", "region"]),
            Some(("eu-west-1".into(), 2))
        );
        assert_eq!(
            scalar_at(&top, &["aws", "accountId"]),
            Some(("123456789012".into(), 7))
        );
        assert_eq!(
            scalar_at(&top, &["queues", "jobs.fifo", "fifo"]),
            Some(("true".into(), 4))
        );
        assert_eq!(
            scalar_at(&top, &["queues", "jobs.fifo", "delay"]),
            Some(("5 seconds".into(), 6))
        );
    }

    #[test]
    fn arrays_triple_quotes_and_a_braced_file() {
        let top = parse("{ akka { loggers = [\"a\", \"b]\"]\n level = \"\"\"x\ny\"\"\" }, q = 1 }")
            .expect("parses");
        assert_eq!(
            scalar_at(&top, &["akka", "loggers"]).map(|s| s.0),
            Some("[\"a\", \"b]\"]".into())
        );
        assert_eq!(
            scalar_at(&top, &["akka", "level"]).map(|s| s.0),
            Some("x\ny".into())
        );
        assert_eq!(scalar_at(&top, &["q"]).map(|s| s.0), Some("1".into()));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            parse("queues {\n  q {\n").unwrap_err(),
            "line 3: a { is never closed"
        );
        assert_eq!(
            parse("a = 1\n}\n").unwrap_err(),
            "line 2: a } closes nothing"
        );
        assert_eq!(
            parse("a = 1\nb\n").unwrap_err(),
            "line 2: expected = or { after b"
        );
        assert_eq!(parse("[[queue]]\n").unwrap_err(), "line 1: expected a key");
    }

    #[test]
    fn keys_are_shown_as_written() {
        assert_eq!(show_key("orders-dlq"), "orders-dlq");
        assert_eq!(show_key("jobs.fifo"), "\"jobs.fifo\"");
    }

    #[test]
    fn durations_follow_hocon() {
        assert_eq!(seconds("10 seconds"), Ok(10));
        assert_eq!(seconds("1 second"), Ok(1));
        assert_eq!(seconds("2 minutes"), Ok(120));
        assert_eq!(seconds("30s"), Ok(30));
        assert_eq!(seconds("1.5 m"), Ok(90));
        assert_eq!(seconds("1500 ms"), Ok(1));
        // A bare number is milliseconds in HOCON, so ElasticMQ reads `delay = 7` as 0 s.
        assert_eq!(seconds("7"), Ok(0));
        assert_eq!(seconds("7000"), Ok(7));
        assert!(seconds("ten").is_err());
        assert!(seconds("5 Seconds").is_err(), "units are lower case");
    }

    #[test]
    fn substitutions_come_from_the_environment() {
        assert_eq!(substitute("plain"), Ok(Some("plain".into())));
        assert_eq!(substitute("${?LOCALSQS_TEST_SURELY_UNSET}"), Ok(None));
        assert_eq!(
            substitute("a${?LOCALSQS_TEST_SURELY_UNSET}b"),
            Ok(Some("ab".into()))
        );
        assert!(
            substitute("${LOCALSQS_TEST_SURELY_UNSET}")
                .unwrap_err()
                .contains("is not set")
        );
        let path = std::env::var("PATH").expect("PATH is set");
        assert_eq!(substitute("${PATH}"), Ok(Some(path)));
    }
}
