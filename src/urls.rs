//! The URLs that reach the server's listening socket, for the startup log
//! ([`crate::RunningServer::urls`]). A server bound to a wildcard address (`0.0.0.0`, `[::]`)
//! is reached through loopback and through each of the machine's other addresses, never through
//! the wildcard itself, which no client can dial. [`endpoint_url`] is the one URL the server
//! reports as its endpoint.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::admin::routes::UI_PATH;

/// An endpoint to give an SDK and the console's page under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// E.g. `http://127.0.0.1:9324`.
    pub endpoint: String,
    /// E.g. `http://127.0.0.1:9324/_localsqs/ui/`.
    pub console: String,
}

/// The URLs that reach `bound`, loopback first: `bound` itself for a specific address; for a
/// wildcard, the loopback address of its family and then each address in `interfaces` of that
/// family that a client elsewhere could dial (not loopback, not IPv6 link-local, which needs a
/// zone a URL cannot carry), in the order given, without repeats.
#[must_use]
pub fn reachable(bound: SocketAddr, interfaces: &[IpAddr]) -> Vec<ServerUrl> {
    let port = bound.port();
    let ips: Vec<IpAddr> = match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            let mut out = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
            out.extend(interfaces.iter().filter(|i| i.is_ipv4() && dialable(i)));
            out
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            let mut out = vec![IpAddr::V6(Ipv6Addr::LOCALHOST)];
            out.extend(interfaces.iter().filter(|i| i.is_ipv6() && dialable(i)));
            out
        }
        ip => vec![ip],
    };
    let mut seen = Vec::with_capacity(ips.len());
    for ip in ips {
        if !seen.contains(&ip) {
            seen.push(ip);
        }
    }
    seen.into_iter()
        .map(|ip| {
            let endpoint = format!("http://{}", SocketAddr::new(ip, port));
            ServerUrl {
                console: format!("{endpoint}{UI_PATH}/"),
                endpoint,
            }
        })
        .collect()
}

/// The addresses of this machine's interfaces; none when the system will not say.
#[must_use]
pub fn interface_addresses() -> Vec<IpAddr> {
    if_addrs::get_if_addrs()
        .map(|list| list.into_iter().map(|i| i.ip()).collect())
        .unwrap_or_default()
}

fn dialable(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !v4.is_loopback() && !v4.is_unspecified(),
        IpAddr::V6(v6) => !v6.is_loopback() && !v6.is_unspecified() && !v6.is_unicast_link_local(),
    }
}

/// `http://host:port` for a client of a server listening on `host` (a wildcard address means
/// this machine's loopback).
pub fn endpoint_url(host: &str, port: u16) -> String {
    let host = match host {
        "0.0.0.0" | "" => "127.0.0.1",
        "::" | "[::]" => "::1",
        other => other,
    };
    if host.contains(':') && !host.starts_with('[') {
        format!("http://[{host}]:{port}")
    } else {
        format!("http://{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter()
            .map(|s| s.parse().expect("an address"))
            .collect()
    }

    fn endpoints(urls: &[ServerUrl]) -> Vec<&str> {
        urls.iter().map(|u| u.endpoint.as_str()).collect()
    }

    #[test]
    fn a_specific_address_is_its_own_url() {
        let urls = reachable("127.0.0.1:9324".parse().unwrap(), &ips(&["10.0.0.5"]));
        assert_eq!(
            urls,
            vec![ServerUrl {
                endpoint: "http://127.0.0.1:9324".into(),
                console: "http://127.0.0.1:9324/_localsqs/ui/".into(),
            }]
        );
        let v6 = reachable("[fd00::7]:4566".parse().unwrap(), &[]);
        assert_eq!(endpoints(&v6), ["http://[fd00::7]:4566"]);
        assert_eq!(v6[0].console, "http://[fd00::7]:4566/_localsqs/ui/");
    }

    #[test]
    fn the_ipv4_wildcard_becomes_loopback_then_the_machines_ipv4_addresses() {
        let interfaces = ips(&["127.0.0.1", "10.0.0.5", "fd00::1", "172.17.0.2", "10.0.0.5"]);
        let urls = reachable("0.0.0.0:9324".parse().unwrap(), &interfaces);
        assert_eq!(
            endpoints(&urls),
            [
                "http://127.0.0.1:9324",
                "http://10.0.0.5:9324",
                "http://172.17.0.2:9324"
            ]
        );
        assert!(urls.iter().all(|u| !u.endpoint.contains("0.0.0.0")));
    }

    #[test]
    fn the_ipv6_wildcard_skips_link_local_and_ipv4() {
        let interfaces = ips(&["::1", "fe80::1", "10.0.0.5", "2001:db8::5"]);
        let urls = reachable("[::]:9324".parse().unwrap(), &interfaces);
        assert_eq!(
            endpoints(&urls),
            ["http://[::1]:9324", "http://[2001:db8::5]:9324"]
        );
    }

    #[test]
    fn a_machine_without_interfaces_still_has_loopback() {
        let urls = reachable("0.0.0.0:80".parse().unwrap(), &[]);
        assert_eq!(endpoints(&urls), ["http://127.0.0.1:80"]);
        assert_eq!(urls[0].console, "http://127.0.0.1:80/_localsqs/ui/");
    }
}
