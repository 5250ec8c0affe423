//! HTTP layer: the scheme and authority that queue URLs are built on: `--queue-host`, the
//! request's `Host` header when it is a plain authority, or the listening address; and, with
//! `--compat localstack`, LocalStack's `sqs.<region>.localhost.localstack.cloud` form.

use std::net::SocketAddr;

use super::options::{Compat, HttpOptions};

/// The scheme and authority queue URLs are built on: the request's host, or with `--compat
/// localstack` LocalStack's `sqs.<region>.localhost.localstack.cloud` on the same port.
pub(super) fn base_url(
    options: &HttpOptions,
    default_region: &str,
    host_header: Option<&str>,
    local: Option<SocketAddr>,
) -> String {
    // Built in one buffer: `format!` and intermediate strings cost a visible share of a
    // SendMessage in profiles.
    const SCHEME: &str = "http://";
    let mut url = String::with_capacity(48);
    url.push_str(SCHEME);
    match &options.queue_host {
        Some(h) => url.push_str(h),
        None => push_queue_authority(&mut url, host_header, local),
    }
    match options.compat {
        Compat::None => url,
        Compat::LocalStack => localstack_base(default_region, port_of(&url[SCHEME.len()..])),
    }
}

pub(super) fn localstack_base(region: &str, port: &str) -> String {
    format!("http://sqs.{region}.localhost.localstack.cloud:{port}")
}

/// The port of a `host:port` or `scheme://host:port` (LocalStack's 4566 when none is given).
pub(super) fn port_of(authority: &str) -> &str {
    authority
        .rsplit_once(':')
        .map_or("4566", |(_, p)| p)
        .trim_end_matches('/')
}

/// [`push_queue_authority`] into a new string.
#[cfg(test)]
fn queue_authority(header: Option<&str>, local: Option<SocketAddr>) -> String {
    let mut out = String::new();
    push_queue_authority(&mut out, header, local);
    out
}

/// The `host:port` that queue URLs carry: the request's `Host` header when it is a plain
/// authority, with the listening port added when it names none (the Ruby v1 SDK sends
/// `Host: 127.0.0.1` to port 9324, and clients that follow queue URLs would then go to port
/// 80); the listening address when the header is missing or is not an authority at all
/// (`a/b?x#y` would break every queue URL built from it).
fn push_queue_authority(out: &mut String, header: Option<&str>, local: Option<SocketAddr>) {
    use std::fmt::Write as _;
    let Some(h) = header.filter(|h| is_authority(h)) else {
        match local {
            Some(a) => {
                let _ = write!(out, "{a}");
            }
            None => out.push_str("localhost"),
        }
        return;
    };
    let has_port = match h.rfind(']') {
        Some(end) => h[end..].contains(':'),
        None => h.contains(':'),
    };
    out.push_str(h);
    if let Some(a) = local
        && !has_port
    {
        let _ = write!(out, ":{}", a.port());
    }
}

/// A host name or IP literal with an optional port: no path, query, fragment or user info.
fn is_authority(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 255
        && h.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_urls_get_a_port_and_never_a_broken_host() {
        let local = Some(SocketAddr::from(([127, 0, 0, 1], 9324)));
        assert_eq!(
            queue_authority(Some("localhost:4566"), local),
            "localhost:4566"
        );
        assert_eq!(queue_authority(Some("127.0.0.1"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(Some("[::1]"), local), "[::1]:9324");
        assert_eq!(queue_authority(Some("[::1]:80"), local), "[::1]:80");
        assert_eq!(queue_authority(Some("a/b?x#y"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(Some("user@host"), local), "127.0.0.1:9324");
        assert_eq!(queue_authority(None, local), "127.0.0.1:9324");
    }
}
