//! HTTP layer: tests of SigV4 verification: signatures, scopes, dates, hashes, presigned URLs.

use super::*;

#[test]
fn amz_dates() {
    assert_eq!(parse_amz_date("19700101T000000Z"), Some(0));
    assert_eq!(parse_amz_date("20150830T123600Z"), Some(1_440_938_160));
    assert_eq!(parse_amz_date("2015-08-30"), None);
}

const EXAMPLE_AUTH: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";

fn example_creds() -> Credentials {
    Credentials::parse(["AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"]).expect("parses")
}

fn example_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("host", "iam.amazonaws.com".parse().expect("value"));
    headers.insert(
        "content-type",
        "application/x-www-form-urlencoded; charset=utf-8"
            .parse()
            .expect("value"),
    );
    headers.insert("x-amz-date", "20150830T123600Z".parse().expect("value"));
    headers.insert("authorization", EXAMPLE_AUTH.parse().expect("value"));
    headers
}

fn head(headers: &HeaderMap) -> Head<'_> {
    Head {
        method: "GET",
        raw_path: "/",
        raw_query: Some("Action=ListUsers&Version=2010-05-08"),
        headers,
    }
}

fn then() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_440_938_160 + 60)
}

/// The example's service is IAM; checked as an endpoint serving IAM.
fn check_iam(c: &Credentials, h: &Head<'_>, at: SystemTime, body: &[u8]) -> SqsResult<()> {
    check_for(c, h, at, &["iam"])?.verify(h, body)
}

use crate::error::SqsResult;

/// The example of the SigV4 documentation ("Examples of the complete Signature Version 4
/// signing process", IAM ListUsers, GET with a query string).
#[test]
fn the_documented_example_verifies() {
    let headers = example_headers();
    let req = head(&headers);
    check_iam(&example_creds(), &req, then(), b"").expect("verifies");
    let wrong = Credentials::parse(["AKIDEXAMPLE:not-the-secret"]).expect("parses");
    let code = |r: SqsResult<()>| r.unwrap_err().code;
    assert_eq!(
        code(check_iam(&wrong, &req, then(), b"")),
        ErrorCode::SignatureDoesNotMatch
    );
    let unknown = Credentials::parse(["OTHER:x"]).expect("parses");
    assert_eq!(
        code(check_iam(&unknown, &req, then(), b"")),
        ErrorCode::InvalidClientTokenId
    );
    let later = then() + Duration::from_secs(3600);
    assert_eq!(
        code(check_iam(&example_creds(), &req, later, b"")),
        ErrorCode::SignatureDoesNotMatch
    );
    let earlier = then() - Duration::from_secs(3600);
    let e = check_iam(&example_creds(), &req, earlier, b"").unwrap_err();
    assert!(e.message.starts_with("Signature not yet current"), "{e:?}");
    let bare = HeaderMap::new();
    assert_eq!(
        code(check_iam(&example_creds(), &head(&bare), then(), b"")),
        ErrorCode::MissingAuthenticationToken
    );
}

#[test]
fn the_signature_covers_the_body_that_arrived() {
    let headers = example_headers();
    let req = head(&headers);
    let e = check_iam(&example_creds(), &req, then(), b"Action=DeleteQueue").unwrap_err();
    assert_eq!(e.code, ErrorCode::SignatureDoesNotMatch);
    // A declared payload hash is compared with the body, never trusted.
    let mut lying = example_headers();
    let empty = hex(&Sha256::digest(b""));
    lying.insert("x-amz-content-sha256", empty.parse().expect("value"));
    let e = check_iam(&example_creds(), &head(&lying), then(), b"other").unwrap_err();
    assert!(e.message.contains("x-amz-content-sha256"), "{e:?}");
    let mut unsigned = example_headers();
    unsigned.insert(
        "x-amz-content-sha256",
        "UNSIGNED-PAYLOAD".parse().expect("value"),
    );
    let e = check_for(&example_creds(), &head(&unsigned), then(), &["iam"])
        .err()
        .expect("refused before any body");
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
}

#[test]
fn scope_signed_headers_and_duplicates_are_checked_before_the_body() {
    let headers = example_headers();
    let e = check(&example_creds(), &head(&headers), then())
        .err()
        .expect("an IAM scope on an SQS endpoint");
    assert_eq!(e.code, ErrorCode::SignatureDoesNotMatch);
    assert_eq!(
        e.message,
        "Credential should be scoped to correct service: 'sqs'. "
    );
    let mut no_host = example_headers();
    no_host.insert(
        "authorization",
        EXAMPLE_AUTH
            .replace("content-type;host;x-amz-date", "content-type;x-amz-date")
            .parse()
            .expect("value"),
    );
    let e = check_for(&example_creds(), &head(&no_host), then(), &["iam"])
        .err()
        .expect("host unsigned");
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
    let mut twice = example_headers();
    twice.append("authorization", EXAMPLE_AUTH.parse().expect("value"));
    let e = check_for(&example_creds(), &head(&twice), then(), &["iam"])
        .err()
        .expect("two Authorization headers");
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
}

fn presigned(expires: u64) -> String {
    format!(
        "Action=ListQueues&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires={expires}&X-Amz-SignedHeaders=host&X-Amz-Signature=00"
    )
}

#[test]
fn presigned_urls_last_at_most_seven_days_and_carry_no_body() {
    let mut headers = HeaderMap::new();
    headers.insert("host", "localhost:9324".parse().expect("value"));
    let long = presigned(1_000_000_000_000);
    let h = Head {
        method: "GET",
        raw_path: "/",
        raw_query: Some(&long),
        headers: &headers,
    };
    let e = check(&example_creds(), &h, then()).err().expect("too long");
    assert!(e.message.contains("604800"), "{e:?}");
    let week = presigned(604_800);
    let h = Head {
        raw_query: Some(&week),
        ..h
    };
    let later = then() + Duration::from_secs(604_800 + 60);
    let e = check(&example_creds(), &h, later).err().expect("expired");
    assert!(e.message.starts_with("Signature expired"), "{e:?}");
    let checked = check(&example_creds(), &h, then()).expect("a week is allowed");
    let e = checked.verify(&h, b"Action=DeleteQueue").unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::IncompleteSignature,
        "a body on a presigned URL"
    );
    let mut with_body = headers.clone();
    with_body.insert("content-length", "18".parse().expect("value"));
    let h = Head {
        headers: &with_body,
        ..h
    };
    let e = check(&example_creds(), &h, then())
        .err()
        .expect("announced body");
    assert_eq!(e.code, ErrorCode::IncompleteSignature);
}
