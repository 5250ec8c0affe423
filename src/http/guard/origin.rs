//! HTTP layer: browser origin protection and CORS.
//!
//! Without it any web page could drive the server: a cross-origin form POST creates queues, an
//! `<img>` GET with `Action=DeleteQueue` deletes one, a fetch to `/_localsqs/reset` wipes
//! everything. SDKs and the CLI send no `Origin` and no `Sec-Fetch-Site`, so they are never
//! affected. A browser request is let through when it comes from the server's own origin (the
//! web console), or from an origin given with `--cors-origin`; those also get CORS headers and
//! answered preflights, for browser apps that call SQS with the JavaScript SDK directly.
//! Same-origin means the same scheme, host and port: `Origin` is `http://` + `Host` exactly (the
//! server speaks plain HTTP, so an `https://` origin is another origin). Before any of this, a
//! browser request must name a host the server knows (`hosts.rs`).

use std::net::SocketAddr;

use super::hosts::AllowedHosts;

/// What to do with a request, judged from its browser headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not a browser's cross-origin request: serve it as is.
    Plain,
    /// A cross-origin request from an allowed origin: serve it with CORS headers for it.
    Allowed(String),
    /// A cross-origin request from any other origin: refuse it.
    Refused(String),
    /// A browser request naming a host the server does not know (DNS rebinding): refuse it.
    UnknownHost(String),
}

/// The browser headers of a request, as [`CorsOrigins::judge`] reads them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BrowserHeaders<'a> {
    /// `Origin`.
    pub origin: Option<&'a str>,
    /// `Sec-Fetch-Site`.
    pub fetch_site: Option<&'a str>,
    /// Whether any `Sec-Fetch-*` header is present (only browsers send them).
    pub any_fetch: bool,
    /// `Host`.
    pub host: Option<&'a str>,
}

/// The origins a server lets in besides its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsOrigins(Vec<String>);

impl CorsOrigins {
    /// Origins such as `http://localhost:3000`; `*` allows every origin.
    #[must_use]
    pub fn new(origins: impl IntoIterator<Item = String>) -> Self {
        Self(
            origins
                .into_iter()
                .map(|o| o.trim().trim_end_matches('/').to_owned())
                .filter(|o| !o.is_empty())
                .collect(),
        )
    }

    fn allows(&self, origin: &str) -> bool {
        self.0.iter().any(|o| o == "*" || o == origin)
    }

    /// Judges a request from its browser headers: first whether it names a known host (only
    /// when it comes from a browser), then whether its origin may call the server.
    pub(crate) fn judge(
        &self,
        b: BrowserHeaders<'_>,
        hosts: &AllowedHosts,
        local: Option<SocketAddr>,
    ) -> Verdict {
        let (origin, fetch_site, host) = (b.origin, b.fetch_site, b.host);
        if (origin.is_some() || b.any_fetch) && !hosts.allows(host, local) {
            return Verdict::UnknownHost(host.unwrap_or_default().to_owned());
        }
        // Scheme, host and port all equal (names compare without case).
        let same_origin = |o: &str| {
            host.is_some_and(|h| {
                o.get(..7)
                    .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
                    && o[7..].eq_ignore_ascii_case(h)
            })
        };
        // `Origin: null` (sandboxed frames, file: pages) is never the server's own.
        match origin {
            Some(o) if same_origin(o) => Verdict::Plain,
            Some(o) if self.allows(o) => Verdict::Allowed(o.to_owned()),
            Some(o) => Verdict::Refused(o.to_owned()),
            // A GET from an <img> or a link carries no Origin, only Sec-Fetch-Site.
            None => match fetch_site {
                Some("cross-site" | "same-site") if !self.allows("*") => {
                    Verdict::Refused("a cross-site page".to_owned())
                }
                _ => Verdict::Plain,
            },
        }
    }
}

/// Headers of an answer to an allowed cross-origin request.
pub(crate) fn cors_headers(origin: &str) -> Vec<(&'static str, String)> {
    vec![
        ("access-control-allow-origin", origin.to_owned()),
        ("vary", "Origin".to_owned()),
        (
            "access-control-expose-headers",
            "x-amzn-RequestId, x-amzn-query-error".to_owned(),
        ),
    ]
}

/// Headers of an answer to an allowed preflight (`OPTIONS` with
/// `Access-Control-Request-Method`).
pub(crate) fn preflight_headers(
    origin: &str,
    request_headers: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut h = cors_headers(origin);
    h.push((
        "access-control-allow-methods",
        "GET, POST, DELETE, OPTIONS".to_owned(),
    ));
    if let Some(req) = request_headers {
        h.push(("access-control-allow-headers", req.to_owned()));
    }
    h.push(("access-control-max-age", "600".to_owned()));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Option<&str> = Some("localhost:9324");

    fn judge(list: &CorsOrigins, origin: Option<&str>, site: Option<&str>) -> Verdict {
        let b = BrowserHeaders {
            origin,
            fetch_site: site,
            any_fetch: site.is_some(),
            host: HOST,
        };
        list.judge(b, &AllowedHosts::default(), None)
    }

    #[test]
    fn sdks_and_the_console_pass_other_pages_are_refused() {
        let none = CorsOrigins::default();
        assert_eq!(judge(&none, None, None), Verdict::Plain, "an SDK");
        assert_eq!(
            judge(&none, Some("http://localhost:9324"), Some("same-origin")),
            Verdict::Plain,
            "the console"
        );
        assert_eq!(
            judge(&none, Some("http://evil.example"), Some("cross-site")),
            Verdict::Refused("http://evil.example".into())
        );
        assert_eq!(
            judge(&none, None, Some("cross-site")),
            Verdict::Refused("a cross-site page".into()),
            "an <img> GET"
        );
        assert_eq!(judge(&none, None, Some("none")), Verdict::Plain);
        assert!(matches!(
            judge(&none, Some("null"), None),
            Verdict::Refused(_)
        ));
    }

    #[test]
    fn same_origin_means_the_same_scheme_host_and_port() {
        let none = CorsOrigins::default();
        assert_eq!(
            judge(&none, Some("http://LOCALHOST:9324"), None),
            Verdict::Plain
        );
        for other in [
            "https://localhost:9324",
            "http://localhost:9325",
            "http://localhost",
            "http://localhost:9324.evil.example",
        ] {
            assert!(
                matches!(judge(&none, Some(other), None), Verdict::Refused(_)),
                "{other}"
            );
        }
    }

    #[test]
    fn a_browser_request_must_name_a_known_host() {
        let none = CorsOrigins::default();
        let hosts = AllowedHosts::default();
        let rebound = BrowserHeaders {
            origin: Some("http://rebind.example:9324"),
            fetch_site: Some("same-origin"),
            any_fetch: true,
            host: Some("rebind.example:9324"),
        };
        assert_eq!(
            none.judge(rebound, &hosts, None),
            Verdict::UnknownHost("rebind.example:9324".into())
        );
        let fetch_only = BrowserHeaders {
            any_fetch: true,
            host: Some("rebind.example:9324"),
            ..BrowserHeaders::default()
        };
        assert!(matches!(
            none.judge(fetch_only, &hosts, None),
            Verdict::UnknownHost(_)
        ));
        let sdk = BrowserHeaders {
            host: Some("sqs:9324"),
            ..BrowserHeaders::default()
        };
        assert_eq!(none.judge(sdk, &hosts, None), Verdict::Plain, "SDKs never");
        let named = AllowedHosts::new(["rebind.example".to_owned()]);
        assert_eq!(none.judge(rebound, &named, None), Verdict::Plain);
    }

    #[test]
    fn the_allow_list_lets_named_origins_in() {
        let list = CorsOrigins::new(["http://localhost:3000/".to_owned()]);
        assert_eq!(
            judge(&list, Some("http://localhost:3000"), Some("same-site")),
            Verdict::Allowed("http://localhost:3000".into())
        );
        assert!(matches!(
            judge(&list, Some("http://localhost:4000"), None),
            Verdict::Refused(_)
        ));
        let any = CorsOrigins::new(["*".to_owned()]);
        assert_eq!(
            judge(&any, Some("http://a.example"), None),
            Verdict::Allowed("http://a.example".into())
        );
        assert_eq!(judge(&any, None, Some("cross-site")), Verdict::Plain);
    }
}
