//! A RedrivePolicy whose deadLetterTargetArn is not an ARN is refused before any queue is
//! looked up (docs/protocol.md §5.5, §6.10), on CreateQueue and SetQueueAttributes alike.

use aws_sdk_sqs::types::QueueAttributeName;

use crate::fifo::fifo_queue;
use crate::harness::{
    TestServer, all_attributes, arn, expect_error, policy, set_attr, set_redrive,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letter_target_must_be_an_arn() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let src = t.create_queue("src", &[]).await;
    let refused = |p: &str| {
        format!(
            "Value {p} for parameter RedrivePolicy is invalid. Reason: Invalid value for deadLetterTargetArn."
        )
    };
    // The name and the URL of an existing queue are not ARNs; nor is a number.
    let targets = [r#""dlq""#.to_owned(), format!(r#""{dlq}""#), "5".to_owned()];
    for target in &targets {
        let p = format!(r#"{{"deadLetterTargetArn":{target},"maxReceiveCount":3}}"#);
        expect_error(
            &format!("SetQueueAttributes with deadLetterTargetArn {target}"),
            set_attr(&t, &src, QueueAttributeName::RedrivePolicy, &p).await,
            400,
            "InvalidParameterValue",
            Some(&refused(&p)),
        );
        let r = t
            .try_create_queue("other", &[(QueueAttributeName::RedrivePolicy, &p)])
            .await;
        expect_error(
            &format!("CreateQueue with deadLetterTargetArn {target}"),
            r,
            400,
            "InvalidParameterValue",
            Some(&refused(&p)),
        );
    }
    // The same on a FIFO source, where a lookup would have found a type mismatch.
    let fifo = fifo_queue(&t, "src.fifo", &[]).await;
    let p = r#"{"deadLetterTargetArn":"dlq","maxReceiveCount":3}"#;
    expect_error(
        "FIFO source, target by name",
        set_attr(&t, &fifo, QueueAttributeName::RedrivePolicy, p).await,
        400,
        "InvalidParameterValue",
        Some(&refused(p)),
    );
    assert!(
        !all_attributes(&t, &src)
            .await
            .contains_key(&QueueAttributeName::RedrivePolicy),
        "nothing was set"
    );
    // A well-formed ARN naming no queue goes on to the lookup.
    let missing = policy("arn:aws:sqs:us-east-1:000000000000:nope", 3);
    let e = expect_error(
        "no such queue",
        set_attr(&t, &src, QueueAttributeName::RedrivePolicy, &missing).await,
        400,
        "InvalidParameterValue",
        None,
    );
    assert_ne!(e.meta().message(), Some(refused(&missing).as_str()));
    set_redrive(&t, &src, &arn(&t, &dlq).await, 3)
        .await
        .expect("the ARN is accepted");
    t.shutdown().await;
}
