//! Kill -9 under load: three SIGKILLs at different points, then a SIGTERM, each followed by a
//! restart on the same directory and the checks of [`verify`](crate::verify).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::QueueAttributeName;

use crate::ledger::{SharedLedger, with};
use crate::load::Load;
use crate::process::{Proc, client};
use crate::verify::{Seen, stable_attributes, urls, verify};
use crate::{FIFO, STD};

/// How long the load runs before each SIGKILL.
const KILL_AFTER: [Duration; 3] = [
    Duration::from_millis(200),
    Duration::from_millis(500),
    Duration::from_millis(1000),
];
/// How long the load runs before the SIGTERM.
const TERM_AFTER: Duration = Duration::from_millis(300);

/// The attributes both queues are created with; they must read back the same after restarts.
fn created_attributes(fifo: bool) -> Vec<(QueueAttributeName, &'static str)> {
    let mut a = vec![
        (QueueAttributeName::VisibilityTimeout, "45"),
        (QueueAttributeName::DelaySeconds, "0"),
        (QueueAttributeName::MessageRetentionPeriod, "86400"),
        (QueueAttributeName::ReceiveMessageWaitTimeSeconds, "0"),
    ];
    if fifo {
        a.extend([
            (QueueAttributeName::FifoQueue, "true"),
            (QueueAttributeName::ContentBasedDeduplication, "false"),
            (QueueAttributeName::DeduplicationScope, "messageGroup"),
            (QueueAttributeName::FifoThroughputLimit, "perMessageGroupId"),
        ]);
    }
    a
}

/// Three SIGKILLs at different points under load, then a SIGTERM under load; after each
/// restart on the same directory every invariant of the crate doc (`main.rs`) holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_work_survives_kill_9_under_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = Proc::start(dir.path()).await;
    let c = client(&server.endpoint());
    let mut baseline = HashMap::new();
    for (name, fifo) in [(STD, false), (FIFO, true)] {
        let mut req = c.create_queue().queue_name(name);
        for (k, v) in created_attributes(fifo) {
            req = req.attributes(k, v);
        }
        let url = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"))
            .queue_url
            .expect("QueueUrl");
        let attrs = stable_attributes(&c, &url).await;
        for (k, v) in created_attributes(fifo) {
            assert_eq!(
                attrs.get(k.as_str()).map(String::as_str),
                Some(v),
                "{name} {k} as created"
            );
        }
        baseline.insert(name, attrs);
    }
    let mut urls = urls(&c).await;
    let ledger: SharedLedger = Arc::default();
    let mut totals = [Seen::default(); 2];

    let phases = KILL_AFTER.len() + 1;
    for phase in 0..phases {
        let load = Load::start(&server.endpoint(), phase, &urls, &ledger);
        let how = if let Some(&after) = KILL_AFTER.get(phase) {
            tokio::time::sleep(after).await;
            let status = server.kill9().await;
            assert!(
                !status.success(),
                "SIGKILL should end the process: {status}"
            );
            format!("SIGKILL after {after:?} of load")
        } else {
            tokio::time::sleep(TERM_AFTER).await;
            server.stop().await;
            format!("SIGTERM after {TERM_AFTER:?} of load")
        };
        load.finish().await;
        server = Proc::start(dir.path()).await;
        let c = client(&server.endpoint());
        urls = self::urls(&c).await;
        let seen = verify(&server, &c, &urls, &baseline, &ledger, &how).await;
        println!(
            "phase {phase} ({how}): std {:?}, fifo {:?}",
            seen[0], seen[1]
        );
        for (now, before) in seen.iter().zip(&totals) {
            assert!(
                now.acked_sends > before.acked_sends,
                "{how}: no send was acknowledged on one queue, so this phase proved little: {seen:?}"
            );
        }
        totals = seen;
    }
    let expired = with(&ledger, |l| l.expired_handles);
    println!(
        "totals: std {:?}, fifo {:?}; expired FIFO handles: {expired}",
        totals[0], totals[1]
    );
    for (name, s) in [STD, FIFO].iter().zip(totals) {
        assert!(
            s.acked_deletes > 0 && s.in_flight > 0,
            "{name}: the load never deleted or never left a message in flight, so those checks proved nothing: {s:?}"
        );
    }
    server.stop().await;
}
