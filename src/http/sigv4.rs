//! HTTP layer: optional AWS Signature Version 4 verification (`--auth sigv4`), for suites that
//! want to prove their clients sign with the right secret. Off by default: like LocalStack and
//! ElasticMQ, localsqs accepts any credentials unless told otherwise.
//!
//! Both forms are verified: the `Authorization` header, and a presigned URL's `X-Amz-*` query
//! parameters. The canonical request follows the SigV4 specification for services other than
//! S3: the path is URI-encoded once more as sent, query parameters are sorted by encoded name
//! and value, the signed headers are trimmed and lower-cased, and the payload is the body's
//! SHA-256. Failures answer AWS's common errors (docs/protocol.md §1.1).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use hyper::HeaderMap;
use sha2::{Digest, Sha256};

use crate::command::checksum::hex;
use crate::error::{ErrorCode, SqsError};

/// How far a signature's time may be from the server's (AWS allows 15 minutes).
const MAX_SKEW: Duration = Duration::from_secs(15 * 60);

/// Access key id → secret access key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credentials(HashMap<String, String>);

impl Credentials {
    /// Parses `KEY_ID:SECRET` pairs.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut map = HashMap::new();
        for pair in pairs {
            let (key, secret) = pair
                .split_once(':')
                .filter(|(k, s)| !k.is_empty() && !s.is_empty())
                .ok_or_else(|| format!("credentials must be KEY_ID:SECRET, got {pair:?}"))?;
            map.insert(key.to_owned(), secret.to_owned());
        }
        Ok(Self(map))
    }

    /// Whether no credentials are configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The parts of a request a signature covers.
pub(super) struct Signed<'a> {
    pub method: &'a str,
    /// The path exactly as sent (still percent-encoded).
    pub raw_path: &'a str,
    /// The query string exactly as sent.
    pub raw_query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

fn incomplete(what: &str) -> SqsError {
    SqsError::new(ErrorCode::IncompleteSignature, what.to_owned())
}

fn mismatch() -> SqsError {
    SqsError::new(
        ErrorCode::SignatureDoesNotMatch,
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
    )
}

/// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters stay, everything else
/// becomes `%XX` (upper-case); `/` stays when `keep_slash`.
fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode_component(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

/// `YYYYMMDDTHHMMSSZ` → seconds since the epoch.
fn parse_amz_date(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<u64>().ok();
    let (y, mo, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (h, mi, se) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let (y, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

fn header_value(headers: &HeaderMap, name: &str) -> Option<String> {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}

/// What a signature claims, from the header or the presigned query.
struct Claim {
    key: String,
    scope: String,
    date: String,
    amz_date: String,
    signed_headers: Vec<String>,
    signature: String,
    expires: Option<u64>,
    presigned: bool,
}

fn claim(req: &Signed<'_>, query: &[(String, String)]) -> Result<Option<Claim>, SqsError> {
    let q = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let (credential, signed_headers, signature, amz_date, expires, presigned) = if let Some(auth) =
        header_value(req.headers, "authorization")
    {
        let rest = auth
            .strip_prefix("AWS4-HMAC-SHA256 ")
            .ok_or_else(|| incomplete("Only AWS4-HMAC-SHA256 signatures are supported."))?;
        let mut fields = HashMap::new();
        for part in rest.split(',') {
            if let Some((k, v)) = part.trim().split_once('=') {
                fields.insert(k.trim(), v.trim().to_owned());
            }
        }
        let field = |k: &str| {
            fields.get(k).cloned().ok_or_else(|| {
                incomplete(&format!("Authorization header requires '{k}' parameter."))
            })
        };
        let amz_date = header_value(req.headers, "x-amz-date")
                .ok_or_else(|| incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."))?;
        (
            field("Credential")?,
            field("SignedHeaders")?,
            field("Signature")?,
            amz_date,
            None,
            false,
        )
    } else if let Some(credential) = q("X-Amz-Credential") {
        let need = |k: &str| {
            q(k).ok_or_else(|| {
                incomplete(&format!(
                    "Query-string authentication requires the {k} parameter."
                ))
            })
        };
        let expires = need("X-Amz-Expires")?
            .parse()
            .map_err(|_| incomplete("X-Amz-Expires must be a number of seconds."))?;
        (
            credential,
            need("X-Amz-SignedHeaders")?,
            need("X-Amz-Signature")?,
            need("X-Amz-Date")?,
            Some(expires),
            true,
        )
    } else {
        return Ok(None);
    };
    let mut parts = credential.splitn(2, '/');
    let key = parts.next().unwrap_or_default().to_owned();
    let scope = parts.next().unwrap_or_default().to_owned();
    let date = scope.split('/').next().unwrap_or_default().to_owned();
    if key.is_empty() || scope.split('/').count() != 4 || !amz_date.starts_with(&date) {
        return Err(incomplete(
            "Credential must be <key>/<date>/<region>/<service>/aws4_request, dated as X-Amz-Date.",
        ));
    }
    Ok(Some(Claim {
        key,
        scope,
        date,
        amz_date,
        signed_headers: signed_headers.split(';').map(str::to_owned).collect(),
        signature,
        expires,
        presigned,
    }))
}

/// Verifies a request's signature against `creds` at `now`.
pub(super) fn verify(
    creds: &Credentials,
    req: &Signed<'_>,
    now: SystemTime,
) -> Result<(), SqsError> {
    let query: Vec<(String, String)> = req
        .raw_query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode_component(k), decode_component(v))
        })
        .collect();
    let Some(c) = claim(req, &query)? else {
        return Err(SqsError::new(
            ErrorCode::MissingAuthenticationToken,
            "The request must contain either a valid (registered) AWS access key ID or X.509 certificate.",
        ));
    };
    let Some(secret) = creds.0.get(&c.key) else {
        return Err(SqsError::new(
            ErrorCode::InvalidClientTokenId,
            "The security token included in the request is invalid.",
        ));
    };
    let signed_at = parse_amz_date(&c.amz_date)
        .ok_or_else(|| incomplete("X-Amz-Date must be in the form YYYYMMDD'T'HHMMSS'Z'."))?;
    let now_s = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let expired = match c.expires {
        Some(e) => now_s > signed_at.saturating_add(e) || signed_at > now_s + MAX_SKEW.as_secs(),
        None => now_s.abs_diff(signed_at) > MAX_SKEW.as_secs(),
    };
    if expired {
        return Err(SqsError::new(
            ErrorCode::SignatureDoesNotMatch,
            format!(
                "Signature expired: {} is now earlier than the allowed window (15 min.).",
                c.amz_date
            ),
        ));
    }
    let mut canonical_query: Vec<(String, String)> = query
        .iter()
        .filter(|(k, _)| !(c.presigned && k == "X-Amz-Signature"))
        .map(|(k, v)| (uri_encode(k, false), uri_encode(v, false)))
        .collect();
    canonical_query.sort();
    let canonical_query = canonical_query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut canonical_headers = String::new();
    for name in &c.signed_headers {
        let value = header_value(req.headers, name).unwrap_or_default();
        canonical_headers.push_str(&format!("{name}:{value}\n"));
    }
    let path = if req.raw_path.is_empty() {
        "/"
    } else {
        req.raw_path
    };
    let body_hash = header_value(req.headers, "x-amz-content-sha256")
        .unwrap_or_else(|| hex(&Sha256::digest(req.body)));
    let key = hmac(format!("AWS4{secret}").as_bytes(), &c.date);
    let mut scope = c.scope.split('/').skip(1);
    let (region, service) = (
        scope.next().unwrap_or_default(),
        scope.next().unwrap_or_default(),
    );
    let signing_key = hmac(&hmac(&hmac(&key, region), service), "aws4_request");
    let payloads: &[&str] = if c.presigned {
        &[&body_hash, "UNSIGNED-PAYLOAD"]
    } else {
        &[&body_hash]
    };
    for payload in payloads {
        let canonical_request = format!(
            "{}\n{}\n{canonical_query}\n{canonical_headers}\n{}\n{payload}",
            req.method,
            uri_encode(path, true),
            c.signed_headers.join(";"),
        );
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{}\n{}\n{}",
            c.amz_date,
            c.scope,
            hex(&Sha256::digest(canonical_request.as_bytes()))
        );
        let expected = hex(&hmac(&signing_key, &string_to_sign));
        if constant_time_eq(expected.as_bytes(), c.signature.as_bytes()) {
            return Ok(());
        }
    }
    Err(mismatch())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        assert_eq!(parse_amz_date("19700101T000000Z"), Some(0));
        assert_eq!(parse_amz_date("20150830T123600Z"), Some(1_440_938_160));
        assert_eq!(parse_amz_date("2015-08-30"), None);
    }

    /// The example of the SigV4 documentation ("Examples of the complete Signature Version 4
    /// signing process", IAM ListUsers, GET with a query string).
    #[test]
    fn the_documented_example_verifies() {
        let creds = Credentials::parse(["AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"])
            .expect("parses");
        let mut headers = HeaderMap::new();
        headers.insert("host", "iam.amazonaws.com".parse().expect("value"));
        headers.insert(
            "content-type",
            "application/x-www-form-urlencoded; charset=utf-8"
                .parse()
                .expect("value"),
        );
        headers.insert("x-amz-date", "20150830T123600Z".parse().expect("value"));
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
                .parse()
                .expect("value"),
        );
        let req = Signed {
            method: "GET",
            raw_path: "/",
            raw_query: Some("Action=ListUsers&Version=2010-05-08"),
            headers: &headers,
            body: b"",
        };
        let then = UNIX_EPOCH + Duration::from_secs(1_440_938_160 + 60);
        verify(&creds, &req, then).expect("verifies");
        let wrong = Credentials::parse(["AKIDEXAMPLE:not-the-secret"]).expect("parses");
        assert_eq!(
            verify(&wrong, &req, then).unwrap_err().code,
            ErrorCode::SignatureDoesNotMatch
        );
        let unknown = Credentials::parse(["OTHER:x"]).expect("parses");
        assert_eq!(
            verify(&unknown, &req, then).unwrap_err().code,
            ErrorCode::InvalidClientTokenId
        );
        let later = then + Duration::from_secs(3600);
        assert_eq!(
            verify(&creds, &req, later).unwrap_err().code,
            ErrorCode::SignatureDoesNotMatch
        );
        let bare = HeaderMap::new();
        let unsigned = Signed {
            headers: &bare,
            ..req
        };
        assert_eq!(
            verify(&creds, &unsigned, then).unwrap_err().code,
            ErrorCode::MissingAuthenticationToken
        );
    }
}
