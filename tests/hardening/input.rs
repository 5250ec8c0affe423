//! Bad input gets AWS-shaped errors, and nothing the client did not send is stored.

use super::http::exchange;

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");

#[tokio::test]
async fn query_bytes_that_are_not_utf8_are_refused_not_replaced() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let created = exchange(addr, "POST", "/", &[FORM], "Action=CreateQueue&QueueName=q")
        .await
        .expect("answered");
    assert_eq!(created.status, 200);
    let url = format!("http://{addr}/000000000000/q");
    let sent = exchange(
        addr,
        "POST",
        "/",
        &[FORM],
        &format!("Action=SendMessage&QueueUrl={url}&MessageBody=ok%FF%FEnot"),
    )
    .await
    .expect("answered");
    assert_eq!(sent.status, 400, "{}", sent.body);
    assert!(
        sent.body.contains("<Code>InvalidMessageContents</Code>"),
        "{}",
        sent.body
    );
    let counts = server.engine().queue_counts();
    assert_eq!(counts.iter().map(|c| c.visible).sum::<usize>(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn a_signed_index_is_not_merged_with_a_plain_one() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let created = exchange(
        addr,
        "POST",
        "/",
        &[FORM],
        "Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=5\
         &Attribute.%2B1.Name=VisibilityTimeout&Attribute.%2B1.Value=99",
    )
    .await
    .expect("answered");
    assert_eq!(created.status, 200, "{}", created.body);
    let url = format!("http://{addr}/000000000000/q");
    let attrs = exchange(
        addr,
        "POST",
        "/",
        &[FORM],
        &format!("Action=GetQueueAttributes&QueueUrl={url}&AttributeName.1=All"),
    )
    .await
    .expect("answered");
    assert!(
        attrs
            .body
            .contains("<Name>VisibilityTimeout</Name><Value>30</Value>"),
        "{}",
        attrs.body
    );
    assert!(
        attrs
            .body
            .contains("<Name>DelaySeconds</Name><Value>5</Value>"),
        "{}",
        attrs.body
    );
    server.shutdown().await;
}

/// botocore escapes DEL (0x7F) as `\u007f`, six bytes on the wire for one in the message: a
/// valid 540 KB message must not be refused as too large because of its encoding.
#[tokio::test]
async fn size_limits_count_decoded_bytes_not_encoded_ones() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let json = |target: &str, body: String| {
        let target = format!("AmazonSQS.{target}");
        async move {
            exchange(
                addr,
                "POST",
                "/",
                &[
                    ("Content-Type", "application/x-amz-json-1.0"),
                    ("X-Amz-Target", target.as_str()),
                ],
                &body,
            )
            .await
            .expect("answered")
        }
    };
    let created = json("CreateQueue", r#"{"QueueName":"big"}"#.to_owned()).await;
    assert_eq!(created.status, 200, "{}", created.body);
    let url = format!("http://{addr}/000000000000/big");
    let escaped = "\\u007f".repeat(540 * 1024);
    let sent = json(
        "SendMessage",
        format!(r#"{{"QueueUrl":"{url}","MessageBody":"{escaped}"}}"#),
    )
    .await;
    assert_eq!(
        sent.status,
        200,
        "{}",
        &sent.body[..sent.body.len().min(300)]
    );
    let too_big = "a".repeat(1024 * 1024 + 1);
    let refused = json(
        "SendMessage",
        format!(r#"{{"QueueUrl":"{url}","MessageBody":"{too_big}"}}"#),
    )
    .await;
    assert_eq!(
        refused.status, 400,
        "SQS's own limit still applies to the decoded body"
    );
    server.shutdown().await;
}

/// Characters XML cannot carry were accepted in a DataType, an AWSTraceHeader and list values,
/// and then wedged every Query consumer of the queue; list values also escaped the size limit.
#[tokio::test]
async fn control_characters_and_oversized_list_values_are_refused() {
    let server = localsqs::Server::builder().start().await.expect("starts");
    let addr = server.local_addr();
    let json = |target: &'static str, body: String| async move {
        exchange(
            addr,
            "POST",
            "/",
            &[
                ("Content-Type", "application/x-amz-json-1.0"),
                ("X-Amz-Target", &format!("AmazonSQS.{target}")),
            ],
            &body,
        )
        .await
        .expect("answered")
    };
    let created = json(
        "CreateQueue",
        r#"{"QueueName":"small","Attributes":{"MaximumMessageSize":"1024"}}"#.to_owned(),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let url = format!("http://{addr}/000000000000/small");
    let cases = [
        (
            "a control character in a DataType",
            r#""MessageAttributes":{"a":{"DataType":"String.\u0001","StringValue":"x"}}"#.to_owned(),
        ),
        (
            "a control character in AWSTraceHeader",
            r#""MessageSystemAttributes":{"AWSTraceHeader":{"DataType":"String","StringValue":"Root=\u0001"}}"#
                .to_owned(),
        ),
        (
            "a control character in a list value",
            r#""MessageAttributes":{"a":{"DataType":"String","StringValue":"x","StringListValues":["\u0001"]}}"#
                .to_owned(),
        ),
        (
            "list values past MaximumMessageSize",
            format!(
                r#""MessageAttributes":{{"a":{{"DataType":"String","StringValue":"x","StringListValues":["{}"]}}}}"#,
                "y".repeat(100 * 1024)
            ),
        ),
    ];
    for (what, extra) in cases {
        let sent = json(
            "SendMessage",
            format!(r#"{{"QueueUrl":"{url}","MessageBody":"m",{extra}}}"#),
        )
        .await;
        assert_eq!(sent.status, 400, "{what}: {}", sent.body);
    }
    let counts = server.engine().queue_counts();
    assert_eq!(
        counts.iter().map(|c| c.visible).sum::<usize>(),
        0,
        "nothing was stored"
    );
    server.shutdown().await;
}
