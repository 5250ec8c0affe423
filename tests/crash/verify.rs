//! The checks after a restart: every invariant of the crate doc, read through
//! GetQueueAttributes and the peek endpoint.

use std::collections::{BTreeMap, HashMap, HashSet};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;

use crate::ledger::{SharedLedger, parse_fifo_body, with};
use crate::process::{Proc, peek};
use crate::{FIFO, STD};

/// Queue URLs as the current server names them.
#[derive(Debug, Clone)]
pub struct Urls {
    pub std: String,
    pub fifo: String,
}

pub async fn urls(c: &Client) -> Urls {
    let url = |name: &'static str| async move {
        c.get_queue_url()
            .queue_name(name)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GetQueueUrl {name} after restart: {e:?}"))
            .queue_url
            .expect("QueueUrl")
    };
    Urls {
        std: url(STD).await,
        fifo: url(FIFO).await,
    }
}

/// All attributes except the three message counters.
pub async fn stable_attributes(c: &Client, url: &str) -> BTreeMap<String, String> {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GetQueueAttributes {url}: {e:?}"));
    out.attributes()
        .expect("attributes")
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
        .filter(|(k, _)| !k.starts_with("ApproximateNumberOfMessages"))
        .collect()
}

/// (visible, in flight, delayed) as GetQueueAttributes counts them.
pub async fn counters(c: &Client, url: &str) -> (usize, usize, usize) {
    let out = c
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GetQueueAttributes {url}: {e:?}"));
    let a = out.attributes().expect("attributes");
    let n = |k: QueueAttributeName| -> usize {
        a.get(&k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} missing or not a number in {a:?}"))
    };
    (
        n(QueueAttributeName::ApproximateNumberOfMessages),
        n(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        n(QueueAttributeName::ApproximateNumberOfMessagesDelayed),
    )
}

/// What one check saw, for the can-it-fail guards and the log.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    pub present: usize,
    pub in_flight: usize,
    pub acked_sends: usize,
    pub acked_deletes: usize,
}

/// Checks every invariant of the crate doc (`main.rs`) against the restarted server `p`.
pub async fn verify(
    p: &Proc,
    c: &Client,
    urls: &Urls,
    baseline: &HashMap<&'static str, BTreeMap<String, String>>,
    ledger: &SharedLedger,
    when: &str,
) -> [Seen; 2] {
    let mut problems = Vec::new();
    let mut seen = [Seen::default(); 2];
    with(ledger, |l| {
        for u in &l.unexpected {
            problems.push(format!("during the load: {u}"));
        }
    });
    for (k, (name, url, fifo)) in [(STD, &urls.std, false), (FIFO, &urls.fifo, true)]
        .into_iter()
        .enumerate()
    {
        let attrs = stable_attributes(c, url).await;
        if attrs != baseline[name] {
            problems.push(format!(
                "{name}: attributes changed:\n  before {:?}\n  after  {attrs:?}",
                baseline[name]
            ));
        }
        let messages = peek(p.port, url).await;
        let (visible, in_flight, delayed) = counters(c, url).await;
        if visible + in_flight + delayed != messages.len() {
            problems.push(format!(
                "{name}: counters say {visible}+{in_flight}+{delayed} messages, the peek lists {}",
                messages.len()
            ));
        }
        let prefix = if fifo { "fifo/" } else { "std/" };
        let l = ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut bodies = HashSet::new();
        let mut ids = HashSet::new();
        let mut last_in_group: HashMap<String, (usize, u128)> = HashMap::new();
        for m in &messages {
            if !bodies.insert(m.body.as_str()) || !ids.insert(m.id.as_str()) {
                problems.push(format!("{name}: {:?} ({}) is present twice", m.body, m.id));
            }
            match l.sends.get(&m.body) {
                None => problems.push(format!(
                    "{name}: {:?} is present but was never sent",
                    m.body
                )),
                Some(Some(a)) if a.message_id != m.id => problems.push(format!(
                    "{name}: {:?} is present as {}, but its send was acknowledged as {}",
                    m.body, m.id, a.message_id
                )),
                Some(Some(a))
                    if fifo && a.sequence_number.as_deref() != m.attr("SequenceNumber") =>
                {
                    problems.push(format!(
                        "{name}: {:?} has SequenceNumber {:?}, its send was acknowledged with {:?}",
                        m.body,
                        m.attr("SequenceNumber"),
                        a.sequence_number
                    ));
                }
                _ => {}
            }
            if l.deletes_acked.contains(&m.id) {
                problems.push(format!(
                    "{name}: {:?} ({}) came back after its delete was acknowledged",
                    m.body, m.id
                ));
            }
            if m.attr("ApproximateReceiveCount").is_some_and(|n| n != "0") {
                seen[k].in_flight += 1;
            }
            if fifo {
                let Some((group, index)) = parse_fifo_body(&m.body) else {
                    problems.push(format!("{name}: unexpected body {:?}", m.body));
                    continue;
                };
                if m.attr("MessageGroupId") != Some(group) {
                    problems.push(format!(
                        "{name}: {:?} has MessageGroupId {:?}",
                        m.body,
                        m.attr("MessageGroupId")
                    ));
                }
                let Some(seq) = m
                    .attr("SequenceNumber")
                    .and_then(|s| s.parse::<u128>().ok())
                else {
                    problems.push(format!("{name}: {:?} has no SequenceNumber", m.body));
                    continue;
                };
                if let Some((prev_index, prev_seq)) =
                    last_in_group.insert(group.to_owned(), (index, seq))
                    && (prev_index >= index || prev_seq >= seq)
                {
                    problems.push(format!(
                        "{name}: group {group} out of order: index {prev_index} (seq {prev_seq}) is listed before index {index} (seq {seq})"
                    ));
                }
            }
        }
        seen[k].present = messages.len();
        for (body, acked) in l.sends.range(prefix.to_owned()..) {
            if !body.starts_with(prefix) {
                break;
            }
            let Some(a) = acked else { continue };
            seen[k].acked_sends += 1;
            if !bodies.contains(body.as_str()) && !l.deletes_tried.contains(&a.message_id) {
                problems.push(format!(
                    "{name}: acknowledged send {body:?} ({}) is lost (no delete of it was tried)",
                    a.message_id
                ));
            }
        }
        seen[k].acked_deletes = l
            .sends
            .range(prefix.to_owned()..)
            .take_while(|(body, _)| body.starts_with(prefix))
            .filter_map(|(_, acked)| acked.as_ref())
            .filter(|a| l.deletes_acked.contains(&a.message_id))
            .count();
    }
    assert!(
        problems.is_empty(),
        "{when}: {} problem(s):\n{}",
        problems.len(),
        problems
            .iter()
            .take(30)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    );
    seen
}
