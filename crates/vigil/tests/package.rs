//! The Debian package: `scripts/package-deb.sh` builds it around the binary
//! under test; it holds the binary, the service's configuration (which
//! vigil accepts), the systemd unit, logrotate's file and the man page. As
//! root (CI), it is installed with dpkg, the unit passes `systemd-analyze
//! verify`, and it is purged again; a vigil package already installed is
//! left alone.

use std::path::Path;
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_package_installs_and_its_unit_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("vigil-deb-{}", std::process::id()));
    let deb = run(Command::new(root.join("scripts/package-deb.sh")).arg(env!("CARGO_BIN_EXE_vigil")).arg(&out));
    let deb = deb.trim();
    let contents = run(Command::new("dpkg-deb").args(["-c", deb]));
    for path in [
        "./usr/bin/vigil",
        "./etc/vigil/vigil.yaml",
        "./lib/systemd/system/vigil.service",
        "./etc/logrotate.d/vigil",
        "./etc/default/vigil",
        "./usr/share/man/man8/vigil.8.gz",
    ] {
        assert!(contents.lines().any(|l| l.ends_with(path)), "{path} missing:\n{contents}");
    }
    let info = run(Command::new("dpkg-deb").args(["-f", deb, "Package", "Version"]));
    assert!(info.contains("Package: vigil"), "{info}");
    // The packaged configuration is one vigil accepts (its rules are the
    // operator's to put in /var/lib/vigil/rules: an empty set here).
    let x = out.join("x");
    run(Command::new("dpkg-deb").args(["-x", deb]).arg(&x));
    std::fs::write(out.join("empty.rules"), "").unwrap();
    run(Command::new(env!("CARGO_BIN_EXE_vigil"))
        .arg("-T")
        .arg("-c")
        .arg(x.join("etc/vigil/vigil.yaml"))
        .arg("-S")
        .arg(out.join("empty.rules"))
        .arg("-l")
        .arg(&out));
    let installed = Command::new("dpkg").args(["-s", "vigil"]).output().is_ok_and(|o| o.status.success());
    let is_root = run(Command::new("id").arg("-u")).trim() == "0";
    if is_root && !installed {
        run(Command::new("dpkg").args(["-i", deb]));
        let verified = Command::new("systemd-analyze").args(["verify", "/lib/systemd/system/vigil.service"]).output();
        let user = run(Command::new("id").arg("vigil"));
        run(Command::new("dpkg").args(["--purge", "vigil"]));
        let verified = verified.expect("systemd-analyze (Debian's systemd)");
        assert!(
            verified.status.success(),
            "systemd-analyze verify: {}{}",
            String::from_utf8_lossy(&verified.stdout),
            String::from_utf8_lossy(&verified.stderr)
        );
        assert!(user.contains("(vigil)"), "{user}");
    }
    std::fs::remove_dir_all(&out).ok();
}
