//! Same seed and options, same bytes; another seed, other bytes; the
//! capture reads back as written.

mod common;

use vigil_capture::{PcapFile, Source};
use vigil_lab::gen::options::{Encap, IpMix, Profile, SizeSpec};

#[test]
fn the_same_seed_gives_identical_files_and_another_seed_does_not() {
    let dir = common::scratch("determinism");
    let o = common::opts(60, |o| {
        o.seed = 42;
        o.ip = IpMix::Mix;
        o.size = SizeSpec::Uniform(64, 4000);
        o.malicious = 20.0;
    });
    let (a_dir, b_dir, c_dir) = (dir.join("a"), dir.join("b"), dir.join("c"));
    for d in [&a_dir, &b_dir, &c_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    let (a, _) = common::write(&a_dir, &o);
    let (b, _) = common::write(&b_dir, &o);
    let (c, _) = common::write(&c_dir, &vigil_lab::gen::options::GenOptions { seed: 43, ..o.clone() });
    let read = |p: &std::path::Path| std::fs::read(p).unwrap();
    assert_eq!(read(&a.pcap), read(&b.pcap));
    assert_eq!(read(&a.truth), read(&b.truth));
    assert_eq!(read(&a.rules), read(&b.rules));
    assert_ne!(read(&a.pcap), read(&c.pcap));
}

#[test]
fn every_profile_and_encapsulation_is_deterministic_in_memory() {
    for profile in [Profile::Mixed, Profile::Enterprise, Profile::Synscan, Profile::Udp, Profile::Icmp] {
        for encap in [Encap::None, Encap::Vlan, Encap::Gre, Encap::Erspan2, Encap::Erspan3, Encap::Vxlan] {
            let o = common::opts(20, |o| {
                o.profile = profile;
                o.encap = encap;
                o.seed = 9;
            });
            let (a, ta) = vigil_lab::gen::frames(&o).unwrap();
            let (b, tb) = vigil_lab::gen::frames(&o).unwrap();
            assert_eq!(a, b, "{profile:?} {encap:?}");
            assert_eq!(ta, tb);
        }
    }
}

#[test]
fn the_capture_reads_back_with_pcap_file() {
    let dir = common::scratch("readback");
    let o = common::opts(80, |o| {
        o.ip = IpMix::Mix;
        o.size = SizeSpec::Fixed(3000);
        o.encap = Encap::Vxlan;
    });
    let (paths, truth) = common::write(&dir, &o);
    let (frames, _) = vigil_lab::gen::frames(&o).unwrap();
    let mut src = PcapFile::open(&paths.pcap).unwrap();
    let mut n = 0usize;
    let mut last = None;
    while let Some(next) = src.next_packet() {
        let raw = next.expect("no capture error");
        assert_eq!(raw.data, &frames[n].1[..]);
        assert_eq!(raw.ts, frames[n].0);
        assert!(last.is_none_or(|t| t < raw.ts), "times increase");
        last = Some(raw.ts);
        n += 1;
    }
    assert_eq!(n as u64, truth.frames);
    assert_eq!(std::fs::metadata(&paths.pcap).unwrap().len(), 24 + 16 * truth.frames + truth.bytes);
}
