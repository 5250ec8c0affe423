//! Tools layer: ElasticMQ's `elasticmq.conf`, read as a `--config` file, so an ElasticMQ user
//! switches by changing the image. Two of its blocks matter to localsqs:
//!
//! - `queues { … }`: every key ElasticMQ reads there (its `QueueConfigUtil`) is read:
//!   `defaultVisibilityTimeout`, `delay`, `receiveMessageWait` (durations),
//!   `deadLettersQueue { name, maxReceiveCount }`, `fifo` (which, as in ElasticMQ, adds `.fifo`
//!   to a name that lacks it), `contentBasedDeduplication`, `tags { … }`, and `created` and
//!   `lastModified` (the timestamps of ElasticMQ's queues-storage file, ignored). `copyTo` and
//!   `moveTo` (copy or redirect every message to another queue) are refused by their own name:
//!   localsqs does not do that. Any other key is refused, naming it.
//! - `aws { region, accountId }`: the server's default region and account (where the queues
//!   are created, and what a request acts in), with ElasticMQ's region-blind lookups
//!   ([`Regions::Any`]); flags the operator gives win.
//!
//! The rest (node address, ports, limits, storage, Akka) configures ElasticMQ itself and is
//! skipped; enabled queue or message storage is noted in the log, as localsqs keeps state only
//! with `--data-dir`. Every error names the line and the key as written
//! (`line 7: queues.orders.delay: …`).

use std::collections::BTreeMap;

use super::decl::{DeadLetter, QueueDecl, ServerDefaults, Setup};
use super::hocon::{self, Member, Value, get, seconds, show_key, substitute};
use crate::command::{is_account_id, validate};
use crate::engine::Regions;

/// The queue keys ElasticMQ reads, for the message that refuses another.
const QUEUE_KEYS: &str = "defaultVisibilityTimeout, delay, receiveMessageWait, deadLettersQueue, fifo, contentBasedDeduplication, copyTo, moveTo, tags";

/// Top-level blocks of ElasticMQ's own configuration (its `reference.conf` and README), which
/// tell a HOCON file from localsqs's TOML when the syntax alone does not.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "queues",
    "aws",
    "node-address",
    "rest-sqs",
    "rest-stats",
    "generate-node-address",
    "queues-storage",
    "messages-storage",
    "storage",
    "akka",
    "pekko",
    "elasticmq",
];

/// A member's place, for errors: `line N: path: `.
struct At<'a> {
    path: String,
    member: &'a Member,
}

impl At<'_> {
    fn err(&self, what: impl std::fmt::Display) -> String {
        format!("line {}: {}: {what}", self.member.line, self.path)
    }

    fn child<'b>(&self, member: &'b Member) -> At<'b> {
        At {
            path: format!("{}.{}", self.path, show_key(&member.key)),
            member,
        }
    }

    fn block(&self) -> Result<&[Member], String> {
        match &self.member.value {
            Value::Object(members) => Ok(members),
            Value::Scalar(_) => Err(self.err("must be a block: { … }")),
        }
    }

    /// The value as text, substitutions resolved; `None` when an optional substitution
    /// (`${?VAR}`) names an unset variable, which leaves the key unset, as in HOCON.
    fn text(&self) -> Result<Option<String>, String> {
        match &self.member.value {
            Value::Scalar(raw) => substitute(raw).map_err(|e| self.err(e)),
            Value::Object(_) => Err(self.err("must be a value, not a block")),
        }
    }

    fn boolean(&self) -> Result<Option<bool>, String> {
        Ok(match self.text()?.as_deref() {
            None => None,
            Some("true" | "yes" | "on") => Some(true),
            Some("false" | "no" | "off") => Some(false),
            Some(other) => return Err(self.err(format!("must be true or false, not {other:?}"))),
        })
    }

    /// A duration, in whole seconds (ElasticMQ reads these keys in seconds, rounding down),
    /// checked against SQS's range for the attribute it sets.
    fn seconds(&self, max: u64, attribute: &str) -> Result<Option<u64>, String> {
        let Some(text) = self.text()? else {
            return Ok(None);
        };
        let secs = seconds(&text).map_err(|e| self.err(e))?;
        if secs > max {
            return Err(self.err(format!(
                "{text} is {secs} seconds; SQS allows 0 to {max} for {attribute}"
            )));
        }
        Ok(Some(secs))
    }
}

/// One queue block.
fn queue(at: &At<'_>, declared: &BTreeMap<String, String>) -> Result<QueueDecl, String> {
    let members = at.block()?;
    let fifo_key = get(members, "fifo");
    let fifo = match fifo_key {
        Some(m) => at.child(m).boolean()?.unwrap_or(false),
        None => false,
    };
    let name = final_name(&at.member.key, fifo);
    if at.member.key.ends_with(".fifo") && fifo_key.is_some() && !fifo {
        let m = fifo_key.map_or(at.member, |m| m);
        return Err(at.child(m).err(
            "is false, but the name ends in .fifo, which SQS keeps for FIFO queues: remove the line or rename the queue",
        ));
    }
    let is_fifo = name.ends_with(".fifo");
    validate::queue_name(&name, is_fifo).map_err(|e| at.err(format!("{name:?}: {}", e.message)))?;
    let mut q = QueueDecl {
        name,
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
    if is_fifo {
        attr("FifoQueue", "true".into());
    }
    for m in members {
        let at = at.child(m);
        match m.key.as_str() {
            "defaultVisibilityTimeout" => {
                if let Some(s) = at.seconds(43_200, "VisibilityTimeout")? {
                    attr("VisibilityTimeout", s.to_string());
                }
            }
            "delay" => {
                if let Some(s) = at.seconds(900, "DelaySeconds")? {
                    attr("DelaySeconds", s.to_string());
                }
            }
            "receiveMessageWait" => {
                if let Some(s) = at.seconds(20, "ReceiveMessageWaitTimeSeconds")? {
                    attr("ReceiveMessageWaitTimeSeconds", s.to_string());
                }
            }
            "fifo" => {} // read above
            "contentBasedDeduplication" => match at.boolean()? {
                Some(true) if !is_fifo => {
                    return Err(at.err(
                        "is true, but SQS has content-based deduplication only for FIFO queues: add fifo = true, or remove the line",
                    ));
                }
                Some(true) => attr("ContentBasedDeduplication", "true".into()),
                Some(false) | None => {}
            },
            "deadLettersQueue" => q.dead_letter = Some(dead_letter(&at, declared)?),
            "tags" => {
                for t in at.block()? {
                    let at = at.child(t);
                    if let Some(v) = at.text()? {
                        q.tags.insert(t.key.clone(), v);
                    }
                }
            }
            "copyTo" | "moveTo" => {
                // ElasticMQ treats an empty name as no name.
                if at.text()?.is_some_and(|v| !v.is_empty()) {
                    let what = if m.key == "copyTo" {
                        "copies every message sent to this queue to another queue"
                    } else {
                        "sends every message sent to this queue to another queue instead"
                    };
                    return Err(at.err(format!(
                        "ElasticMQ's {} {what}; localsqs does not, so it refuses the config rather than drop that behaviour: remove the line (docs/migrating.md)",
                        m.key
                    )));
                }
            }
            // Timestamps in ElasticMQ's queues-storage file; SQS sets these itself.
            "created" | "lastModified" => {}
            "maxReceiveCount" => {
                return Err(
                    at.err("belongs inside deadLettersQueue { name = \"…\", maxReceiveCount = N }")
                );
            }
            other => {
                return Err(at.err(format!(
                    "unknown key {other:?} (ElasticMQ's queue keys: {QUEUE_KEYS})"
                )));
            }
        }
    }
    Ok(q)
}

fn dead_letter(at: &At<'_>, declared: &BTreeMap<String, String>) -> Result<DeadLetter, String> {
    let mut name = None;
    let mut max = None;
    for m in at.block()? {
        let at = at.child(m);
        match m.key.as_str() {
            "name" => name = at.text()?.map(|n| (n, m.line)),
            "maxReceiveCount" => {
                if let Some(text) = at.text()? {
                    let n = text
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or_else(|| {
                            at.err(format!("{text:?}: must be a number from 1 to 1000"))
                        })?;
                    max = Some(n);
                }
            }
            other => {
                return Err(at.err(format!(
                    "unknown key {other:?} (deadLettersQueue has name and maxReceiveCount)"
                )));
            }
        }
    }
    let (name, line) = name.ok_or_else(|| at.err("needs a name = \"…\""))?;
    let queue = declared.get(&name).cloned().ok_or_else(|| {
        format!(
            "line {line}: {}.name: no queue {name:?} is declared in queues {{ }}; add {} {{ }} there",
            at.path,
            show_key(&name)
        )
    })?;
    Ok(DeadLetter {
        queue,
        max_receive_count: max.ok_or_else(|| at.err("needs a maxReceiveCount = N (1 to 1000)"))?,
    })
}

/// The name ElasticMQ gives a queue block: `fifo = true` adds `.fifo` when the name lacks it.
fn final_name(key: &str, fifo: bool) -> String {
    if fifo && !key.ends_with(".fifo") {
        format!("{key}.fifo")
    } else {
        key.to_owned()
    }
}

/// What an `elasticmq.conf` declares, and notes for the log about what localsqs leaves aside.
#[derive(Debug)]
pub struct Read {
    /// The queues, and the server defaults of `aws { }`.
    pub setup: Setup,
    /// Settings of ElasticMQ's that localsqs does not follow, worth a line in the log.
    pub notes: Vec<String>,
}

/// Reads an `elasticmq.conf`.
pub fn read(text: &str) -> Result<Read, String> {
    let top = hocon::parse(text)?;
    let mut server = ServerDefaults {
        regions: Some(Regions::Any),
        source: "the ElasticMQ config",
        ..ServerDefaults::default()
    };
    if let Some(aws) = get(&top, "aws") {
        let at = At {
            path: "aws".into(),
            member: aws,
        };
        for m in at.block()? {
            let at = at.child(m);
            match m.key.as_str() {
                "region" => server.region = at.text()?.filter(|r| !r.is_empty()),
                "accountId" => {
                    if let Some(a) = at.text()? {
                        if !is_account_id(&a) {
                            return Err(at.err(format!("{a:?} is not a 12-digit account id")));
                        }
                        server.account_id = Some(a);
                    }
                }
                other => {
                    return Err(at.err(format!(
                        "unknown key {other:?} (ElasticMQ's aws block has region and accountId)"
                    )));
                }
            }
        }
    }
    let mut notes = Vec::new();
    for block in ["queues-storage", "messages-storage"] {
        let enabled = get(&top, block).and_then(|m| match &m.value {
            Value::Object(inner) => get(inner, "enabled").map(|e| (m.line, e)),
            Value::Scalar(_) => None,
        });
        if let Some((line, e)) = enabled
            && matches!(&e.value, Value::Scalar(v) if v == "true")
        {
            notes.push(format!(
                "line {line}: {block} is ElasticMQ's own storage; localsqs neither reads nor writes it (start localsqs with --data-dir to keep queues and messages across restarts)"
            ));
        }
    }
    let mut setup = Setup {
        server,
        ..Setup::default()
    };
    if let Some(queues) = get(&top, "queues") {
        let at = At {
            path: "queues".into(),
            member: queues,
        };
        let blocks = at.block()?;
        // Names as declared (and as a dead-letter reference may write them) → final names.
        let mut declared = BTreeMap::new();
        for m in blocks {
            let fifo = match &m.value {
                Value::Object(inner) => get(inner, "fifo").is_some_and(
                    |f| matches!(&f.value, Value::Scalar(v) if matches!(v.as_str(), "true" | "yes" | "on")),
                ),
                Value::Scalar(_) => false,
            };
            let name = final_name(&m.key, fifo);
            declared.insert(m.key.clone(), name.clone());
            declared.insert(name.clone(), name);
        }
        for m in blocks {
            setup.queue.push(queue(&at.child(m), &declared)?);
        }
    }
    Ok(Read { setup, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(q: &QueueDecl, k: &str) -> Option<String> {
        q.attributes
            .get(k)
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    #[test]
    fn every_queue_key_and_the_aws_block() {
        let r = read(
            r#"
include classpath("application.conf")
queues {
  orders {
    defaultVisibilityTimeout = 10 seconds
    delay = 5 seconds
    receiveMessageWait = 0 seconds
    deadLettersQueue {
      name = "orders-dead-letters"
      maxReceiveCount = 3 // from 1 to 1000
    }
    fifo = false
    contentBasedDeduplication = false
    copyTo = ""
    tags { team = "shop", tier = gold }
  }
  orders-dead-letters { }
  jobs {
    fifo = true
    contentBasedDeduplication = true
    deadLettersQueue { name = jobs-dlq, maxReceiveCount = 5 }
  }
  jobs-dlq { fifo = true }
}
aws { region = eu-west-1, accountId = "123456789012" }
"#,
        )
        .expect("reads");
        let s = &r.setup;
        let names: Vec<&str> = s.queue.iter().map(|q| q.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "orders",
                "orders-dead-letters",
                "jobs.fifo",
                "jobs-dlq.fifo"
            ]
        );
        let orders = &s.queue[0];
        assert_eq!(attr(orders, "VisibilityTimeout").as_deref(), Some("10"));
        assert_eq!(attr(orders, "DelaySeconds").as_deref(), Some("5"));
        assert_eq!(
            attr(orders, "ReceiveMessageWaitTimeSeconds").as_deref(),
            Some("0")
        );
        assert_eq!(attr(orders, "FifoQueue"), None, "fifo = false sets nothing");
        assert_eq!(attr(orders, "ContentBasedDeduplication"), None);
        assert_eq!(orders.tags.get("tier").map(String::as_str), Some("gold"));
        let dl = orders.dead_letter.as_ref().expect("a DLQ");
        assert_eq!(
            (dl.queue.as_str(), dl.max_receive_count),
            ("orders-dead-letters", 3)
        );
        let jobs = &s.queue[2];
        assert_eq!(attr(jobs, "FifoQueue").as_deref(), Some("true"));
        assert_eq!(
            attr(jobs, "ContentBasedDeduplication").as_deref(),
            Some("true")
        );
        assert_eq!(
            jobs.dead_letter.as_ref().map(|d| d.queue.as_str()),
            Some("jobs-dlq.fifo"),
            "a reference by the declared name follows the .fifo ElasticMQ adds"
        );
        assert_eq!(s.server.region.as_deref(), Some("eu-west-1"));
        assert_eq!(s.server.account_id.as_deref(), Some("123456789012"));
        assert_eq!(s.server.regions, Some(Regions::Any));
        assert!(orders.region.is_none() && orders.account.is_none());
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let e = |text: &str| read(text).unwrap_err();
        assert_eq!(
            e("queues {\n q {\n  visibility = 3\n }\n}"),
            format!(
                "line 3: queues.q.visibility: unknown key \"visibility\" (ElasticMQ's queue keys: {QUEUE_KEYS})"
            )
        );
        let copy = e("queues {\n q {\n  copyTo = \"audit\"\n }\n audit { }\n}");
        assert!(
            copy.starts_with("line 3: queues.q.copyTo: ElasticMQ's copyTo"),
            "{copy}"
        );
        let mv = e("queues { q { moveTo = elsewhere } }");
        assert!(
            mv.starts_with("line 1: queues.q.moveTo: ElasticMQ's moveTo"),
            "{mv}"
        );
        assert!(
            e("queues {\n q {\n delay = soon\n }\n}")
                .starts_with("line 3: queues.q.delay: \"soon\" is not a duration")
        );
        assert_eq!(
            e("queues {\n q {\n  delay = 20 minutes\n }\n}"),
            "line 3: queues.q.delay: 20 minutes is 1200 seconds; SQS allows 0 to 900 for DelaySeconds"
        );
        assert!(
            e("queues {\n \"q.fifo\" {\n  fifo = false\n }\n}")
                .starts_with("line 3: queues.\"q.fifo\".fifo: is false")
        );
        assert!(
            e("queues {\n q {\n  contentBasedDeduplication = true\n }\n}")
                .starts_with("line 3: queues.q.contentBasedDeduplication: is true")
        );
        assert_eq!(
            e(
                "queues {\n q {\n  deadLettersQueue {\n   name = gone\n   maxReceiveCount = 3\n  }\n }\n}"
            ),
            "line 4: queues.q.deadLettersQueue.name: no queue \"gone\" is declared in queues { }; add gone { } there"
        );
        assert!(
            e("queues { d { }, q { deadLettersQueue { name = d, maxReceiveCount = 0 } } }")
                .contains("maxReceiveCount: \"0\": must be a number from 1 to 1000")
        );
        assert!(
            e("queues { q { deadLettersQueue { name = q } } }").contains("needs a maxReceiveCount")
        );
        assert!(
            e("queues { q { maxReceiveCount = 3 } }").contains("belongs inside deadLettersQueue")
        );
        assert_eq!(
            e("aws {\n accountId = 42\n}"),
            "line 2: aws.accountId: \"42\" is not a 12-digit account id"
        );
        assert!(
            e("queues { \"bad name\" { } }")
                .starts_with("line 1: queues.\"bad name\": \"bad name\": Can only include")
        );
        assert!(e("queues { q {").contains("never closed"));
    }

    #[test]
    fn enabled_storage_is_noted() {
        let r = read("queues-storage { enabled = true, path = \"/data/queues.conf\" }\nqueues { }")
            .expect("reads");
        assert_eq!(r.notes.len(), 1);
        assert!(r.notes[0].contains("--data-dir"), "{:?}", r.notes);
        assert!(
            read("messages-storage { enabled = false }")
                .expect("reads")
                .notes
                .is_empty()
        );
    }
}
