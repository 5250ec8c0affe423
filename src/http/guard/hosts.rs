//! HTTP layer: which `Host` names a browser request may carry, the defence against DNS
//! rebinding.
//!
//! A page served from `http://rebind.example:9324`, whose name an attacker then makes resolve
//! to 127.0.0.1, sends `Origin` and `Host` both `http://rebind.example:9324`: to the browser it
//! is same-origin, so it may read every answer. Comparing Origin with Host cannot catch that;
//! refusing host names the server does not know can. A request that carries `Origin` or a
//! `Sec-Fetch-*` header comes from a browser and is served only when its `Host` is a loopback
//! name or address, an address of this machine that the client reached, `--queue-host`, or a
//! name given with `--allowed-host` (`*` lifts the check). SDKs and the CLI send neither header
//! and are never affected, so a compose service name keeps working for them.

use std::net::{IpAddr, SocketAddr};

/// The host names browser requests may name besides the built-in ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    /// Lower-case names, each `name` (any port) or `name:port`.
    names: Vec<String>,
    /// `*`: every host is allowed.
    any: bool,
}

impl AllowedHosts {
    /// Names such as `sqs.internal` or `dev-box:9324`; `*` allows every host.
    #[must_use]
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        let mut out = Self::default();
        for n in names {
            out.add(&n);
        }
        out
    }

    /// Allows one more name (the server adds `--queue-host`).
    pub fn add(&mut self, name: &str) {
        let n = name.trim().trim_end_matches('.').to_ascii_lowercase();
        if n == "*" {
            self.any = true;
        } else if !n.is_empty() && !self.names.contains(&n) {
            self.names.push(n);
        }
    }

    /// Whether a browser request with this `Host` may be served, arriving at `local`.
    pub(crate) fn allows(&self, host: Option<&str>, local: Option<SocketAddr>) -> bool {
        if self.any {
            return true;
        }
        let Some((name, port)) = host.and_then(split) else {
            return false;
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        if let Ok(ip) = name.parse::<IpAddr>() {
            // Rebinding needs a name; an address literal of this machine reached by the client
            // names no one else's server.
            if ip.is_loopback() || local.is_some_and(|l| l.ip() == ip) {
                return true;
            }
        }
        self.names.iter().any(|n| match split(n) {
            Some((n_name, Some(n_port))) => n_name == name && Some(n_port) == port,
            Some((n_name, None)) => n_name == name,
            None => false,
        })
    }
}

/// `host[:port]` → (host, port); IPv6 literals keep their address without the brackets.
fn split(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.is_empty() {
        return None;
    }
    if let Some(rest) = authority.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        return match after {
            "" => Some((addr, None)),
            p => Some((addr, Some(p.strip_prefix(':')?))),
        };
    }
    match authority.rsplit_once(':') {
        // A bare IPv6 address has several colons and no port.
        Some((h, _)) if h.contains(':') => Some((authority, None)),
        Some((h, p)) => Some((h, Some(p))),
        None => Some((authority, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> Option<SocketAddr> {
        Some(SocketAddr::from(([192, 168, 1, 20], 9324)))
    }

    #[test]
    fn loopback_and_this_machine_are_known() {
        let none = AllowedHosts::default();
        for h in [
            "localhost:9324",
            "LOCALHOST",
            "app.localhost:9324",
            "127.0.0.1:9324",
            "127.9.9.9",
            "[::1]:9324",
            "192.168.1.20:9324",
        ] {
            assert!(none.allows(Some(h), local()), "{h}");
        }
        for h in [
            "rebind.example:9324",
            "192.168.1.21:9324",
            "localhost.evil.example",
            "",
        ] {
            assert!(!none.allows(Some(h), local()), "{h}");
        }
        assert!(!none.allows(None, local()), "no Host at all");
    }

    #[test]
    fn named_hosts_match_with_or_without_a_port() {
        let some = AllowedHosts::new(["Dev-Box".to_owned(), "sqs.internal:4566".to_owned()]);
        assert!(some.allows(Some("dev-box:9324"), None));
        assert!(some.allows(Some("dev-box."), None));
        assert!(some.allows(Some("sqs.internal:4566"), None));
        assert!(
            !some.allows(Some("sqs.internal:9324"), None),
            "another port"
        );
        assert!(!some.allows(Some("rebind.example:9324"), None));
        let any = AllowedHosts::new(["*".to_owned()]);
        assert!(any.allows(Some("anything.example"), None));
    }
}
