//! The names a server answers to: a request's `Host` must give one.

use std::net::IpAddr;

/// The names a request's `Host` may give: the listening address, and the
/// names given with `--allow-host`.
#[derive(Clone, Debug)]
pub struct Hosts {
    /// The address listened on.
    listen: IpAddr,
    /// Other names (lower case, no trailing dot).
    names: Vec<String>,
}

impl Hosts {
    /// The names of a server listening on `listen`, also called `names`.
    pub fn new(listen: IpAddr, names: &[String]) -> Self {
        let names = names
            .iter()
            .map(|n| n.trim_end_matches('.').to_ascii_lowercase())
            .collect();
        Hosts { listen, names }
    }

    /// Whether `host` (a `Host` header: a name or address, perhaps with a
    /// port) names this server: the address listened on (any address when
    /// listening on all of them), `localhost` when listening on loopback
    /// or on all addresses, or a name given.
    pub fn allows(&self, host: &str) -> bool {
        let name = match host.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(""),
            None => match host.rsplit_once(':') {
                Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
                _ => host,
            },
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if let Ok(ip) = name.parse::<IpAddr>() {
            return self.listen.is_unspecified() || ip == self.listen;
        }
        let local = self.listen.is_loopback() || self.listen.is_unspecified();
        (name == "localhost" && local) || self.names.contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_the_address_localhost_and_the_names_given() {
        let loopback = Hosts::new("127.0.0.1".parse().unwrap(), &["Tandem.Lab.".into()]);
        for ok in [
            "127.0.0.1:8080",
            "127.0.0.1",
            "localhost:8080",
            "LOCALHOST",
            "tandem.lab:80",
            "tandem.lab.",
        ] {
            assert!(loopback.allows(ok), "{ok}");
        }
        for refused in [
            "evil.example",
            "evil.example:8080",
            "127.0.0.2:8080",
            "[::1]:8080",
            "",
            "localhost.evil",
        ] {
            assert!(!loopback.allows(refused), "{refused}");
        }
        let all = Hosts::new("0.0.0.0".parse().unwrap(), &[]);
        assert!(all.allows("192.0.2.7:8080") && all.allows("localhost:1") && !all.allows("evil.example"));
        let lan = Hosts::new("192.0.2.7".parse().unwrap(), &[]);
        assert!(lan.allows("192.0.2.7:8080") && !lan.allows("localhost:8080"));
        let v6 = Hosts::new("::1".parse().unwrap(), &[]);
        assert!(v6.allows("[::1]:8080") && v6.allows("localhost") && !v6.allows("127.0.0.1"));
    }
}
