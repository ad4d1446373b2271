//! vigil reads what the lab writes: the truth's rules alert on exactly the
//! malicious packets, fragments reassemble, every encapsulation decodes.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use vigil_engine::{run_frames, run_offline, MemFrame, RunOptions};
use vigil_lab::gen::options::{Encap, GenOptions, IpMix, MalProto, Profile, SizeSpec};
use vigil_types::LinkType;

/// Alerts in `eve.json` by sid.
fn alerts_by_sid(eve: &Path) -> BTreeMap<u32, u64> {
    let mut by = BTreeMap::new();
    for line in std::fs::read_to_string(eve).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event_type"] == "alert" {
            *by.entry(v["alert"]["signature_id"].as_u64().unwrap() as u32).or_insert(0) += 1;
        }
    }
    by
}

fn mem_frames(o: &GenOptions) -> Vec<MemFrame> {
    let (frames, _) = vigil_lab::gen::frames(o).unwrap();
    frames.into_iter().map(|(ts, data)| MemFrame { ts, linktype: LinkType::Ethernet, data }).collect()
}

/// Every counter of one in-memory pass with the default configuration.
fn counters(dir: &Path, o: &GenOptions) -> BTreeMap<String, u64> {
    let setup = vigil_engine::setup(&RunOptions {
        log_dir: Some(dir.to_path_buf()),
        checksum: Some("all".into()),
        ..Default::default()
    })
    .unwrap();
    run_frames(&setup, &mem_frames(o), false).unwrap().counters.into_iter().collect()
}

#[test]
fn the_truth_rules_alert_on_exactly_the_malicious_packets() {
    let cases = [
        (Profile::Mixed, IpMix::Mix, SizeSpec::Uniform(64, 3000), Encap::None, MalProto::All),
        (Profile::Enterprise, IpMix::V4, SizeSpec::Imix, Encap::Vxlan, MalProto::All),
        (Profile::Udp, IpMix::V6, SizeSpec::Fixed(2000), Encap::Gre, MalProto::Udp),
        (Profile::Icmp, IpMix::V4, SizeSpec::Fixed(600), Encap::Erspan3, MalProto::Icmp),
        (Profile::Synscan, IpMix::Mix, SizeSpec::Imix, Encap::Vlan, MalProto::Tcp),
        (Profile::Mixed, IpMix::V6, SizeSpec::Imix, Encap::Erspan2, MalProto::All),
    ];
    for (i, (profile, ip, size, encap, proto)) in cases.into_iter().enumerate() {
        let dir = common::scratch(&format!("alerts-{i}"));
        let o = common::opts(150, |o| {
            o.seed = 100 + i as u64;
            (o.profile, o.ip, o.size, o.encap, o.malicious_proto, o.malicious) =
                (profile, ip, size, encap, proto, 15.0);
        });
        let (paths, truth) = common::write(&dir, &o);
        assert!(truth.malicious.iter().sum::<u64>() > 0, "case {i}: some malicious packets");
        let opts = RunOptions {
            inputs: vec![paths.pcap.clone()],
            exclusive_rules: vec![paths.rules.clone()],
            checksum: Some("none".into()),
            log_dir: Some(dir.clone()),
            ..Default::default()
        };
        let summary = run_offline(&opts, &mut |_| {}).unwrap();
        let want: BTreeMap<u32, u64> = truth.expected_alerts().into_iter().filter(|(_, n)| *n > 0).collect();
        assert_eq!(alerts_by_sid(&dir.join("eve.json")), want, "case {i}: {profile:?} {ip:?} {encap:?} {proto:?}");
        assert_eq!(summary.alerts, truth.malicious.iter().sum::<u64>());
        assert_eq!(summary.packets, truth.frames);
        assert_eq!(summary.invalid, 0, "case {i}");
    }
}

#[test]
fn without_malicious_flows_nothing_alerts() {
    let dir = common::scratch("clean");
    let (paths, truth) = common::write(&dir, &common::opts(100, |o| o.ip = IpMix::Mix));
    assert_eq!(truth.malicious, [0; 3]);
    let opts = RunOptions {
        inputs: vec![paths.pcap],
        exclusive_rules: vec![paths.rules],
        checksum: Some("none".into()),
        log_dir: Some(dir),
        ..Default::default()
    };
    assert_eq!(run_offline(&opts, &mut |_| {}).unwrap().alerts, 0);
}

#[test]
fn vigil_reassembles_every_fragmented_datagram() {
    let dir = common::scratch("defrag");
    let o = common::opts(120, |o| {
        o.ip = IpMix::Mix;
        o.size = SizeSpec::Uniform(1000, 9000);
        o.mtu = 1500;
    });
    let (_, truth) = vigil_lab::gen::frames(&o).unwrap();
    assert!(truth.fragmented > 50);
    let c = counters(&dir, &o);
    assert_eq!(c["defrag.ipv4.reassembled"] + c["defrag.ipv6.reassembled"], truth.fragmented);
    assert_eq!(c["defrag.ipv4.fragments"] + c["defrag.ipv6.fragments"], truth.fragments);
    assert_eq!(c["decoder.invalid"], 0);
}

/// The network-layer payload of a datagram, reassembled when fragmented:
/// (IP version, protocol, bytes).
fn datagrams(frames: &[(vigil_types::Timestamp, Vec<u8>)]) -> Vec<(u8, u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending: Option<(u8, u8, Vec<u8>)> = None;
    for (_, f) in frames {
        let ip = &f[14..];
        let (version, proto, offset, more, data) = if ip[0] >> 4 == 4 {
            let fo = u16::from_be_bytes([ip[6], ip[7]]);
            assert_eq!(usize::from(u16::from_be_bytes([ip[2], ip[3]])), ip.len());
            (4, ip[9], usize::from(fo & 0x1fff) * 8, fo & 0x2000 != 0, &ip[20..])
        } else if ip[6] == 44 {
            let fo = u16::from_be_bytes([ip[42], ip[43]]);
            (6, ip[40], usize::from(fo & !7), fo & 1 != 0, &ip[48..])
        } else {
            (6, ip[6], 0, false, &ip[40..])
        };
        let p = pending.get_or_insert_with(|| (version, proto, Vec::new()));
        assert_eq!((p.0, p.1, p.2.len()), (version, proto, offset), "fragments in order");
        p.2.extend_from_slice(data);
        if !more {
            out.push(pending.take().unwrap());
        }
    }
    assert!(pending.is_none());
    out
}

#[test]
fn fragments_reassemble_to_the_original_datagrams() {
    let whole = common::opts(100, |o| {
        o.ip = IpMix::Mix;
        o.size = SizeSpec::Uniform(64, 9000);
        o.mtu = 9000;
    });
    let cut = GenOptions { mtu: 1280, ..whole.clone() };
    let (w, tw) = vigil_lab::gen::frames(&whole).unwrap();
    let (c, tc) = vigil_lab::gen::frames(&cut).unwrap();
    assert_eq!(tw.fragmented, 0);
    assert!(tc.fragmented > 20);
    assert!(c.iter().all(|(_, f)| f.len() <= 1280 + 14));
    assert_eq!(tc.datagrams, tw.datagrams);
    assert_eq!(datagrams(&c), datagrams(&w));
}

#[test]
fn every_encapsulation_decodes() {
    for (encap, counter) in [
        (Encap::Vlan, "decoder.vlan"),
        (Encap::Gre, "decoder.gre"),
        (Encap::Erspan2, "decoder.erspan"),
        (Encap::Erspan3, "decoder.erspan"),
        (Encap::Vxlan, "decoder.vxlan"),
    ] {
        let dir = common::scratch(&format!("encap-{encap:?}"));
        let o = common::opts(40, |o| {
            o.ip = IpMix::Mix;
            o.encap = encap;
        });
        let (_, truth) = vigil_lab::gen::frames(&o).unwrap();
        let c = counters(&dir, &o);
        assert_eq!(c[counter], truth.frames, "{encap:?}");
        assert_eq!(c["decoder.invalid"], 0, "{encap:?}");
        assert!(c["decoder.tcp"] > 0 && c["decoder.ipv6"] > 0, "{encap:?}: the inner packets decode");
    }
}
