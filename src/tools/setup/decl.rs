//! Tools layer: the `--config` file as declared (a [`Setup`]): the queues to create at start,
//! the fault rules, the clock, the push targets and the SNS topics to start with.
//!
//! Each `[[queue]]` becomes CreateQueue / SetQueueAttributes / TagQueue commands run through the
//! engine, so a config file gets exactly the validation an SDK caller gets. Applying it twice
//! changes nothing. Errors name the queue and, through SQS's own message, the attribute.
//! `[[fault]]` tables add fault-injection rules and `[clock]` sets the clock at start.
//!
//! ```toml
//! [[queue]]
//! name = "orders-dlq"
//! redrive_allow = { permission = "byQueue", source_queues = ["orders"] }
//!
//! [[queue]]
//! name = "orders"
//! attributes = { VisibilityTimeout = "45", DelaySeconds = 2 }
//! dead_letter = { queue = "orders-dlq", max_receive_count = 3 }
//! tags = { team = "shop" }
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

/// What a `--config` file declares.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// Queues to create, in order.
    #[serde(default)]
    pub queue: Vec<QueueDecl>,
    /// Fault-injection rules to start with (`[[fault]]`, the fields of `POST /_localsqs/faults`).
    #[serde(default)]
    pub fault: Vec<crate::tools::faults::FaultRule>,
    /// The clock to start with (`[clock]`).
    #[serde(default)]
    pub clock: ClockDecl,
    /// SNS topics to create, with their subscriptions (`[[topic]]`, `tools/sns/setup.rs`).
    #[serde(default)]
    pub topic: Vec<crate::tools::sns::setup::TopicDecl>,
    /// What the file says about the whole server rather than its state: ElasticMQ's
    /// `aws { region, accountId }` and its region-blind lookups. Never read from localsqs's
    /// TOML, whose server settings are flags.
    #[serde(skip)]
    pub server: ServerDefaults,
}

/// Server settings a config file implies, applied at start where the caller did not set them
/// (see `ServerOptions::pinned`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerDefaults {
    /// The account queues are created in and requests act in by default.
    pub account_id: Option<String>,
    /// The region queues are created in and requests act in by default.
    pub region: Option<String>,
    /// How regions scope queues.
    pub regions: Option<crate::engine::Regions>,
    /// Where these came from, for the log (`elasticmq.conf's aws block`).
    pub source: &'static str,
}

/// `[clock] freeze = true, advance_seconds = 3600`: start frozen and/or ahead of real time.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockDecl {
    /// Start with time standing still.
    #[serde(default)]
    pub freeze: bool,
    /// Start this many seconds ahead of real time.
    #[serde(default)]
    pub advance_seconds: u64,
}

/// One declared queue.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDecl {
    /// Queue name (`.fifo` for FIFO queues; `FifoQueue = true` is implied by the suffix).
    pub name: String,
    /// Account (12 digits); the server's `--account-id` when absent.
    pub account: Option<String>,
    /// Region; the server's `--region` when absent.
    pub region: Option<String>,
    /// SQS attributes by their API names; strings, numbers and booleans are accepted.
    #[serde(default)]
    pub attributes: BTreeMap<String, toml::Value>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Shorthand for RedrivePolicy, naming the dead-letter queue by name.
    pub dead_letter: Option<DeadLetter>,
    /// Shorthand for RedriveAllowPolicy, naming source queues by name.
    pub redrive_allow: Option<RedriveAllow>,
    /// Push targets reading this queue (`[[queue.push]]`, see [`crate::tools::push::PushTarget`]).
    #[serde(default)]
    pub push: Vec<crate::tools::push::PushTarget>,
}

/// `dead_letter = { queue = "…", max_receive_count = N }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadLetter {
    /// Dead-letter queue name.
    pub queue: String,
    /// maxReceiveCount, 1–1000.
    pub max_receive_count: u32,
}

/// `redrive_allow = { permission = "allowAll" | "denyAll" | "byQueue", source_queues = [...] }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedriveAllow {
    /// allowAll, denyAll or byQueue.
    pub permission: String,
    /// Source queue names, for byQueue.
    #[serde(default)]
    pub source_queues: Vec<String>,
}
/// Parses config text.
pub fn parse(text: &str) -> Result<Setup, String> {
    toml::from_str(text).map_err(|e| e.to_string())
}
pub(super) fn value_string(v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        other => Err(format!("unsupported value {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let c = parse(
            r#"
            [[queue]]
            name = "orders-dlq"

            [[queue]]
            name = "orders"
            attributes = { VisibilityTimeout = "45", DelaySeconds = 2 }
            dead_letter = { queue = "orders-dlq", max_receive_count = 3 }
            tags = { team = "shop" }
            "#,
        )
        .unwrap();
        assert_eq!(c.queue.len(), 2);
        assert_eq!(
            value_string(&c.queue[1].attributes["DelaySeconds"]).unwrap(),
            "2"
        );
        assert_eq!(
            c.queue[1].dead_letter.as_ref().unwrap().max_receive_count,
            3
        );
        assert!(parse("[[queue]]\nname = \"a\"\nbogus = 1\n").is_err());
    }
}
