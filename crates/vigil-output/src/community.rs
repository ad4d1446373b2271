//! Community ID v1 (the Corelight specification Suricata follows): a hash
//! of a flow's endpoints that is the same from either side and in every
//! tool that computes it, so records can be joined across tools.

use sha1::{Digest, Sha1};
use std::net::IpAddr;

const ICMP: u8 = 1;
const ICMPV6: u8 = 58;

/// The type that answers an ICMP(v6) message type, for the two-way kinds.
fn icmp_counterpart(proto: u8, kind: u8) -> Option<u8> {
    let pairs: &[(u8, u8)] = if proto == ICMP {
        &[(8, 0), (13, 14), (15, 16), (10, 9), (17, 18)]
    } else {
        &[(128, 129), (130, 131), (133, 134), (135, 136), (139, 140), (144, 145)]
    };
    pairs.iter().find_map(|&(a, b)| {
        if kind == a {
            Some(b)
        } else if kind == b {
            Some(a)
        } else {
            None
        }
    })
}

fn octets(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    }
}

/// The `community_id` of a flow with endpoints `src` and `dst`: `ports`
/// for TCP/UDP/SCTP, `icmp` (type, code) for ICMP and ICMPv6, neither for
/// other protocols.
pub fn community_id(
    seed: u16,
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    ports: Option<(u16, u16)>,
    icmp: Option<(u8, u8)>,
) -> String {
    let (mut s, mut d) = (octets(src), octets(dst));
    let mut one_way = false;
    let mut ports = ports;
    if matches!(proto, ICMP | ICMPV6) {
        if let Some((kind, code)) = icmp {
            ports = Some(match icmp_counterpart(proto, kind) {
                Some(other) => (u16::from(kind), u16::from(other)),
                None => {
                    one_way = true;
                    (u16::from(kind), u16::from(code))
                }
            });
        }
    }
    let (sp, dp) = ports.unwrap_or((0, 0));
    let (mut sp, mut dp) = (sp, dp);
    if !one_way && (s > d || (s == d && sp > dp)) {
        std::mem::swap(&mut s, &mut d);
        std::mem::swap(&mut sp, &mut dp);
    }
    let mut h = Sha1::new();
    h.update(seed.to_be_bytes());
    h.update(&s);
    h.update(&d);
    h.update([proto, 0]);
    if ports.is_some() {
        h.update(sp.to_be_bytes());
        h.update(dp.to_be_bytes());
    }
    format!("1:{}", crate::base64::encode(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn matches_the_specification_examples() {
        // The specification's baseline values (seed 0).
        let tcp = community_id(0, ip("128.232.110.120"), ip("66.35.250.204"), 6, Some((34855, 80)), None);
        assert_eq!(tcp, "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        let back = community_id(0, ip("66.35.250.204"), ip("128.232.110.120"), 6, Some((80, 34855)), None);
        assert_eq!(back, tcp, "either side gives the same id");
        // With a seed: Suricata's value for this flow (suricata-verify `community-id-ipv4`).
        let seeded = community_id(7, ip("172.26.0.39"), ip("172.217.14.206"), 6, Some((35958, 443)), None);
        assert_eq!(seeded, "1:IwiTNfuO7aCaamMijl+7/X9uLx0=");
        let icmp = community_id(0, ip("192.168.0.89"), ip("192.168.0.1"), 1, None, Some((8, 0)));
        assert_eq!(icmp, "1:X0snYXpgwiv9TZtqg64sgzUn6Dk=");
        let reply = community_id(0, ip("192.168.0.1"), ip("192.168.0.89"), 1, None, Some((0, 0)));
        assert_eq!(reply, icmp, "an echo and its reply are one flow");
    }
}
