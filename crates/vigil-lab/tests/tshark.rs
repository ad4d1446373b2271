//! Wireshark reads every profile and encapsulation without complaint (when
//! `tshark` is installed; otherwise the test says so and passes).

mod common;

use std::process::Command;
use vigil_lab::gen::options::{Encap, IpMix, Profile, SizeSpec};

fn tshark_available() -> bool {
    Command::new("tshark").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `tshark -r pcap -q -z expert`: exit 0, and no error or warning items
/// (malformed packets, bad checksums, sequence problems) in its expert info.
fn assert_clean(pcap: &std::path::Path, what: &str) {
    let out = Command::new("tshark")
        .args([
            "-n",
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
            "-r",
        ])
        .arg(pcap)
        .args(["-q", "-z", "expert"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: tshark failed: {stderr}");
    let stderr_bad = stderr.lines().any(|l| !l.contains("Running as user") && !l.trim().is_empty());
    assert!(!stderr_bad, "{what}: tshark stderr: {stderr}");
    assert!(!stdout.contains("Malformed"), "{what}: malformed packets:\n{stdout}");
    // Errors and warnings, by section; the one warning a SYN scan must give
    // (closed ports answer with RST) is expected.
    let mut section = "";
    for line in stdout.lines() {
        if let Some((name, _)) = line.split_once(" (") {
            if ["Errors", "Warns", "Notes", "Chats", "Comments"].contains(&name) {
                section = name;
                continue;
            }
        }
        let item = line.trim();
        if item.is_empty() || item.starts_with('=') || item.starts_with("Frequency") {
            continue;
        }
        let expected = section == "Warns" && item.ends_with("Connection reset (RST)");
        assert!(!(section == "Errors" || section == "Warns") || expected, "{what}: tshark {section}: {item}\n{stdout}");
    }
}

#[test]
fn tshark_reads_every_profile_and_encapsulation_cleanly() {
    if !tshark_available() {
        eprintln!("tshark not on PATH: skipped");
        return;
    }
    let dir = common::scratch("tshark");
    let mut cases = Vec::new();
    for profile in [Profile::Mixed, Profile::Enterprise, Profile::Synscan, Profile::Udp, Profile::Icmp] {
        cases.push(common::opts(60, |o| {
            o.profile = profile;
            o.ip = IpMix::Mix;
            o.size = SizeSpec::Uniform(64, 4000);
            o.malicious = 10.0;
        }));
    }
    for encap in [Encap::Vlan, Encap::Gre, Encap::Erspan2, Encap::Erspan3, Encap::Vxlan] {
        cases.push(common::opts(30, |o| {
            o.encap = encap;
            o.ip = IpMix::Mix;
            o.size = SizeSpec::Uniform(64, 3000);
        }));
    }
    // One capture holding every case, one after another, keeps it to one tshark run each.
    for (i, o) in cases.iter().enumerate() {
        let sub = dir.join(i.to_string());
        std::fs::create_dir_all(&sub).unwrap();
        let (paths, _) = common::write(&sub, o);
        assert_clean(&paths.pcap, &format!("{:?} {:?}", o.profile, o.encap));
    }
}
