//! AWS's policy quotas (docs/protocol.md §6.16): at most 20 statements, 50 principals per
//! statement and 7 actions per statement, and 8,192 bytes per policy, whether the policy grows
//! through AddPermission or is set whole with SetQueueAttributes. Without them a client could
//! grow a queue's policy until the request size limit, on every queue.

use aws_sdk_sqs::types::QueueAttributeName;

use crate::harness::{TestServer, expect_error};

async fn add(
    t: &TestServer,
    url: &str,
    label: &str,
    accounts: usize,
    actions: usize,
) -> Result<
    aws_sdk_sqs::operation::add_permission::AddPermissionOutput,
    aws_sdk_sqs::error::SdkError<aws_sdk_sqs::operation::add_permission::AddPermissionError>,
> {
    let all = [
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "ChangeMessageVisibility",
        "GetQueueAttributes",
        "GetQueueUrl",
        "ListDeadLetterSourceQueues",
        "PurgeQueue",
    ];
    t.client
        .add_permission()
        .queue_url(url)
        .label(label)
        .set_aws_account_ids(Some(
            (0..accounts)
                .map(|i| format!("{:012}", 100_000_000_000 + i))
                .collect(),
        ))
        .set_actions(Some(
            all[..actions].iter().map(|a| (*a).to_owned()).collect(),
        ))
        .send()
        .await
}

#[tokio::test]
async fn add_permission_keeps_to_the_policy_quotas() {
    let t = TestServer::start().await;
    let url = t.create_queue("guarded", &[]).await;
    expect_error(
        "eight actions",
        add(&t, &url, "a", 1, 8).await,
        403,
        "OverLimit",
        Some("8 Actions were found, maximum allowed is 7."),
    );
    expect_error(
        "51 principals",
        add(&t, &url, "p", 51, 1).await,
        403,
        "OverLimit",
        Some("51 Principals were found, maximum allowed is 50."),
    );
    for i in 0..20 {
        add(&t, &url, &format!("s{i}"), 1, 1)
            .await
            .unwrap_or_else(|e| panic!("statement {i}: {e:?}"));
    }
    expect_error(
        "a 21st statement",
        add(&t, &url, "s20", 1, 1).await,
        403,
        "OverLimit",
        Some("21 Statements were found, maximum allowed is 20."),
    );

    // Fewer, larger statements reach the byte quota first; the policy is left as it was.
    let big = t.create_queue("big", &[]).await;
    let mut added = 0;
    let refused = loop {
        let r = add(&t, &big, &format!("b{added}"), 50, 7).await;
        if r.is_err() {
            break r;
        }
        added += 1;
    };
    assert!(
        (1..20).contains(&added),
        "{added} statements of 50 principals"
    );
    let e = expect_error("the byte quota", refused, 403, "OverLimit", None);
    assert!(
        e.meta()
            .message()
            .is_some_and(|m| m.ends_with("bytes, maximum allowed is 8192.")),
        "{e:?}"
    );
    let policy = t
        .client
        .get_queue_attributes()
        .queue_url(&big)
        .attribute_names(QueueAttributeName::Policy)
        .send()
        .await
        .expect("GetQueueAttributes")
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::Policy).cloned())
        .expect("a policy");
    assert!(policy.len() <= 8192);
    assert_eq!(policy.matches("\"Sid\"").count(), added);
    t.shutdown().await;
}

#[tokio::test]
async fn a_policy_set_whole_is_at_most_8192_bytes() {
    let t = TestServer::start().await;
    let url = t.create_queue("whole", &[]).await;
    let policy = |n: usize| format!(r#"{{"Version":"2012-10-17","Id":"{}"}}"#, "x".repeat(n));
    let fits = policy(8192 - policy(0).len());
    assert_eq!(fits.len(), 8192);
    crate::harness::set_attr(&t, &url, QueueAttributeName::Policy, &fits)
        .await
        .expect("8,192 bytes fit");
    let over = policy(8193 - policy(0).len());
    expect_error(
        "8,193 bytes",
        crate::harness::set_attr(&t, &url, QueueAttributeName::Policy, &over).await,
        400,
        "InvalidAttributeValue",
        Some(
            "Invalid value for the parameter Policy. Reason: The policy is 8193 bytes, maximum allowed is 8192.",
        ),
    );
    let res = t
        .try_create_queue("born-big", &[(QueueAttributeName::Policy, &over)])
        .await;
    expect_error("at creation", res, 400, "InvalidAttributeValue", None);
    t.shutdown().await;
}
