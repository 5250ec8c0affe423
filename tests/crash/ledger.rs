//! The crash tests' record of what the load did and what it was told: attempted and
//! acknowledged sends and deletes, and answers a correct server never gives.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};

/// One acknowledged send, as the reply described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acked {
    pub message_id: String,
    pub sequence_number: Option<String>,
}

/// Everything the load did, by outcome. Bodies are unique across the whole test.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Body → `None` while only attempted, `Some` once a send of it was acknowledged.
    pub sends: BTreeMap<String, Option<Acked>>,
    /// Message ids whose delete was attempted (acknowledged or not).
    pub deletes_tried: HashSet<String>,
    /// Message ids whose delete was acknowledged.
    pub deletes_acked: HashSet<String>,
    /// Answers that a correct server never gives here (service errors, contradictions).
    pub unexpected: Vec<String>,
    /// Deletes refused because the FIFO receipt handle had expired (correct behaviour).
    pub expired_handles: usize,
}

impl Ledger {
    pub fn tried_send(&mut self, body: &str) {
        self.sends.entry(body.to_owned()).or_default();
    }

    pub fn acked_send(&mut self, body: &str, acked: Acked) {
        let slot = self.sends.entry(body.to_owned()).or_default();
        match slot {
            Some(prev) if *prev != acked => self.unexpected.push(format!(
                "send of {body:?} acknowledged twice with different results: {prev:?} and {acked:?}"
            )),
            _ => *slot = Some(acked),
        }
    }

    pub fn unexpected(&mut self, what: String) {
        self.unexpected.push(what);
    }
}

pub type SharedLedger = Arc<Mutex<Ledger>>;

pub fn with<R>(ledger: &SharedLedger, f: impl FnOnce(&mut Ledger) -> R) -> R {
    f(&mut ledger
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// How a request failed.
pub enum Failure {
    /// No answer (connection refused, reset or closed by the kill): outcome unknown.
    NoAnswer,
    /// The server answered with an error: code and message.
    Refused(String, String),
}

pub fn failure<E: ProvideErrorMetadata + std::fmt::Debug>(
    e: &SdkError<E, HttpResponse>,
) -> Failure {
    match e {
        SdkError::ServiceError(se) => Failure::Refused(
            se.err().code().unwrap_or("?").to_owned(),
            se.err().message().unwrap_or("").to_owned(),
        ),
        SdkError::ConstructionFailure(_) => {
            Failure::Refused("ConstructionFailure".into(), format!("{e:?}"))
        }
        _ => Failure::NoAnswer,
    }
}

/// Body of FIFO message `index` of `group`: the group and the send order, readable back.
pub fn fifo_body(group: &str, index: usize) -> String {
    format!("fifo/{group}/{index:06}")
}

/// (group, index) of a FIFO body.
pub fn parse_fifo_body(body: &str) -> Option<(&str, usize)> {
    let rest = body.strip_prefix("fifo/")?;
    let (group, index) = rest.split_once('/')?;
    Some((group, index.parse().ok()?))
}

pub fn record_batch_sends(
    l: &mut Ledger,
    bodies: &[String],
    out: &aws_sdk_sqs::operation::send_message_batch::SendMessageBatchOutput,
) {
    for ok in out.successful() {
        let Some(body) = ok
            .id()
            .strip_prefix('e')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| bodies.get(n))
        else {
            l.unexpected(format!("SendMessageBatch answered an unknown entry {ok:?}"));
            continue;
        };
        l.acked_send(
            body,
            Acked {
                message_id: ok.message_id().to_owned(),
                sequence_number: ok.sequence_number().map(str::to_owned),
            },
        );
    }
    for bad in out.failed() {
        l.unexpected(format!("SendMessageBatch entry failed: {bad:?}"));
    }
}

/// Whether a task should stop after `f`: yes when nobody answered (the server is gone); a
/// refusal is recorded as unexpected, since nothing this load sends should be refused.
pub fn stop_on(ledger: &SharedLedger, f: &Failure, action: &str, what: &str) -> bool {
    match f {
        Failure::NoAnswer => true,
        Failure::Refused(code, msg) => {
            with(ledger, |l| {
                l.unexpected(format!("{action} {what:?} refused: {code}: {msg}"));
            });
            false
        }
    }
}

/// Books a failed delete; true when the server is gone. An expired FIFO handle is correct
/// behaviour (the delete is simply not acknowledged).
pub fn delete_failed(ledger: &SharedLedger, fifo: bool, f: &Failure) -> bool {
    match f {
        Failure::Refused(_, msg) if fifo && msg.contains("expired") => {
            with(ledger, |l| l.expired_handles += 1);
            false
        }
        other => stop_on(ledger, other, "DeleteMessage", "handle"),
    }
}
