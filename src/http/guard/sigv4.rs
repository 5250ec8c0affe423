//! HTTP layer: optional AWS Signature Version 4 verification (`--auth sigv4`), for suites that
//! want to prove their clients sign with the right secret. Off by default: like LocalStack and
//! ElasticMQ, localsqs accepts any credentials unless told otherwise.
//!
//! Both forms are verified: the `Authorization` header, and a presigned URL's `X-Amz-*` query
//! parameters. The canonical request follows the SigV4 specification for services other than
//! S3: the path is URI-encoded once more as sent, query parameters are sorted by encoded name
//! and value, the signed headers are trimmed and lower-cased, and the payload is the SHA-256 of
//! the body that arrived (a declared `X-Amz-Content-Sha256` must equal it, so a captured
//! signature cannot carry another body). It happens in two steps: [`check`] needs only the
//! request's head (key, date, scope, signed headers), so an unauthenticated client is refused
//! before its body is read; [`Checked::verify`] then checks the signature over the body.
//! Failures answer AWS's common errors (docs/protocol.md §1.1, docs/security.md).

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

    /// The credential with the smallest key id, for a local program that must be able to
    /// call the server (the init hooks).
    #[must_use]
    pub fn first(&self) -> Option<(&str, &str)> {
        self.0
            .iter()
            .min_by_key(|(k, _)| k.as_str())
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether no credentials are configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The parts of a request before its body that a signature covers.
#[derive(Clone, Copy)]
pub(crate) struct Head<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The path exactly as sent (still percent-encoded).
    pub raw_path: &'a str,
    /// The query string exactly as sent.
    pub raw_query: Option<&'a str>,
    /// Every header.
    pub headers: &'a HeaderMap,
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

/// The services whose credential scope this endpoint accepts (the first is named in the error).
const SERVED: &[&str] = &["sqs", "sns"];

/// The longest a presigned URL may stay valid: SigV4's signing keys last seven days, and AWS
/// refuses a longer `X-Amz-Expires`.
const MAX_PRESIGNED: Duration = Duration::from_secs(7 * 24 * 3600);

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

/// Whether a request carries a SigV4 signature at all (header or presigned query).
pub(crate) fn is_signed(headers: &HeaderMap, raw_query: Option<&str>) -> bool {
    headers
        .get_all("authorization")
        .iter()
        .any(|v| v.as_bytes().starts_with(b"AWS4-HMAC-SHA256"))
        || raw_query.is_some_and(|q| q.contains("X-Amz-Credential="))
}

fn query_pairs(raw_query: Option<&str>) -> Vec<(String, String)> {
    raw_query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode_component(k), decode_component(v))
        })
        .collect()
}

fn claim(head: &Head<'_>, query: &[(String, String)]) -> Result<Option<Claim>, SqsError> {
    let q = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let authorizations = head.headers.get_all("authorization").iter().count();
    if authorizations > 1 {
        // [E] AWS's text is not recorded; two Authorization headers are two claims, and
        // joining them (as HTTP allows for list headers) would verify neither.
        return Err(incomplete(
            "A request may carry only one Authorization header.",
        ));
    }
    let header_auth = header_value(head.headers, "authorization");
    if header_auth.is_some() && q("X-Amz-Signature").is_some() {
        // [E] S3 names this case; SQS's answer is not recorded.
        return Err(incomplete(
            "Only one auth mechanism allowed: the Authorization header or the X-Amz-* query parameters.",
        ));
    }
    let (credential, signed_headers, signature, amz_date, expires, presigned) = if let Some(auth) =
        header_auth
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
        let amz_date = header_value(head.headers, "x-amz-date")
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
    if key.is_empty()
        || scope.split('/').count() != 4
        || !scope.ends_with("/aws4_request")
        || !amz_date.starts_with(&date)
    {
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

/// A signature whose key, date, scope and signed headers passed, before the body is read:
/// [`Checked::verify`] then checks the signature itself over the body that arrived.
pub(crate) struct Checked {
    claim: Claim,
    secret: String,
    query: Vec<(String, String)>,
}

/// Checks everything about a request's signature that needs no body: that there is one, that
/// its key is configured, its date is within the skew window (or, presigned, not expired,
/// valid for at most seven days and not dated ahead), its scope names a service this endpoint
/// serves, `host` is signed, and the payload is not declared unsigned. An unauthenticated
/// client is refused here, before the server buffers any body.
pub(crate) fn check(
    creds: &Credentials,
    head: &Head<'_>,
    now: SystemTime,
) -> Result<Checked, SqsError> {
    check_for(creds, head, now, SERVED)
}

fn check_for(
    creds: &Credentials,
    head: &Head<'_>,
    now: SystemTime,
    services: &[&str],
) -> Result<Checked, SqsError> {
    let query = query_pairs(head.raw_query);
    let Some(c) = claim(head, &query)? else {
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
    let service = c.scope.split('/').nth(2).unwrap_or_default();
    if !services.contains(&service) {
        // AWS's wording for a scope of another service (seen from several services).
        return Err(SqsError::new(
            ErrorCode::SignatureDoesNotMatch,
            format!(
                "Credential should be scoped to correct service: '{}'. ",
                services.first().copied().unwrap_or_default()
            ),
        ));
    }
    if !c.signed_headers.iter().any(|h| h == "host") {
        // [E] AWS's wording (seen from API Gateway-fronted services); SQS's code for it is
        // not recorded.
        return Err(incomplete(
            "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
        ));
    }
    if !c.presigned
        && header_value(head.headers, "x-amz-content-sha256").as_deref() == Some("UNSIGNED-PAYLOAD")
    {
        // [E] SigV4 for services other than S3 always signs the payload's hash.
        return Err(incomplete(
            "UNSIGNED-PAYLOAD is accepted only on presigned URLs; sign the body's SHA-256.",
        ));
    }
    let signed_at = parse_amz_date(&c.amz_date)
        .ok_or_else(|| incomplete("X-Amz-Date must be in the form YYYYMMDD'T'HHMMSS'Z'."))?;
    let now_s = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let skew = MAX_SKEW.as_secs();
    if let Some(e) = c.expires
        && e > MAX_PRESIGNED.as_secs()
    {
        // [E] S3's wording; SigV4 signing keys last seven days for every service.
        return Err(incomplete(
            "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds",
        ));
    }
    if signed_at > now_s + skew {
        return Err(SqsError::new(
            ErrorCode::SignatureDoesNotMatch,
            format!(
                "Signature not yet current: {} is still later than the allowed window (15 min.).",
                c.amz_date
            ),
        ));
    }
    let expired = match c.expires {
        Some(e) => now_s > signed_at.saturating_add(e),
        None => now_s.saturating_sub(signed_at) > skew,
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
    if c.presigned && has_body(head.headers) {
        // [E] A presigned URL signs its query, not a body: parameters in a body would not be
        // covered by the signature (a presigned ListQueues plus a DeleteQueue body).
        return Err(presigned_body());
    }
    Ok(Checked {
        claim: c,
        secret: secret.clone(),
        query,
    })
}

fn presigned_body() -> SqsError {
    incomplete(
        "A presigned request carries its parameters in its signed URL; it cannot also have a body.",
    )
}

/// Whether the headers announce a body (a non-zero `Content-Length`, or chunked encoding).
fn has_body(headers: &HeaderMap) -> bool {
    let length = header_value(headers, "content-length").and_then(|v| v.parse::<u64>().ok());
    length.is_some_and(|n| n > 0) || headers.contains_key("transfer-encoding")
}

impl Checked {
    /// Verifies the signature over the request as it arrived: the payload hash is the SHA-256
    /// of `body`, and a declared `X-Amz-Content-Sha256` must equal it.
    pub(crate) fn verify(&self, head: &Head<'_>, body: &[u8]) -> Result<(), SqsError> {
        let c = &self.claim;
        if c.presigned && !body.is_empty() {
            return Err(presigned_body());
        }
        let body_hash = hex(&Sha256::digest(body));
        if let Some(declared) = header_value(head.headers, "x-amz-content-sha256")
            && !(c.presigned && declared == "UNSIGNED-PAYLOAD")
            && !declared.eq_ignore_ascii_case(&body_hash)
        {
            // [E] S3's wording; the replay it stops (a signed request with another body) is
            // the same for every service.
            return Err(SqsError::new(
                ErrorCode::SignatureDoesNotMatch,
                "The provided 'x-amz-content-sha256' header does not match what was computed.",
            ));
        }
        let mut canonical_query: Vec<(String, String)> = self
            .query
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
            let value = header_value(head.headers, name).unwrap_or_default();
            canonical_headers.push_str(&format!("{name}:{value}\n"));
        }
        let path = if head.raw_path.is_empty() {
            "/"
        } else {
            head.raw_path
        };
        let key = hmac(format!("AWS4{}", self.secret).as_bytes(), &c.date);
        let mut scope = c.scope.split('/').skip(1);
        let (region, service) = (
            scope.next().unwrap_or_default(),
            scope.next().unwrap_or_default(),
        );
        let signing_key = hmac(&hmac(&hmac(&key, region), service), "aws4_request");
        // A presigned URL's payload is `UNSIGNED-PAYLOAD` (botocore, the Rust SDK) or the
        // empty body's hash (older signers); a header signature always signs the body's hash.
        let payloads: &[&str] = if c.presigned {
            &[&body_hash, "UNSIGNED-PAYLOAD"]
        } else {
            &[&body_hash]
        };
        for payload in payloads {
            let canonical_request = format!(
                "{}\n{}\n{canonical_query}\n{canonical_headers}\n{}\n{payload}",
                head.method,
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
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests;
