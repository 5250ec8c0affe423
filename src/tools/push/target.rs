//! Tools layer: a push target as users write it, and its validation into what the pollers
//! run (the handler to call, the compiled filter).

use serde::{Deserialize, Serialize};

use super::{filter, invoke};

fn default_batch_size() -> u32 {
    10
}

fn default_concurrency() -> u32 {
    2
}

/// A push target as users write it (JSON body of `POST /_localsqs/push`, a `[[queue.push]]`
/// table, or the Rust API): exactly one of `url` and `command`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushTarget {
    /// The queue to read, by name (implied by the enclosing `[[queue]]` in a config file).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub queue: String,
    /// `http://host:port[/path]` receiving each batch as a POST; without a path, the Lambda
    /// Runtime Interface Emulator's `/2015-03-31/functions/function/invocations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A program and its arguments, run per batch with the event on standard input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Most records per invocation, 1–10,000 (10 for FIFO queues).
    #[serde(default = "default_batch_size")]
    pub batch_size: u32,
    /// Seconds to keep gathering a batch after its first message, 0–300 (needed above 10).
    #[serde(default)]
    pub maximum_batching_window_seconds: u32,
    /// Batches in flight at once, at least 1.
    #[serde(default = "default_concurrency")]
    pub max_concurrency: u32,
    /// Read `{"batchItemFailures": [{"itemIdentifier": "<messageId>"}]}` answers.
    #[serde(default)]
    pub report_batch_item_failures: bool,
    /// Lambda filter pattern(s); records that do not match are deleted without invoking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<serde_json::Value>,
}

impl Default for PushTarget {
    fn default() -> Self {
        Self {
            queue: String::new(),
            url: None,
            command: Vec::new(),
            batch_size: default_batch_size(),
            maximum_batching_window_seconds: 0,
            max_concurrency: default_concurrency(),
            report_batch_item_failures: false,
            filter: None,
        }
    }
}

impl PushTarget {
    /// A target POSTing batches of `queue` to `url`.
    #[must_use]
    pub fn http(queue: &str, url: &str) -> Self {
        Self {
            queue: queue.into(),
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// A target running `argv` for each batch of `queue`.
    #[must_use]
    pub fn command<S: Into<String>>(queue: &str, argv: impl IntoIterator<Item = S>) -> Self {
        Self {
            queue: queue.into(),
            command: argv.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Checks every field; the message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        self.compile().map(|_| ())
    }

    pub(super) fn compile(&self) -> Result<Compiled, String> {
        if self.queue.is_empty() {
            return Err("a push target needs a queue".into());
        }
        let handler = match (&self.url, self.command.is_empty()) {
            (Some(url), true) => Handler::Http(invoke::Endpoint::parse(url)?),
            (None, false) if self.command[0].is_empty() => {
                return Err("command must start with a program name".into());
            }
            (None, false) => Handler::Command(self.command.clone()),
            (Some(_), false) => return Err("a push target has a url or a command, not both".into()),
            (None, true) => return Err("a push target needs a url or a command".into()),
        };
        let fifo = self.queue.ends_with(".fifo");
        let max_batch = if fifo { 10 } else { 10_000 };
        if !(1..=max_batch).contains(&self.batch_size) {
            let queues = if fifo { " for FIFO queues" } else { "" };
            return Err(format!(
                "batch_size must be between 1 and {max_batch}{queues}"
            ));
        }
        if self.maximum_batching_window_seconds > 300 {
            return Err("maximum_batching_window_seconds must be between 0 and 300".into());
        }
        if fifo && self.maximum_batching_window_seconds > 0 {
            return Err("maximum_batching_window_seconds is not supported for FIFO queues".into());
        }
        if self.batch_size > 10 && self.maximum_batching_window_seconds == 0 {
            return Err(
                "a batch_size above 10 needs maximum_batching_window_seconds of at least 1".into(),
            );
        }
        if !(1..=1000).contains(&self.max_concurrency) {
            return Err("max_concurrency must be between 1 and 1000".into());
        }
        let filter = self
            .filter
            .as_ref()
            .map(filter::Filter::compile)
            .transpose()?;
        Ok(Compiled {
            target: self.clone(),
            handler,
            filter,
        })
    }
}

/// A validated target, ready for its pollers.
#[derive(Debug)]
pub(super) struct Compiled {
    pub target: PushTarget,
    pub handler: Handler,
    pub filter: Option<filter::Filter>,
}

#[derive(Debug)]
pub(super) enum Handler {
    Http(invoke::Endpoint),
    Command(Vec<String>),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn targets_are_validated() {
        let ok = PushTarget::http("q", "http://127.0.0.1:9000");
        let fifo = PushTarget::command("q.fifo", ["cat"]);
        ok.validate().expect("valid");
        fifo.validate().expect("valid");
        let window = |batch_size, seconds, t: &PushTarget| PushTarget {
            batch_size,
            maximum_batching_window_seconds: seconds,
            ..t.clone()
        };
        window(10_000, 1, &ok)
            .validate()
            .expect("large batches with a window");
        let cases = [
            (
                PushTarget {
                    queue: String::new(),
                    ..ok.clone()
                },
                "needs a queue",
            ),
            (
                PushTarget {
                    url: None,
                    ..ok.clone()
                },
                "url or a command",
            ),
            (
                PushTarget {
                    command: vec!["x".into()],
                    ..ok.clone()
                },
                "not both",
            ),
            (
                PushTarget {
                    command: vec![String::new()],
                    ..fifo.clone()
                },
                "program",
            ),
            (window(0, 0, &ok), "batch_size must be between 1 and 10000"),
            (window(11, 0, &ok), "at least 1"),
            (window(10, 301, &ok), "between 0 and 300"),
            (window(11, 1, &fifo), "for FIFO queues"),
            (window(10, 1, &fifo), "not supported for FIFO"),
            (
                PushTarget {
                    max_concurrency: 0,
                    ..ok.clone()
                },
                "max_concurrency",
            ),
            (
                PushTarget {
                    filter: Some(json!({ "body": "x" })),
                    ..ok.clone()
                },
                "filter",
            ),
            (PushTarget::http("q", "https://h"), "https"),
        ];
        for (t, want) in cases {
            let e = t.validate().unwrap_err();
            assert!(e.contains(want), "{t:?}: {e}");
        }
    }

    #[test]
    fn targets_read_from_json_with_defaults() {
        let t: PushTarget =
            serde_json::from_str(r#"{"queue":"q","url":"http://h:1"}"#).expect("parses");
        assert_eq!(t.batch_size, 10);
        assert_eq!(t.max_concurrency, 2);
        assert!(serde_json::from_str::<PushTarget>(r#"{"queue":"q","bogus":1}"#).is_err());
    }
}
