//! Shared helpers for the in-process SDK tests: a server on `127.0.0.1:0` driven by a
//! [`ManualClock`], an `aws-sdk-sqs` client pointed at it, error inspection and the SQS MD5
//! algorithms (sqs-protocol.md §6.3, §6.4) computed independently of the server.

#![allow(dead_code)] // Each test crate uses a different subset of these helpers.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::types::{MessageAttributeValue, QueueAttributeName};
use localsqs::RunningServer;
use localsqs::engine::ManualClock;
use md5::{Digest, Md5};

/// The time every test clock starts at (2023-11-14T22:13:20Z).
pub const START_MS: u64 = 1_700_000_000_000;

/// Hang guard for anything that should finish promptly; never used to assert a duration.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// A running server, its clock and a client for it.
pub struct TestServer {
    pub server: RunningServer,
    pub clock: Arc<ManualClock>,
    pub client: Client,
}

impl TestServer {
    /// An ephemeral server with a fresh clock.
    pub async fn start() -> Self {
        Self::start_with(Arc::new(ManualClock::new(START_MS)), None).await
    }

    /// A server with the given clock, durable in `data_dir` when one is given.
    pub async fn start_with(clock: Arc<ManualClock>, data_dir: Option<&Path>) -> Self {
        let mut builder = localsqs::Server::builder().clock(clock.clone());
        if let Some(dir) = data_dir {
            builder = builder.data_dir(dir);
        }
        let server = builder.start().await.expect("server starts");
        let client = client(&server.endpoint());
        Self {
            server,
            clock,
            client,
        }
    }

    /// Moves the clock forward and wakes parked long polls so they see the new time.
    pub fn advance_secs(&self, secs: u64) {
        self.clock.advance_ms(secs * 1000);
        self.server.engine().wake_all();
    }

    /// Creates a queue with the given attributes and returns its URL.
    pub async fn create_queue(
        &self,
        name: &str,
        attributes: &[(QueueAttributeName, &str)],
    ) -> String {
        let mut req = self.client.create_queue().queue_name(name);
        for (k, v) in attributes {
            req = req.attributes(k.clone(), *v);
        }
        req.send()
            .await
            .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"))
            .queue_url()
            .expect("CreateQueue returns a QueueUrl")
            .to_owned()
    }

    /// Sends a plain message and returns its MessageId.
    pub async fn send(&self, url: &str, body: &str) -> String {
        self.client
            .send_message()
            .queue_url(url)
            .message_body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("SendMessage: {e:?}"))
            .message_id()
            .expect("SendMessage returns a MessageId")
            .to_owned()
    }

    /// One short-poll receive (WaitTimeSeconds=0) of up to `max` messages, with all system
    /// attributes.
    pub async fn receive(&self, url: &str, max: i32) -> Vec<aws_sdk_sqs::types::Message> {
        self.client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(max)
            .wait_time_seconds(0)
            .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap_or_else(|e| panic!("ReceiveMessage: {e:?}"))
            .messages
            .unwrap_or_default()
    }

    /// One queue attribute, as a string.
    pub async fn queue_attr(&self, url: &str, name: QueueAttributeName) -> String {
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(name.clone())
            .send()
            .await
            .unwrap_or_else(|e| panic!("GetQueueAttributes {name}: {e:?}"));
        out.attributes()
            .and_then(|a| a.get(&name))
            .unwrap_or_else(|| panic!("GetQueueAttributes did not return {name}: {out:?}"))
            .clone()
    }

    /// The three message counters: (visible, not visible, delayed).
    pub async fn counts(&self, url: &str) -> (u64, u64, u64) {
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GetQueueAttributes All: {e:?}"));
        let attrs = out.attributes().expect("All returns attributes");
        let n = |name: QueueAttributeName| -> u64 {
            attrs
                .get(&name)
                .unwrap_or_else(|| panic!("{name} missing from {attrs:?}"))
                .parse()
                .unwrap_or_else(|e| panic!("{name} is not a number: {e}"))
        };
        (
            n(QueueAttributeName::ApproximateNumberOfMessages),
            n(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
            n(QueueAttributeName::ApproximateNumberOfMessagesDelayed),
        )
    }

    /// Stops the server (hang-guarded).
    pub async fn shutdown(self) {
        drop(self.client);
        tokio::time::timeout(HANG_GUARD, self.server.shutdown())
            .await
            .expect("server shuts down");
    }
}

/// An SDK client for `endpoint`, configured without aws-config.
pub fn client(endpoint: &str) -> Client {
    let conf = aws_sdk_sqs::Config::builder()
        .endpoint_url(endpoint)
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .credentials_provider(aws_credential_types::Credentials::new(
            "test", "test", None, None, "static",
        ))
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .build();
    Client::from_conf(conf)
}

/// What a service error looked like on the wire.
#[derive(Debug)]
pub struct WireError {
    /// HTTP status.
    pub status: u16,
    /// Error code as the SDK resolved it (from `x-amzn-query-error` when present).
    pub code: Option<String>,
    /// Error message.
    pub message: Option<String>,
}

/// Extracts status, code and message from an SDK error; panics unless it is a service error.
pub fn wire_error<E>(err: &SdkError<E, HttpResponse>) -> WireError
where
    E: ProvideErrorMetadata + std::fmt::Debug,
{
    match err {
        SdkError::ServiceError(se) => WireError {
            status: se.raw().status().as_u16(),
            code: se.err().code().map(str::to_owned),
            message: se.err().message().map(str::to_owned),
        },
        other => panic!("expected a service error, got {other:?}"),
    }
}

/// Lower-case hex MD5.
pub fn md5_hex(bytes: &[u8]) -> String {
    format!("{:x}", Md5::digest(bytes))
}

/// MD5OfMessageAttributes (and MD5OfMessageSystemAttributes) per sqs-protocol.md §6.4: names
/// sorted; each as length-prefixed name, length-prefixed full DataType, a transport byte
/// (1 string, 2 binary) and the length-prefixed value (decoded bytes for binary).
pub fn md5_of_attributes(attrs: &HashMap<String, MessageAttributeValue>) -> String {
    fn put(buf: &mut Vec<u8>, bytes: &[u8]) {
        let len = u32::try_from(bytes.len()).expect("attribute part fits u32");
        buf.extend_from_slice(&len.to_be_bytes());
        buf.extend_from_slice(bytes);
    }
    let mut names: Vec<&String> = attrs.keys().collect();
    names.sort();
    let mut buf = Vec::new();
    for name in names {
        let v = &attrs[name];
        put(&mut buf, name.as_bytes());
        put(&mut buf, v.data_type().as_bytes());
        if let Some(s) = v.string_value() {
            buf.push(1);
            put(&mut buf, s.as_bytes());
        } else if let Some(b) = v.binary_value() {
            buf.push(2);
            put(&mut buf, b.as_ref());
        } else {
            panic!("attribute {name} has neither a string nor a binary value");
        }
    }
    md5_hex(&buf)
}

/// A String/Number-typed attribute value.
pub fn string_attr(data_type: &str, value: &str) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type(data_type)
        .string_value(value)
        .build()
        .expect("attribute builds")
}

/// A Binary-typed attribute value.
pub fn binary_attr(data_type: &str, value: &[u8]) -> MessageAttributeValue {
    MessageAttributeValue::builder()
        .data_type(data_type)
        .binary_value(aws_sdk_sqs::primitives::Blob::new(value.to_vec()))
        .build()
        .expect("attribute builds")
}

/// The one element of `items`; panics (naming `what`) when there are none or several.
pub fn only<T: std::fmt::Debug>(items: Vec<T>, what: &str) -> T {
    assert_eq!(
        items.len(),
        1,
        "{what}: expected exactly one, got {items:?}"
    );
    items.into_iter().next().expect("one item")
}
