//! Tools layer: ElasticMQ's `elasticmq.conf`, read as a `--config` file, so an ElasticMQ user
//! switches by changing the image. Only its `queues { … }` block (and `aws { region, accountId }`)
//! matter to localsqs; the rest (node address, ports, limits) configures ElasticMQ itself and is
//! skipped. Inside `queues`, every key is checked: an unknown one is named in the error, and
//! `copyTo`/`moveTo`, which localsqs does not implement, are refused with a clear message.
//!
//! HOCON is a large language; ElasticMQ's configs use a small part of it: nested objects
//! (`name { … }`), `key = value` (or `key: value`, or `key { … }`), quoted and unquoted strings,
//! numbers, booleans, durations such as `10 seconds`, `//` and `#` comments, and `include` lines.
//! This module parses exactly that part, with errors that name the line.

use std::collections::BTreeMap;

use super::decl::{DeadLetter, QueueDecl, Setup};

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A string, number, boolean or duration, as written (quotes removed).
    Scalar(String),
    /// A nested object, keys in order.
    Object(Vec<(String, Value)>),
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
        while self.pos < self.src.len() {
            match self.src[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => self.pos += 1,
                b'#' => self.skip_line(),
                b'/' if self.src.get(self.pos + 1) == Some(&b'/') => self.skip_line(),
                _ => break,
            }
        }
    }

    fn skip_line(&mut self) {
        while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Members until `}` (or the end, at top level).
    fn object(&mut self, top: bool) -> Result<Vec<(String, Value)>, String> {
        let mut out = Vec::new();
        loop {
            self.skip();
            match self.peek() {
                None if top => return Ok(out),
                None => return Err(self.err("unclosed {")),
                Some(b'}') if !top => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => {}
            }
            let key = self.key()?;
            if key == "include" {
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
                    if self.peek() == Some(b'{') {
                        self.pos += 1;
                        Value::Object(self.object(false)?)
                    } else {
                        Value::Scalar(self.scalar()?)
                    }
                }
                _ => return Err(self.err(&format!("expected = or {{ after {key}"))),
            };
            out.push((key, value));
        }
    }

    fn skip_inline(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn key(&mut self) -> Result<String, String> {
        if self.peek() == Some(b'"') {
            return self.quoted();
        }
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                self.pos += 1;
            } else {
                break;
            }
        }
        if start == self.pos {
            return Err(self.err("expected a key"));
        }
        Ok(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
    }

    fn quoted(&mut self) -> Result<String, String> {
        self.pos += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'"' => return String::from_utf8(out).map_err(|_| self.err("not UTF-8")),
                b'\\' => {
                    let e = self.peek().ok_or_else(|| self.err("unclosed string"))?;
                    self.pos += 1;
                    out.push(match e {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                }
                b'\n' => return Err(self.err("unclosed string")),
                other => out.push(other),
            }
        }
        Err(self.err("unclosed string"))
    }

    /// A value up to the end of the line, a comma, a comment or a closing brace.
    fn scalar(&mut self) -> Result<String, String> {
        if self.peek() == Some(b'"') {
            return self.quoted();
        }
        let start = self.pos;
        while let Some(b) = self.peek() {
            let comment = b == b'#' || (b == b'/' && self.src.get(self.pos + 1) == Some(&b'/'));
            if matches!(b, b'\n' | b',' | b'}') || comment {
                break;
            }
            self.pos += 1;
        }
        let text = String::from_utf8_lossy(&self.src[start..self.pos])
            .trim()
            .to_owned();
        if text.is_empty() {
            return Err(self.err("expected a value"));
        }
        Ok(text)
    }
}

fn parse(text: &str) -> Result<Vec<(String, Value)>, String> {
    Parser {
        src: text.as_bytes(),
        pos: 0,
    }
    .object(true)
}

/// Seconds in a HOCON duration: `10 seconds`, `10s`, `2 minutes`, `500 ms`, or a bare number of
/// seconds.
fn seconds(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration"))?;
    let factor_ms = match unit.trim() {
        "" | "s" | "second" | "seconds" => 1000,
        "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        other => return Err(format!("unknown duration unit {other:?} in {text:?}")),
    };
    Ok(n * factor_ms / 1000)
}

fn scalar<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    match v {
        Value::Scalar(s) => Ok(s),
        Value::Object(_) => Err(format!("{key} must be a value, not a block")),
    }
}

fn boolean(v: &Value, key: &str) -> Result<bool, String> {
    match scalar(v, key)? {
        "true" | "yes" | "on" => Ok(true),
        "false" | "no" | "off" => Ok(false),
        other => Err(format!("{key} must be true or false, not {other:?}")),
    }
}

fn queue(name: &str, members: &[(String, Value)]) -> Result<QueueDecl, String> {
    let mut q = QueueDecl {
        name: name.to_owned(),
        account: None,
        region: None,
        attributes: BTreeMap::new(),
        tags: BTreeMap::new(),
        dead_letter: None,
        redrive_allow: None,
        push: Vec::new(),
    };
    let mut attr = |k: &str, v: String| {
        q.attributes.insert(k.to_owned(), toml::Value::String(v));
    };
    for (key, v) in members {
        match key.as_str() {
            "defaultVisibilityTimeout" => {
                attr("VisibilityTimeout", seconds(scalar(v, key)?)?.to_string());
            }
            "delay" => attr("DelaySeconds", seconds(scalar(v, key)?)?.to_string()),
            "receiveMessageWait" => attr(
                "ReceiveMessageWaitTimeSeconds",
                seconds(scalar(v, key)?)?.to_string(),
            ),
            "fifo" => attr("FifoQueue", boolean(v, key)?.to_string()),
            "contentBasedDeduplication" => {
                attr("ContentBasedDeduplication", boolean(v, key)?.to_string());
            }
            "deadLettersQueue" => {
                let Value::Object(dl) = v else {
                    return Err("deadLettersQueue must be a block".into());
                };
                let mut dlq_name = None;
                let mut max = None;
                for (k, v) in dl {
                    match k.as_str() {
                        "name" => dlq_name = Some(scalar(v, k)?.to_owned()),
                        "maxReceiveCount" => {
                            max = Some(
                                scalar(v, k)?
                                    .parse::<u32>()
                                    .map_err(|_| "maxReceiveCount must be a number".to_owned())?,
                            );
                        }
                        other => return Err(format!("unknown key deadLettersQueue.{other}")),
                    }
                }
                q.dead_letter = Some(DeadLetter {
                    queue: dlq_name.ok_or("deadLettersQueue needs a name")?,
                    max_receive_count: max.ok_or("deadLettersQueue needs a maxReceiveCount")?,
                });
            }
            "tags" => {
                let Value::Object(tags) = v else {
                    return Err("tags must be a block".into());
                };
                for (k, v) in tags {
                    q.tags.insert(k.clone(), scalar(v, k)?.to_owned());
                }
            }
            "copyTo" | "moveTo" => {
                return Err(format!(
                    "{key} (ElasticMQ's message copying and redirection) is not supported by localsqs; remove it"
                ));
            }
            other => return Err(format!("unknown key {other}")),
        }
    }
    Ok(q)
}

/// Whether a config file is ElasticMQ's rather than localsqs's TOML: a `.conf` name, or a
/// `queues {` block.
#[must_use]
pub fn looks_like(path: &std::path::Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "conf")
        || text
            .lines()
            .any(|l| l.trim_start().starts_with("queues") && l.contains('{'))
}

/// Reads an `elasticmq.conf` into the queues it declares.
pub fn read(text: &str) -> Result<Setup, String> {
    let top = parse(text)?;
    let mut region = None;
    let mut account = None;
    if let Some((_, Value::Object(aws))) = top.iter().find(|(k, _)| k == "aws") {
        for (k, v) in aws {
            match k.as_str() {
                "region" => region = Some(scalar(v, k)?.to_owned()),
                "accountId" => account = Some(scalar(v, k)?.to_owned()),
                _ => {}
            }
        }
    }
    let mut setup = Setup::default();
    if let Some((_, v)) = top.iter().find(|(k, _)| k == "queues") {
        let Value::Object(queues) = v else {
            return Err("queues must be a block".into());
        };
        for (name, v) in queues {
            let Value::Object(members) = v else {
                return Err(format!("queue {name}: must be a block"));
            };
            let mut q = queue(name, members).map_err(|e| format!("queue {name}: {e}"))?;
            q.region.clone_from(&region);
            q.account.clone_from(&account);
            setup.queue.push(q);
        }
    }
    Ok(setup)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
include classpath("application.conf")

node-address {
  protocol = http
  host = localhost
  port = 9324
  context-path = ""
}
rest-sqs { enabled = true, bind-port = 9324, sqs-limits = strict }

queues {
  orders {
    defaultVisibilityTimeout = 10 seconds
    delay = 5 seconds
    receiveMessageWait = 0 seconds
    deadLettersQueue {
      name = "orders-dead-letters"
      maxReceiveCount = 3 // from 1 to 1000
    }
    tags {
      team = "shop"
    }
  }
  orders-dead-letters { }
  "jobs.fifo" {
    fifo = true
    contentBasedDeduplication = true
  }
}

aws {
  region = eu-west-1
  accountId = 111111111111
}
"#;

    #[test]
    fn reads_elasticmqs_documented_shape() {
        let s = read(SAMPLE).expect("reads");
        let names: Vec<&str> = s.queue.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(names, ["orders", "orders-dead-letters", "jobs.fifo"]);
        let orders = &s.queue[0];
        assert_eq!(
            orders.attributes.get("VisibilityTimeout"),
            Some(&toml::Value::String("10".into()))
        );
        assert_eq!(
            orders.attributes.get("DelaySeconds"),
            Some(&toml::Value::String("5".into()))
        );
        let dl = orders.dead_letter.as_ref().expect("a DLQ");
        assert_eq!(
            (dl.queue.as_str(), dl.max_receive_count),
            ("orders-dead-letters", 3)
        );
        assert_eq!(orders.tags.get("team").map(String::as_str), Some("shop"));
        assert_eq!(orders.region.as_deref(), Some("eu-west-1"));
        assert_eq!(orders.account.as_deref(), Some("111111111111"));
        assert_eq!(
            s.queue[2].attributes.get("FifoQueue"),
            Some(&toml::Value::String("true".into()))
        );
    }

    #[test]
    fn unknown_keys_and_copy_to_are_named() {
        let e = read("queues { q { visibility = 3 } }").unwrap_err();
        assert_eq!(e, "queue q: unknown key visibility");
        let e = read("queues { q { copyTo = \"audit\" } }").unwrap_err();
        assert!(e.contains("copyTo") && e.contains("not supported"), "{e}");
        let e = read("queues {\n q {\n delay = soon\n }\n}").unwrap_err();
        assert!(e.contains("duration"), "{e}");
        assert!(read("queues { q {").unwrap_err().contains("unclosed"));
    }

    #[test]
    fn durations() {
        assert_eq!(seconds("10 seconds"), Ok(10));
        assert_eq!(seconds("2 minutes"), Ok(120));
        assert_eq!(seconds("30s"), Ok(30));
        assert_eq!(seconds("7"), Ok(7));
        assert_eq!(seconds("1500 ms"), Ok(1));
        assert!(seconds("ten").is_err());
    }
}
