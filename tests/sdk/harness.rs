//! The harness of the SDK tests: a server on `127.0.0.1:0` driven by a [`ManualClock`], an
//! `aws-sdk-sqs` client pointed at it, and what the tests would otherwise spell out again and
//! again:
//!
//! - refused requests: [`expect_error`] pins status, code and message in one call and returns
//!   the typed service error; the `try_`/`set_`/`delete_handle`/`change_visibility` helpers
//!   return a request's result as is, for it;
//! - queues: [`TestServer::create_queue`], dead-letter set-ups
//!   ([`TestServer::create_dead_letter_pair`], [`TestServer::create_source_queue`]),
//!   attributes, counts and `/metrics`;
//! - messages: short-poll receives, deletes, system attributes, bodies;
//! - long polls in the background ([`LongPoll`]);
//! - the SQS MD5 algorithms (docs/protocol.md §6.3, §6.4), computed independently of the server.

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::http::HttpResponse;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::operation::change_message_visibility::{
    ChangeMessageVisibilityError, ChangeMessageVisibilityOutput,
};
use aws_sdk_sqs::operation::create_queue::{CreateQueueError, CreateQueueOutput};
use aws_sdk_sqs::operation::delete_message::{DeleteMessageError, DeleteMessageOutput};
use aws_sdk_sqs::operation::receive_message::builders::ReceiveMessageFluentBuilder;
use aws_sdk_sqs::operation::set_queue_attributes::{
    SetQueueAttributesError, SetQueueAttributesOutput,
};
use aws_sdk_sqs::types::{
    Message, MessageAttributeValue, MessageSystemAttributeName, QueueAttributeName,
};
use localsqs::RunningServer;
use localsqs::engine::ManualClock;
use md5::{Digest, Md5};

mod long_poll;
pub use long_poll::LongPoll;

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
        let mut builder = localsqs::Server::builder();
        if let Some(dir) = data_dir {
            builder = builder.data_dir(dir);
        }
        Self::launch(builder, clock).await
    }

    /// A server started from `builder` (options of the test's own) with a fresh clock.
    pub async fn start_from(builder: localsqs::Server) -> Self {
        Self::launch(builder, Arc::new(ManualClock::new(START_MS))).await
    }

    async fn launch(builder: localsqs::Server, clock: Arc<ManualClock>) -> Self {
        let server = builder
            .clock(clock.clone())
            .start()
            .await
            .expect("server starts");
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
        self.try_create_queue(name, attributes)
            .await
            .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"))
            .queue_url()
            .expect("CreateQueue returns a QueueUrl")
            .to_owned()
    }

    /// One CreateQueue with the given attributes, its result returned as is.
    pub async fn try_create_queue(
        &self,
        name: &str,
        attributes: &[(QueueAttributeName, &str)],
    ) -> Result<CreateQueueOutput, SdkError<CreateQueueError, HttpResponse>> {
        let mut req = self.client.create_queue().queue_name(name);
        for (k, v) in attributes {
            req = req.attributes(k.clone(), *v);
        }
        req.send().await
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
    pub async fn receive(&self, url: &str, max: i32) -> Vec<Message> {
        messages(self.short_poll(url, max)).await
    }

    /// The request [`receive`](Self::receive) sends; [`receive_full`] and [`receive_vis`] add
    /// to it.
    fn short_poll(&self, url: &str, max: i32) -> ReceiveMessageFluentBuilder {
        self.client
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(max)
            .wait_time_seconds(0)
            .message_system_attribute_names(MessageSystemAttributeName::All)
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

    /// The body of `GET /metrics`.
    pub async fn metrics(&self) -> String {
        crate::http::get(self.server.local_addr(), "/metrics", &[])
            .await
            .expect("metrics")
            .body
    }

    /// Asserts that `/metrics` holds `sample` (a whole sample: name, labels and value).
    pub async fn assert_metric(&self, sample: &str) {
        let metrics = self.metrics().await;
        assert!(metrics.contains(sample), "{sample} missing from\n{metrics}");
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
    Client::from_conf(client_config(endpoint, "us-east-1", "test", "test").build())
}

/// An SDK client for `endpoint` with the given retry behaviour.
pub fn client_with_retries(endpoint: &str, retry: RetryConfig) -> Client {
    Client::from_conf(
        client_config(endpoint, "us-east-1", "test", "test")
            .retry_config(retry)
            .build(),
    )
}

/// The configuration of an SDK client for `endpoint` that signs for `region` with access key
/// `key` and `secret`, without aws-config; tests add retry or time settings before `build`.
pub fn client_config(
    endpoint: &str,
    region: &str,
    key: &str,
    secret: &str,
) -> aws_sdk_sqs::config::Builder {
    aws_sdk_sqs::Config::builder()
        .endpoint_url(endpoint)
        .region(aws_sdk_sqs::config::Region::new(region.to_owned()))
        .credentials_provider(aws_credential_types::Credentials::new(
            key, secret, None, None, "static",
        ))
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
}

/// Creates the queue `name` through `sqs` (a client of a server started by the test itself)
/// and returns its URL.
pub async fn create_queue_on(sqs: &Client, name: &str) -> String {
    sqs.create_queue()
        .queue_name(name)
        .send()
        .await
        .unwrap_or_else(|e| panic!("CreateQueue {name}: {e:?}"))
        .queue_url
        .expect("CreateQueue returns a QueueUrl")
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

/// Asserts that `res` failed with the given HTTP status, error code and (when given) message,
/// and returns the service error, for a check of its typed variant.
pub fn expect_error<T: Debug, E: ProvideErrorMetadata + Debug>(
    what: &str,
    res: Result<T, SdkError<E, HttpResponse>>,
    status: u16,
    code: &str,
    message: Option<&str>,
) -> E {
    let err = match res {
        Ok(v) => panic!("{what}: expected {code}, got success {v:?}"),
        Err(e) => e,
    };
    let w = wire_error(&err);
    assert_eq!(w.status, status, "{what}: {w:?}");
    assert_eq!(w.code.as_deref(), Some(code), "{what}: {w:?}");
    if let Some(m) = message {
        assert_eq!(w.message.as_deref(), Some(m), "{what}: {w:?}");
    }
    match err {
        SdkError::ServiceError(se) => se.into_err(),
        other => unreachable!("wire_error accepted {other:?}"),
    }
}

/// Lower-case hex MD5.
pub fn md5_hex(bytes: &[u8]) -> String {
    format!("{:x}", Md5::digest(bytes))
}

/// MD5OfMessageAttributes (and MD5OfMessageSystemAttributes) per docs/protocol.md §6.4: names
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

// ---------------------------------------------------------------------------------------------
// Queue attributes.

/// Every attribute of the queue (GetQueueAttributes All).
pub async fn all_attributes(t: &TestServer, url: &str) -> HashMap<QueueAttributeName, String> {
    t.client
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::All)
        .send()
        .await
        .expect("GetQueueAttributes All")
        .attributes
        .unwrap_or_default()
}

/// One SetQueueAttributes call, its result returned as is.
pub async fn set_attr(
    t: &TestServer,
    url: &str,
    name: QueueAttributeName,
    value: &str,
) -> Result<SetQueueAttributesOutput, SdkError<SetQueueAttributesError, HttpResponse>> {
    t.client
        .set_queue_attributes()
        .queue_url(url)
        .attributes(name, value)
        .send()
        .await
}

/// SetQueueAttributes of a RedrivePolicy naming `dlq_arn` with `max_receive_count`, its result
/// returned as is.
pub async fn set_redrive(
    t: &TestServer,
    url: &str,
    dlq_arn: &str,
    max_receive_count: u32,
) -> Result<SetQueueAttributesOutput, SdkError<SetQueueAttributesError, HttpResponse>> {
    let redrive = policy(dlq_arn, max_receive_count);
    set_attr(t, url, QueueAttributeName::RedrivePolicy, &redrive).await
}

/// The queue's ARN.
pub async fn arn(t: &TestServer, url: &str) -> String {
    t.queue_attr(url, QueueAttributeName::QueueArn).await
}

/// A RedrivePolicy in AWS's normalised form.
pub fn policy(dlq_arn: &str, max: u32) -> String {
    format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":{max}}}"#)
}

/// A source queue and the dead-letter queue its RedrivePolicy names.
#[derive(Debug)]
pub struct DeadLetter {
    /// The source queue's URL.
    pub src: String,
    /// The dead-letter queue's URL.
    pub dlq: String,
    /// The dead-letter queue's ARN.
    pub dlq_arn: String,
}

impl TestServer {
    /// Creates `name` with `attrs` and a RedrivePolicy that moves a message to `dlq_arn` on the
    /// receive after its `max_receive_count`th; returns its URL.
    pub async fn create_source_queue(
        &self,
        name: &str,
        attrs: &[(QueueAttributeName, &str)],
        dlq_arn: &str,
        max_receive_count: u32,
    ) -> String {
        let redrive = policy(dlq_arn, max_receive_count);
        let attrs: Vec<(QueueAttributeName, &str)> = attrs
            .iter()
            .cloned()
            .chain([(QueueAttributeName::RedrivePolicy, redrive.as_str())])
            .collect();
        self.create_queue(name, &attrs).await
    }

    /// Creates the dead-letter queue `dlq` with `dlq_attrs`, then the source queue `src` with
    /// `src_attrs` and a RedrivePolicy naming it with `max_receive_count` (a FIFO source needs a
    /// FIFO dead-letter queue: give both FifoQueue).
    pub async fn create_dead_letter_pair(
        &self,
        src: &str,
        src_attrs: &[(QueueAttributeName, &str)],
        dlq: &str,
        dlq_attrs: &[(QueueAttributeName, &str)],
        max_receive_count: u32,
    ) -> DeadLetter {
        let dlq = self.create_queue(dlq, dlq_attrs).await;
        let dlq_arn = arn(self, &dlq).await;
        let src = self
            .create_source_queue(src, src_attrs, &dlq_arn, max_receive_count)
            .await;
        DeadLetter { src, dlq, dlq_arn }
    }
}

// ---------------------------------------------------------------------------------------------
// Messages.

/// A short-poll receive with all system and message attributes.
pub async fn receive_full(t: &TestServer, url: &str, max: i32) -> Vec<Message> {
    messages(t.short_poll(url, max).message_attribute_names("All")).await
}

/// A short-poll receive with a per-receive visibility timeout and all system attributes.
pub async fn receive_vis(t: &TestServer, url: &str, max: i32, visibility: i32) -> Vec<Message> {
    messages(t.short_poll(url, max).visibility_timeout(visibility)).await
}

/// The messages `request` receives; panics when it fails.
async fn messages(request: ReceiveMessageFluentBuilder) -> Vec<Message> {
    request
        .send()
        .await
        .unwrap_or_else(|e| panic!("ReceiveMessage: {e:?}"))
        .messages
        .unwrap_or_default()
}

/// Deletes one received message; panics on failure.
pub async fn delete(t: &TestServer, url: &str, m: &Message) {
    delete_handle(t, url, handle(m))
        .await
        .unwrap_or_else(|e| panic!("DeleteMessage {:?}: {e:?}", m.body()));
}

/// One DeleteMessage with a receipt handle, its result returned as is.
pub async fn delete_handle(
    t: &TestServer,
    url: &str,
    handle: &str,
) -> Result<DeleteMessageOutput, SdkError<DeleteMessageError, HttpResponse>> {
    t.client
        .delete_message()
        .queue_url(url)
        .receipt_handle(handle)
        .send()
        .await
}

/// One ChangeMessageVisibility to `secs` seconds, its result returned as is.
pub async fn change_visibility(
    t: &TestServer,
    url: &str,
    handle: &str,
    secs: i32,
) -> Result<ChangeMessageVisibilityOutput, SdkError<ChangeMessageVisibilityError, HttpResponse>> {
    t.client
        .change_message_visibility()
        .queue_url(url)
        .receipt_handle(handle)
        .visibility_timeout(secs)
        .send()
        .await
}

/// The receipt handle of a received message.
pub fn handle(m: &Message) -> &str {
    m.receipt_handle().expect("ReceiptHandle")
}

/// Deletes every message of `msgs`, one DeleteMessage each.
pub async fn delete_all(t: &TestServer, url: &str, msgs: &[Message]) {
    for m in msgs {
        delete(t, url, m).await;
    }
}

/// One system attribute of a received message.
pub fn sys<'a>(m: &'a Message, name: &MessageSystemAttributeName) -> Option<&'a str> {
    m.attributes().and_then(|a| a.get(name)).map(String::as_str)
}

/// ApproximateReceiveCount of a message received with its system attributes.
pub fn receive_count(m: &Message) -> &str {
    sys(m, &MessageSystemAttributeName::ApproximateReceiveCount)
        .expect("ApproximateReceiveCount requested")
}

/// The bodies, in receive order.
pub fn bodies(msgs: &[Message]) -> Vec<&str> {
    msgs.iter().map(|m| m.body().expect("Body")).collect()
}

/// The bodies, sorted.
pub fn sorted_bodies(msgs: &[Message]) -> Vec<String> {
    let mut b: Vec<String> = bodies(msgs).into_iter().map(str::to_owned).collect();
    b.sort_unstable();
    b
}
