//! SigV4 exactly as AWS checks it (`--auth sigv4`), with the SDK's own signer (aws-sigv4, the
//! crate aws-sdk-sqs signs with) producing each request: a signature covers the body that
//! arrived, and the forms AWS refuses are refused, each checked before any body is read.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials as AwsCredentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use localsqs::Credentials;

use super::http::{Response, exchange};

const KEY: &str = "AKIDLOCAL";
const SECRET: &str = "right-secret";
const FORM: &str = "application/x-www-form-urlencoded";

async fn server() -> localsqs::RunningServer {
    localsqs::Server::builder()
        .sigv4(Credentials::parse([format!("{KEY}:{SECRET}").as_str()]).expect("parses"))
        .start()
        .await
        .expect("starts")
}

/// What to sign, and how.
struct Signing<'a> {
    method: &'a str,
    /// Path and query, e.g. `/?Action=ListQueues`.
    target: &'a str,
    headers: &'a [(&'a str, &'a str)],
    body: SignableBody<'a>,
    service: &'a str,
    at: SystemTime,
    settings: SigningSettings,
}

impl<'a> Signing<'a> {
    fn new(target: &'a str, headers: &'a [(&'a str, &'a str)], body: &'a [u8]) -> Self {
        Self {
            method: "POST",
            target,
            headers,
            body: SignableBody::Bytes(body),
            service: "sqs",
            at: SystemTime::now(),
            settings: SigningSettings::default(),
        }
    }

    /// The headers to send (the given ones plus the signer's) and the target (with the
    /// signer's query parameters for a presigned URL).
    fn sign(self, addr: std::net::SocketAddr) -> (Vec<(String, String)>, String) {
        let identity = AwsCredentials::new(KEY, SECRET, None, None, "test").into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region("us-east-1")
            .name(self.service)
            .time(self.at)
            .settings(self.settings)
            .build()
            .expect("signing params")
            .into();
        let uri = format!("http://{addr}{}", self.target);
        let signable =
            SignableRequest::new(self.method, uri, self.headers.iter().copied(), self.body)
                .expect("signable");
        let (instructions, _) = sign(signable, &params).expect("signed").into_parts();
        let mut headers: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        headers.extend(
            instructions
                .headers()
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
        );
        let mut target = self.target.to_owned();
        for (k, v) in instructions.params() {
            let sep = if target.contains('?') { '&' } else { '?' };
            let enc = |s: &str| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            target.push_str(&format!("{sep}{}={}", enc(k), enc(v)));
        }
        (headers, target)
    }
}

async fn send(
    s: &localsqs::RunningServer,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &str,
) -> Response {
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    exchange(s.local_addr(), method, target, &h, body)
        .await
        .expect("answered")
}

fn assert_refused(r: &Response, status: u16, code: &str, text: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    let query_code = r.header("x-amzn-query-error").unwrap_or_default();
    assert!(
        r.body.contains(code) || query_code.starts_with(code),
        "{code}: {}",
        r.body
    );
    assert!(r.body.contains(text), "{text}: {}", r.body);
}

async fn queue_count(s: &localsqs::RunningServer) -> usize {
    s.engine().queue_counts().len()
}

#[tokio::test]
async fn a_captured_signature_cannot_carry_another_body() {
    let s = server().await;
    let addr = s.local_addr();
    let create = "Action=CreateQueue&QueueName=kept";
    let (h, _) = Signing::new("/", &[("content-type", FORM)], create.as_bytes()).sign(addr);
    assert_eq!(send(&s, "POST", "/", &h, create).await.status, 200);
    // A signed GetQueueUrl, replayed as DeleteQueue with a forged payload hash.
    let lookup = "Action=GetQueueUrl&QueueName=kept";
    let (mut h, _) = Signing::new("/", &[("content-type", FORM)], lookup.as_bytes()).sign(addr);
    assert_eq!(send(&s, "POST", "/", &h, lookup).await.status, 200);
    let delete = format!("Action=DeleteQueue&QueueUrl=http://{addr}/000000000000/kept");
    let r = send(&s, "POST", "/", &h, &delete).await;
    assert_refused(&r, 403, "SignatureDoesNotMatch", "signature");
    let hash = sha256_hex(lookup.as_bytes());
    h.push(("x-amz-content-sha256".into(), hash));
    let r = send(&s, "POST", "/", &h, &delete).await;
    assert_refused(&r, 403, "SignatureDoesNotMatch", "x-amz-content-sha256");
    assert_eq!(queue_count(&s).await, 1, "the queue is still there");
    // The same in the JSON protocol: another body under a captured signature.
    let json = [
        ("content-type", "application/x-amz-json-1.0"),
        ("x-amz-target", "AmazonSQS.GetQueueUrl"),
    ];
    let (h, _) = Signing::new("/", &json, br#"{"QueueName":"kept"}"#).sign(addr);
    let r = send(&s, "POST", "/", &h, r#"{"QueueName":"other"}"#).await;
    assert_refused(&r, 403, "SignatureDoesNotMatch", "signature");
    s.shutdown().await;
}

fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

#[tokio::test]
async fn an_unsigned_payload_is_refused_on_header_auth() {
    let s = server().await;
    let mut signing = Signing::new("/", &[("content-type", FORM)], b"");
    signing.body = SignableBody::UnsignedPayload;
    signing.settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let (h, _) = signing.sign(s.local_addr());
    assert!(
        h.iter()
            .any(|(k, v)| k == "x-amz-content-sha256" && v == "UNSIGNED-PAYLOAD")
    );
    let r = send(&s, "POST", "/", &h, "Action=ListQueues").await;
    assert_refused(&r, 400, "IncompleteSignature", "UNSIGNED-PAYLOAD");
    s.shutdown().await;
}

fn presigned(expires: Duration, at: SystemTime, method: &'static str) -> Signing<'static> {
    let mut signing = Signing::new("/?Action=ListQueues", &[], b"");
    signing.method = method;
    signing.at = at;
    signing.settings.signature_location = SignatureLocation::QueryParams;
    signing.settings.expires_in = Some(expires);
    signing
}

#[tokio::test]
async fn presigned_urls_last_at_most_seven_days_and_are_not_dated_ahead() {
    let s = server().await;
    let addr = s.local_addr();
    let day = Duration::from_secs(86_400);
    let (h, good) = presigned(Duration::from_secs(300), SystemTime::now(), "GET").sign(addr);
    assert_eq!(send(&s, "GET", &good, &h, "").await.status, 200);
    let month_ago = SystemTime::now() - day * 30;
    let (h, old) = presigned(Duration::from_secs(1_000_000_000_000), month_ago, "GET").sign(addr);
    let r = send(&s, "GET", &old, &h, "").await;
    assert_refused(&r, 400, "IncompleteSignature", "604800");
    let (h, week) = presigned(day * 8, SystemTime::now(), "GET").sign(addr);
    let r = send(&s, "GET", &week, &h, "").await;
    assert_refused(&r, 400, "IncompleteSignature", "604800");
    let ahead = SystemTime::now() + Duration::from_secs(3600);
    let (h, future) = presigned(Duration::from_secs(300), ahead, "GET").sign(addr);
    let r = send(&s, "GET", &future, &h, "").await;
    assert_refused(&r, 403, "SignatureDoesNotMatch", "not yet current");
    s.shutdown().await;
}

#[tokio::test]
async fn a_presigned_url_carries_no_body_parameters() {
    let s = server().await;
    let addr = s.local_addr();
    let create = "Action=CreateQueue&QueueName=kept";
    let (h, _) = Signing::new("/", &[("content-type", FORM)], create.as_bytes()).sign(addr);
    assert_eq!(send(&s, "POST", "/", &h, create).await.status, 200);
    let (mut h, url) = presigned(Duration::from_secs(300), SystemTime::now(), "POST").sign(addr);
    h.push(("content-type".into(), FORM.into()));
    let delete = format!("Action=DeleteQueue&QueueUrl=http://{addr}/000000000000/kept");
    let r = send(&s, "POST", &url, &h, &delete).await;
    assert_refused(&r, 400, "IncompleteSignature", "cannot also have a body");
    assert_eq!(queue_count(&s).await, 1, "the queue is still there");
    s.shutdown().await;
}

#[tokio::test]
async fn scopes_of_other_services_are_refused() {
    let s = server().await;
    for service in ["s3", "sts"] {
        let mut signing = Signing::new("/", &[("content-type", FORM)], b"Action=ListQueues");
        signing.service = service;
        let (h, _) = signing.sign(s.local_addr());
        let r = send(&s, "POST", "/", &h, "Action=ListQueues").await;
        assert_refused(
            &r,
            403,
            "SignatureDoesNotMatch",
            "Credential should be scoped to correct service: 'sqs'",
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn host_must_be_signed() {
    let s = server().await;
    let mut signing = Signing::new("/", &[("content-type", FORM)], b"Action=ListQueues");
    signing.settings.excluded_headers = Some(vec![Cow::Borrowed("host")]);
    let (h, _) = signing.sign(s.local_addr());
    let auth = h
        .iter()
        .find(|(k, _)| k == "authorization")
        .expect("signed");
    assert!(!auth.1.contains("host"), "{}", auth.1);
    let r = send(&s, "POST", "/", &h, "Action=ListQueues").await;
    assert_refused(&r, 400, "IncompleteSignature", "must be a 'SignedHeader'");
    s.shutdown().await;
}

#[tokio::test]
async fn two_authorization_headers_are_refused() {
    let s = server().await;
    let body = "Action=ListQueues";
    let (mut h, _) =
        Signing::new("/", &[("content-type", FORM)], body.as_bytes()).sign(s.local_addr());
    assert_eq!(send(&s, "POST", "/", &h, body).await.status, 200);
    let auth = h
        .iter()
        .find(|(k, _)| k == "authorization")
        .cloned()
        .expect("signed");
    h.push(auth);
    let r = send(&s, "POST", "/", &h, body).await;
    assert_refused(
        &r,
        400,
        "IncompleteSignature",
        "only one Authorization header",
    );
    s.shutdown().await;
}
