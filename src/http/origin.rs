//! HTTP layer: browser origin protection and CORS.
//!
//! Without it any web page could drive the server: a cross-origin form POST creates queues, an
//! `<img>` GET with `Action=DeleteQueue` deletes one, a fetch to `/_localsqs/reset` wipes
//! everything. SDKs and the CLI send no `Origin` and no `Sec-Fetch-Site`, so they are never
//! affected. A browser request is let through when it comes from the server's own origin (the
//! web console), or from an origin given with `--cors-origin`; those also get CORS headers and
//! answered preflights, for browser apps that call SQS with the JavaScript SDK directly.

/// What to do with a request, judged from its browser headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Not a browser's cross-origin request: serve it as is.
    Plain,
    /// A cross-origin request from an allowed origin: serve it with CORS headers for it.
    Allowed(String),
    /// A cross-origin request from any other origin: refuse it.
    Refused(String),
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

    /// Judges a request from its `Origin`, `Sec-Fetch-Site` and `Host` headers.
    pub(super) fn judge(
        &self,
        origin: Option<&str>,
        fetch_site: Option<&str>,
        host: Option<&str>,
    ) -> Verdict {
        let same_origin = |o: &str| {
            host.is_some_and(|h| {
                o.strip_prefix("http://")
                    .or_else(|| o.strip_prefix("https://"))
                    == Some(h)
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
pub(super) fn cors_headers(origin: &str) -> Vec<(&'static str, String)> {
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
pub(super) fn preflight_headers(
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

    #[test]
    fn sdks_and_the_console_pass_other_pages_are_refused() {
        let none = CorsOrigins::default();
        let host = Some("localhost:9324");
        assert_eq!(none.judge(None, None, host), Verdict::Plain, "an SDK");
        assert_eq!(
            none.judge(Some("http://localhost:9324"), Some("same-origin"), host),
            Verdict::Plain,
            "the console"
        );
        assert_eq!(
            none.judge(Some("http://evil.example"), Some("cross-site"), host),
            Verdict::Refused("http://evil.example".into())
        );
        assert_eq!(
            none.judge(None, Some("cross-site"), host),
            Verdict::Refused("a cross-site page".into()),
            "an <img> GET"
        );
        assert_eq!(none.judge(None, Some("none"), host), Verdict::Plain);
        assert!(matches!(
            none.judge(Some("null"), None, host),
            Verdict::Refused(_)
        ));
    }

    #[test]
    fn the_allow_list_lets_named_origins_in() {
        let list = CorsOrigins::new(["http://localhost:3000/".to_owned()]);
        let host = Some("localhost:9324");
        assert_eq!(
            list.judge(Some("http://localhost:3000"), Some("same-site"), host),
            Verdict::Allowed("http://localhost:3000".into())
        );
        assert!(matches!(
            list.judge(Some("http://localhost:4000"), None, host),
            Verdict::Refused(_)
        ));
        let any = CorsOrigins::new(["*".to_owned()]);
        assert_eq!(
            any.judge(Some("http://a.example"), None, host),
            Verdict::Allowed("http://a.example".into())
        );
        assert_eq!(any.judge(None, Some("cross-site"), host), Verdict::Plain);
    }
}
