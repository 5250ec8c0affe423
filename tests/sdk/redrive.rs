//! Dead-letter queues through aws-sdk-sqs (GitHub issue #5): RedrivePolicy and
//! RedriveAllowPolicy validation, poison messages moving to the DLQ on receive, and
//! ListDeadLetterSourceQueues. Expected texts come from docs/protocol.md (§5.5, §6.1, §6.10).

use std::collections::{HashMap, HashSet};

use aws_sdk_sqs::types::{Message, MessageSystemAttributeName, QueueAttributeName};

use crate::fifo::fifo_queue;
use crate::harness::{
    DeadLetter, START_MS, TestServer, all_attributes, arn, binary_attr, expect_error,
    md5_of_attributes, only, policy, receive_count, receive_full, set_attr, set_redrive,
    string_attr, sys,
};

/// RedrivePolicy validation and normalisation (§5.5, §6.1, §6.10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_policy_validation() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t.create_queue("src", &[]).await;

    let p = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}"}}"#);
    expect_error(
        "RedrivePolicy without maxReceiveCount",
        set_attr(&t, &src, QueueAttributeName::RedrivePolicy, &p).await,
        400,
        "InvalidParameterValue",
        Some(&format!(
            "Value {p} for parameter RedrivePolicy is invalid. Reason: Redrive policy does not contain mandatory attribute: maxReceiveCount."
        )),
    );
    for n in [0, 1001] {
        expect_error(
            &format!("maxReceiveCount {n}"),
            set_redrive(&t, &src, &dlq_arn, n).await,
            400,
            "InvalidParameterValue",
            None,
        );
    }
    let missing_arn = format!(
        "{}nope",
        dlq_arn.strip_suffix("dlq").expect("ARN ends in dlq")
    );
    expect_error(
        "RedrivePolicy naming a queue that does not exist",
        set_redrive(&t, &src, &missing_arn, 3).await,
        400,
        "InvalidParameterValue",
        None,
    );
    assert!(
        !all_attributes(&t, &src)
            .await
            .contains_key(&QueueAttributeName::RedrivePolicy),
        "failed attempts set nothing"
    );

    // A FIFO source cannot use a standard dead-letter queue.
    let r = t
        .try_create_queue(
            "src.fifo",
            &[
                (QueueAttributeName::FifoQueue, "true"),
                (QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 3)),
            ],
        )
        .await;
    expect_error(
        "FIFO source with a standard DLQ (CreateQueue)",
        r,
        400,
        "InvalidParameterValue",
        None,
    );
    let fifo_src = fifo_queue(&t, "src2.fifo", &[]).await;
    expect_error(
        "FIFO source with a standard DLQ (SetQueueAttributes)",
        set_redrive(&t, &fifo_src, &dlq_arn, 3).await,
        400,
        "InvalidParameterValue",
        None,
    );

    // Nor can a standard source use a FIFO dead-letter queue.
    let fifo_dlq = fifo_queue(&t, "dlq.fifo", &[]).await;
    let fifo_dlq_arn = arn(&t, &fifo_dlq).await;
    expect_error(
        "standard source with a FIFO DLQ",
        set_redrive(&t, &src, &fifo_dlq_arn, 3).await,
        400,
        "InvalidParameterValue",
        None,
    );
    set_redrive(&t, &fifo_src, &fifo_dlq_arn, 3)
        .await
        .expect("FIFO source with a FIFO DLQ");

    // maxReceiveCount as a string is accepted; the policy reads back normalised.
    set_attr(
        &t,
        &src,
        QueueAttributeName::RedrivePolicy,
        &format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"3"}}"#),
    )
    .await
    .expect("maxReceiveCount \"3\" is accepted");
    assert_eq!(
        t.queue_attr(&src, QueueAttributeName::RedrivePolicy).await,
        policy(&dlq_arn, 3)
    );
    set_attr(
        &t,
        &src,
        QueueAttributeName::RedrivePolicy,
        &format!("{{ \"maxReceiveCount\": 1000,\n \"deadLetterTargetArn\": \"{dlq_arn}\" }}"),
    )
    .await
    .expect("maxReceiveCount 1000 with other key order and whitespace");
    assert_eq!(
        t.queue_attr(&src, QueueAttributeName::RedrivePolicy).await,
        policy(&dlq_arn, 1000)
    );

    // "" removes the policy.
    set_attr(&t, &src, QueueAttributeName::RedrivePolicy, "")
        .await
        .expect("RedrivePolicy \"\"");
    assert!(
        !all_attributes(&t, &src)
            .await
            .contains_key(&QueueAttributeName::RedrivePolicy),
        "the empty string removes RedrivePolicy"
    );
    let sources = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues");
    assert!(sources.queue_urls().is_empty(), "{sources:?}");

    // CreateQueue with a policy, minimum count.
    let created = t.create_source_queue("src3", &[], &dlq_arn, 1).await;
    assert_eq!(
        t.queue_attr(&created, QueueAttributeName::RedrivePolicy)
            .await,
        policy(&dlq_arn, 1)
    );
    t.shutdown().await;
}

/// A standard queue's poison message is returned maxReceiveCount times, then moves to the DLQ
/// on the next receive, keeping id, body, attributes, timestamps and receive count (§6.10,
/// G-26).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_poison_message_moves_after_max_receive_count() {
    let t = TestServer::start().await;
    let DeadLetter { src, dlq, .. } = t
        .create_dead_letter_pair(
            "src",
            &[(QueueAttributeName::VisibilityTimeout, "0")],
            "dlq",
            &[],
            3,
        )
        .await;
    let src_arn = arn(&t, &src).await;
    let attrs = HashMap::from([
        ("MyAttribute".to_owned(), string_attr("String", "foobar")),
        ("bin".to_owned(), binary_attr("Binary", &[9, 8, 7])),
    ]);
    let sent = t
        .client
        .send_message()
        .queue_url(&src)
        .message_body("poison")
        .set_message_attributes(Some(attrs.clone()))
        .send()
        .await
        .expect("SendMessage");
    let id = sent.message_id().expect("MessageId").to_owned();
    let attr_md5 = sent
        .md5_of_message_attributes()
        .expect("MD5OfMessageAttributes")
        .to_owned();
    assert_eq!(attr_md5, md5_of_attributes(&attrs));

    t.advance_secs(5);
    let first_receive_ms = START_MS + 5000;
    for n in 1..=3 {
        let m = only(t.receive(&src, 10).await, &format!("receive {n}"));
        assert_eq!(m.message_id(), Some(id.as_str()));
        assert_eq!(receive_count(&m), n.to_string());
        t.advance_secs(1);
    }
    assert!(
        t.receive(&src, 10).await.is_empty(),
        "receive 4 moves the message instead of returning it"
    );
    assert_eq!(t.counts(&src).await, (0, 0, 0));
    assert_eq!(t.counts(&dlq).await, (1, 0, 0));

    t.advance_secs(10);
    let m = only(receive_full(&t, &dlq, 10).await, "the message in the DLQ");
    assert_eq!(m.message_id(), Some(id.as_str()));
    assert_eq!(m.body(), Some("poison"));
    assert_eq!(m.md5_of_message_attributes(), Some(attr_md5.as_str()));
    assert_eq!(
        md5_of_attributes(m.message_attributes().expect("MessageAttributes")),
        attr_md5
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::SentTimestamp),
        Some(START_MS.to_string().as_str()),
        "SentTimestamp is kept"
    );
    assert_eq!(
        sys(
            &m,
            &MessageSystemAttributeName::ApproximateFirstReceiveTimestamp
        ),
        Some(first_receive_ms.to_string().as_str()),
        "ApproximateFirstReceiveTimestamp is kept"
    );
    assert_eq!(
        receive_count(&m),
        "4",
        "the receive count is not reset: maxReceiveCount + 1"
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(src_arn.as_str())
    );
    t.shutdown().await;
}

/// A FIFO poison message moves to the FIFO DLQ after maxReceiveCount receives, and its group
/// in the source is free again afterwards (§6.10).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifo_poison_message_moves_and_frees_its_group() {
    let t = TestServer::start().await;
    let fifo = (QueueAttributeName::FifoQueue, "true");
    let src_attrs = [
        fifo.clone(),
        (QueueAttributeName::ContentBasedDeduplication, "true"),
        (QueueAttributeName::VisibilityTimeout, "30"),
    ];
    let DeadLetter { src, dlq, .. } = t
        .create_dead_letter_pair("src.fifo", &src_attrs, "dlq.fifo", &[fifo], 3)
        .await;
    let src_arn = arn(&t, &src).await;
    let mut ids = HashMap::new();
    for (body, group) in [("poison", "g"), ("next", "g"), ("other", "h")] {
        let out = t
            .client
            .send_message()
            .queue_url(&src)
            .message_body(body)
            .message_group_id(group)
            .message_attributes("MyAttribute", string_attr("String", "foobar"))
            .send()
            .await
            .expect("SendMessage");
        ids.insert(body, out.message_id().expect("MessageId").to_owned());
    }
    for n in 1..=3 {
        // Group g goes to the back of the order each time its head's visibility runs out
        // (§6.9), so group h's message may come first; it is not a poison message.
        let m = loop {
            let m = only(t.receive(&src, 1).await, &format!("receive {n}"));
            if m.body() != Some("other") {
                break m;
            }
        };
        assert_eq!(m.body(), Some("poison"), "receive {n}");
        assert_eq!(receive_count(&m), n.to_string());
        t.advance_secs(31);
    }
    // The next receives move the poison message and hand out the rest; group g is free again.
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.extend(t.receive(&src, 10).await);
    }
    let bodies: Vec<&str> = seen.iter().filter_map(Message::body).collect();
    assert!(
        !bodies.contains(&"poison"),
        "poison is not returned a 4th time: {bodies:?}"
    );
    assert!(
        bodies.contains(&"next"),
        "the next message of group g is receivable after the move: {bodies:?}"
    );
    assert!(bodies.contains(&"other"), "{bodies:?}");

    let m = only(receive_full(&t, &dlq, 10).await, "the message in the DLQ");
    assert_eq!(m.message_id(), Some(ids["poison"].as_str()));
    assert_eq!(m.body(), Some("poison"));
    assert_eq!(receive_count(&m), "4");
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::DeadLetterQueueSourceArn),
        Some(src_arn.as_str())
    );
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::MessageGroupId),
        Some("g")
    );
    // In a FIFO dead-letter queue the deduplication id (here content-based, a SHA-256) is
    // replaced with the message id (§6.10).
    assert_eq!(
        sys(&m, &MessageSystemAttributeName::MessageDeduplicationId),
        Some(ids["poison"].as_str())
    );
    assert_eq!(
        m.md5_of_message_attributes(),
        Some("adb59cd4678ea5a855436b949cd07ab6"),
        "§6.4 vector for MyAttribute=foobar"
    );
    t.shutdown().await;
}

/// RedriveAllowPolicy on the DLQ decides which sources may name it (§6.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_allow_policy() {
    let t = TestServer::start().await;
    let dlq = t
        .create_queue(
            "dlq",
            &[(
                QueueAttributeName::RedriveAllowPolicy,
                r#"{"redrivePermission":"denyAll"}"#,
            )],
        )
        .await;
    let dlq_arn = arn(&t, &dlq).await;
    let src = t.create_queue("src", &[]).await;
    let src_arn = arn(&t, &src).await;
    let other = t.create_queue("other", &[]).await;

    expect_error(
        "denyAll",
        set_redrive(&t, &src, &dlq_arn, 3).await,
        400,
        "InvalidParameterValue",
        None,
    );
    let r = t
        .try_create_queue(
            "created",
            &[(QueueAttributeName::RedrivePolicy, &policy(&dlq_arn, 3))],
        )
        .await;
    expect_error(
        "denyAll (CreateQueue)",
        r,
        400,
        "InvalidParameterValue",
        None,
    );

    let by_queue = format!(r#"{{"redrivePermission":"byQueue","sourceQueueArns":["{src_arn}"]}}"#);
    set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &by_queue)
        .await
        .expect("byQueue");
    let stored: serde_json::Value = serde_json::from_str(
        &t.queue_attr(&dlq, QueueAttributeName::RedriveAllowPolicy)
            .await,
    )
    .expect("RedriveAllowPolicy is JSON");
    assert_eq!(
        stored,
        serde_json::from_str::<serde_json::Value>(&by_queue).expect("JSON")
    );
    set_redrive(&t, &src, &dlq_arn, 3)
        .await
        .expect("a listed source may use the DLQ");
    expect_error(
        "byQueue, source not listed",
        set_redrive(&t, &other, &dlq_arn, 3).await,
        400,
        "InvalidParameterValue",
        None,
    );

    set_attr(
        &t,
        &dlq,
        QueueAttributeName::RedriveAllowPolicy,
        r#"{"redrivePermission":"allowAll"}"#,
    )
    .await
    .expect("allowAll");
    set_redrive(&t, &other, &dlq_arn, 3)
        .await
        .expect("allowAll lets any source use the DLQ");

    expect_error(
        "unknown redrivePermission",
        set_attr(
            &t,
            &dlq,
            QueueAttributeName::RedriveAllowPolicy,
            r#"{"redrivePermission":"sometimes"}"#,
        )
        .await,
        400,
        "InvalidParameterValue",
        None,
    );
    let arns = |n: usize| -> String {
        let list: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    "\"{}{i}\"",
                    src_arn.strip_suffix("src").expect("ARN ends in src")
                )
            })
            .collect();
        format!(
            r#"{{"redrivePermission":"byQueue","sourceQueueArns":[{}]}}"#,
            list.join(",")
        )
    };
    expect_error(
        "byQueue with 11 ARNs",
        set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &arns(11)).await,
        400,
        "InvalidParameterValue",
        None,
    );
    set_attr(&t, &dlq, QueueAttributeName::RedriveAllowPolicy, &arns(10))
        .await
        .expect("byQueue with 10 ARNs");
    t.shutdown().await;
}

/// ListDeadLetterSourceQueues returns the sources' URLs, with MaxResults/NextToken paging
/// (§6.10, §6.12, G-9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dead_letter_source_queues() {
    let t = TestServer::start().await;
    let dlq = t.create_queue("dlq", &[]).await;
    let dlq_arn = arn(&t, &dlq).await;
    let dlq2 = t.create_queue("dlq2", &[]).await;
    let dlq2_arn = arn(&t, &dlq2).await;
    let mut expected = HashSet::new();
    for i in 0..5 {
        let url = t
            .create_source_queue(&format!("source-{i}"), &[], &dlq_arn, 3)
            .await;
        expected.insert(url);
    }
    let elsewhere = t.create_source_queue("elsewhere", &[], &dlq2_arn, 3).await;
    let plain = t.create_queue("plain", &[]).await;

    let all = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues");
    let got: HashSet<String> = all.queue_urls().iter().cloned().collect();
    assert_eq!(got, expected);
    assert_eq!(all.queue_urls().len(), 5);
    assert!(all.next_token().is_none(), "no MaxResults, no NextToken");

    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..10 {
        let page = t
            .client
            .list_dead_letter_source_queues()
            .queue_url(&dlq)
            .max_results(2)
            .set_next_token(token.clone())
            .send()
            .await
            .expect("ListDeadLetterSourceQueues page");
        pages.push(page.queue_urls().to_vec());
        token = page.next_token().map(str::to_owned);
        if token.is_none() {
            break;
        }
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1], "pages of 2, the last without NextToken");
    let paged: Vec<String> = pages.concat();
    let paged_set: HashSet<String> = paged.iter().cloned().collect();
    assert_eq!(paged_set.len(), paged.len(), "no URL twice: {paged:?}");
    assert_eq!(paged_set, expected);

    let other = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&dlq2)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues dlq2");
    assert_eq!(other.queue_urls(), [elsewhere]);
    let none = t
        .client
        .list_dead_letter_source_queues()
        .queue_url(&plain)
        .send()
        .await
        .expect("ListDeadLetterSourceQueues of a queue nobody uses");
    assert!(none.queue_urls().is_empty());
    t.shutdown().await;
}
