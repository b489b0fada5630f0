//! A run served as a DCP slave (the `[dcp]` table), and the checks of a
//! DCP slave's addresses that every slave file shares.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::ops::Range;

use toml::Spanned;

use crate::error::ConfigError;

/// Seconds without a request from its master after which a slave gives
/// it up, unless its file says otherwise.
pub const DEFAULT_MASTER_TIMEOUT: f64 = 10.0;

/// A run served as a DCP slave.
#[derive(Clone, Debug, PartialEq)]
pub struct DcpConfig {
    /// The slave's name in its description.
    pub name: String,
    /// Where it listens.
    pub endpoint: DcpEndpoint,
}

/// Where a DCP slave listens, and how long it waits for its master.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcpEndpoint {
    /// The UDP address its control PDUs come to.
    pub control: SocketAddrV4,
    /// The address its description gives masters.
    pub host: Ipv4Addr,
    /// Seconds without a request from its master, once registered, after
    /// which the slave stops and waits for a master again.
    pub master_timeout: f64,
}

/// Makes an error at a span about a key.
pub type ErrorAt<'a> = &'a dyn Fn(Range<usize>, &str, String) -> ConfigError;

/// Checks a slave's `control`, `host` and `master_timeout` keys.
pub fn check_endpoint(
    control: &Spanned<String>,
    host: Option<&Spanned<String>>,
    master_timeout: Option<&Spanned<f64>>,
    error: ErrorAt<'_>,
) -> Result<DcpEndpoint, ConfigError> {
    let address: SocketAddrV4 = control.get_ref().parse().map_err(|_| {
        error(
            control.span(),
            "control",
            format!(
                "\"{}\" is not an IPv4 address and port; write e.g. \"127.0.0.1:47001\"",
                control.get_ref()
            ),
        )
    })?;
    let host = match host {
        Some(h) => h
            .get_ref()
            .parse()
            .map_err(|_| error(h.span(), "host", format!("\"{}\" is not an IPv4 address", h.get_ref())))?,
        None if address.ip().is_unspecified() => Ipv4Addr::LOCALHOST,
        None => *address.ip(),
    };
    let master_timeout = match master_timeout {
        Some(t) if !(0.01..=86400.0).contains(t.get_ref()) => {
            return Err(error(
                t.span(),
                "master_timeout",
                format!("must be from 0.01 to 86400 seconds, found {}", t.get_ref()),
            ))
        }
        Some(t) => *t.get_ref(),
        None => DEFAULT_MASTER_TIMEOUT,
    };
    Ok(DcpEndpoint {
        control: address,
        host,
        master_timeout,
    })
}

/// Checks a slave's name: not empty, without '.' (a federation writes
/// `<slave>.<port>`).
pub fn check_slave_name(name: &Spanned<String>, error: ErrorAt<'_>) -> Result<(), ConfigError> {
    let text = name.get_ref();
    if text.is_empty() || text.contains('.') {
        return Err(error(
            name.span(),
            "name",
            format!("\"{text}\" cannot name a slave: write a name without '.', not empty"),
        ));
    }
    Ok(())
}
