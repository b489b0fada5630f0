//! A slave's description (the `.dcpx` a master reads) from who it is and
//! what it runs.

use std::net::SocketAddrV4;

use tandem_config::DcpEndpoint;

use super::member::Member;
use crate::description::Description;

/// Who a slave is and where it listens.
#[derive(Clone, Debug)]
pub struct Identity {
    /// Its name.
    pub name: String,
    /// Its UUID.
    pub uuid: [u8; 16],
    /// Where it listens, and how long it waits for its master.
    pub endpoint: DcpEndpoint,
}

/// The DCP slave description of `member` served as `identity`, at the
/// configured control port.
pub fn describe(identity: &Identity, member: &dyn Member) -> Description {
    describe_at(identity, member, identity.endpoint.control.port())
}

/// The description of `member` served as `identity` on control port `port`.
pub(super) fn describe_at(identity: &Identity, member: &dyn Member, port: u16) -> Description {
    let endpoint = identity.endpoint;
    Description {
        name: identity.name.clone(),
        uuid: identity.uuid,
        op_modes: member.op_modes().to_vec(),
        fixed_resolution: None,
        recommended_resolution: whole_per_second(member.micro_step()),
        control: Some(SocketAddrV4::new(endpoint.host, port)),
        heartbeat: Some(endpoint.master_timeout),
        ports: member.ports().clone(),
    }
}

/// `(1, n)` when `step` is `1 / n` s for a whole `n`: the resolution at
/// which one step count is one micro step.
fn whole_per_second(step: f64) -> Option<(u32, u32)> {
    let n = (1.0 / step).round();
    ((1.0..=u32::MAX as f64).contains(&n) && (n * step - 1.0).abs() < 1e-9).then_some((1, n as u32))
}
