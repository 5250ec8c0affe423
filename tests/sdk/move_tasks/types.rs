//! Move tasks between queue types: a standard dead-letter queue's messages cannot go to a FIFO
//! queue (they have no group to be served in); FIFO messages moved to a standard queue lose
//! their FIFO-only attributes.

use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};

use super::{quick_pair, start_task, wait_status};
use crate::fifo::{fifo_queue, send_fifo};
use crate::harness::{DeadLetter, TestServer, arn, bodies, expect_error, sys};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_to_fifo_is_refused() {
    let t = TestServer::start().await;
    let DeadLetter { dlq_arn, .. } = quick_pair(&t, "std-src", "std-dlq").await;
    let fifo = fifo_queue(&t, "dest.fifo", &[]).await;
    let fifo_arn = arn(&t, &fifo).await;
    let res = t
        .client
        .start_message_move_task()
        .source_arn(&dlq_arn)
        .destination_arn(&fifo_arn)
        .send()
        .await;
    expect_error("standard to FIFO", res, 400, "InvalidParameterValue", None);
    t.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_to_standard_drops_fifo_only_attributes() {
    let t = TestServer::start().await;
    let fifo = [
        (QueueAttributeName::FifoQueue, "true"),
        (QueueAttributeName::ContentBasedDeduplication, "true"),
    ];
    let quick = [
        fifo[0].clone(),
        fifo[1].clone(),
        (QueueAttributeName::VisibilityTimeout, "0"),
    ];
    let DeadLetter { src, dlq, dlq_arn } = t
        .create_dead_letter_pair("src.fifo", &quick, "dlq.fifo", &fifo, 1)
        .await;
    send_fifo(&t, &src, "poison", "g", None).await;
    for _ in 0..4 {
        t.receive(&src, 10).await;
    }
    assert_eq!(t.counts(&dlq).await.0, 1, "poisoned into the FIFO DLQ");
    let plain = t.create_queue("plain", &[]).await;
    let plain_arn = arn(&t, &plain).await;
    start_task(&t, &dlq_arn, Some(&plain_arn), None).await;
    wait_status(&t, &dlq_arn, "COMPLETED").await;
    let got = t.receive(&plain, 10).await;
    assert_eq!(bodies(&got), ["poison"]);
    let m = &got[0];
    assert_eq!(sys(m, &MessageSystemAttributeName::SequenceNumber), None);
    assert_eq!(
        sys(m, &MessageSystemAttributeName::MessageDeduplicationId),
        None
    );
    t.shutdown().await;
}
