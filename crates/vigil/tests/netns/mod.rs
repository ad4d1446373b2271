//! Network namespaces for tests that send traffic: made by the test, joined
//! by veth pairs, addressed from 198.18.0.0/15, removed when dropped (also
//! when an assertion fails). Tests that cannot make them (not root, no
//! `ip`) print why and skip.

#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};

/// Namespaces named `v<tag>-<name>-<pid>`, deleted on drop.
pub struct Lab {
    tag: String,
    names: Vec<String>,
}

impl Lab {
    /// A lab, or `None` with a message on stderr when this machine cannot make one.
    pub fn new(tag: &str) -> Option<Lab> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: live tests need root to create network namespaces");
            return None;
        }
        let lab = Lab { tag: tag.to_string(), names: Vec::new() };
        let probe = format!("v{tag}-probe-{}", std::process::id());
        if let Err(e) = sh(&format!("ip netns add {probe}")) {
            eprintln!("skipped: cannot create network namespaces: {e}");
            return None;
        }
        let _ = sh(&format!("ip netns del {probe}"));
        Some(lab)
    }

    /// Creates namespace `name` (loopback up, IPv6 off so no neighbour
    /// discovery adds packets the test did not send).
    pub fn ns(&mut self, name: &str) -> String {
        let full = format!("v{}-{name}-{}", self.tag, std::process::id());
        sh(&format!("ip netns add {full}")).unwrap();
        self.names.push(full.clone());
        self.run(&full, "ip link set lo up");
        self.run(&full, "sysctl -q -w net.ipv6.conf.all.disable_ipv6=1");
        self.run(&full, "sysctl -q -w net.ipv6.conf.default.disable_ipv6=1");
        full
    }

    /// A veth pair between two namespaces, both ends up, offloads off (so
    /// captured frames carry their real checksums and sizes).
    pub fn veth(&self, a_ns: &str, a: &str, b_ns: &str, b: &str) {
        sh(&format!("ip link add {a} netns {a_ns} type veth peer name {b} netns {b_ns}")).unwrap();
        for (ns, dev) in [(a_ns, a), (b_ns, b)] {
            self.run(ns, &format!("ip link set {dev} up"));
            // Best effort: without ethtool the kernel's defaults stay.
            let _ = sh(&format!("ip netns exec {ns} ethtool -K {dev} tx off rx off tso off gso off gro off"));
            let _ = sh(&format!("sysctl -q -w net.ipv6.conf.{dev}.disable_ipv6=1"));
        }
    }

    /// Runs a command in a namespace; panics when it fails.
    pub fn run(&self, ns: &str, cmd: &str) {
        sh(&format!("ip netns exec {ns} {cmd}")).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Starts a program in a namespace.
    pub fn spawn(&self, ns: &str, prog: &str, args: &[&str]) -> Child {
        Command::new("ip")
            .args(["netns", "exec", ns, prog])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn in namespace")
    }

    /// Runs `f` on a thread inside namespace `ns` (its sockets live there).
    pub fn within<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{ns}");
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("namespace file");
            // SAFETY: setns on this thread only, with a namespace file we hold open.
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("namespace thread")
    }

    /// An interface counter (`rx_packets`, `tx_packets`, ...) inside a namespace.
    pub fn counter(&self, ns: &str, dev: &str, name: &str) -> u64 {
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/statistics/{name}")])
            .output()
            .expect("read counter");
        String::from_utf8_lossy(&out.stdout).trim().parse().expect("counter value")
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for n in self.names.iter().rev() {
            let _ = sh(&format!("ip netns del {n}"));
        }
    }
}

pub fn sh(cmd: &str) -> Result<(), String> {
    let mut parts = cmd.split_whitespace();
    let prog = parts.next().unwrap_or_default();
    let out = Command::new(prog).args(parts).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// A process started in a namespace, killed if the test ends (or fails)
/// before stopping it: nothing outlives the test.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Stops a child with SIGTERM (vigil's clean stop) and waits for it.
pub fn stop(child: &mut Child) -> String {
    // SAFETY: kill on the pid of a child we own and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait().expect("wait");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(out.success(), "vigil exited with {out}: {err}");
    err
}
