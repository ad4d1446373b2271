//! `af-packet` and `nfq`: how live traffic is captured and how an inline
//! sensor gives its verdicts. Values are checked here; opening sockets is
//! the capture crate's business.

use crate::read::{Errors, Section};

/// One `af-packet` list item, after the `interface: default` item's values
/// have filled in what it leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AfPacketIface {
    /// `interface`.
    pub interface: String,
    /// `threads`: sockets (and workers) on this interface; `None` for `auto`
    /// (one per CPU).
    pub threads: Option<usize>,
    /// `cluster-id`: the fanout group.
    pub cluster_id: u16,
    /// `cluster-type`, as written (`cluster_flow`, `cluster_cpu`, ...).
    pub cluster_type: String,
    /// `defrag`: fragments reassembled before the fanout hash.
    pub defrag: bool,
    /// `use-mmap`.
    pub use_mmap: bool,
    /// `mmap-locked`.
    pub mmap_locked: bool,
    /// `ring-size`: frames per socket.
    pub ring_size: u32,
    /// `block-size`: bytes per ring block.
    pub block_size: u32,
    /// `block-timeout`: ms.
    pub block_timeout: u32,
    /// `buffer-size`: the socket buffer without mmap.
    pub buffer_size: u32,
    /// `disable-promisc`.
    pub disable_promisc: bool,
    /// `bpf-filter`.
    pub bpf_filter: Option<String>,
    /// `copy-mode`: `ips`, `tap`, or none.
    pub copy_mode: Option<String>,
    /// `copy-iface`: the peer interface of an inline bridge.
    pub copy_iface: Option<String>,
    /// `checksum-checks`: `kernel`, `yes`, `no`, `auto`.
    pub checksum_checks: Option<String>,
}

impl AfPacketIface {
    /// Suricata's values when neither the item nor the default item sets a key.
    pub fn builtin(interface: &str) -> Self {
        AfPacketIface {
            interface: interface.to_string(),
            threads: None,
            cluster_id: 99,
            cluster_type: "cluster_flow".into(),
            defrag: true,
            use_mmap: true,
            mmap_locked: false,
            ring_size: 2048,
            block_size: 128 * 1024,
            block_timeout: 10,
            buffer_size: 0,
            disable_promisc: false,
            bpf_filter: None,
            copy_mode: None,
            copy_iface: None,
            checksum_checks: None,
        }
    }

    fn read(sec: &Section<'_>, base: &AfPacketIface, errs: &mut Errors) -> AfPacketIface {
        let threads = match sec.scalar("threads", errs) {
            Some((v, _)) if v.eq_ignore_ascii_case("auto") => None,
            Some(_) => sec.int_in("threads", 1, 1024, errs).map(|v| v as usize).or(base.threads),
            None => base.threads,
        };
        let cluster_type = sec.string("cluster-type", errs).unwrap_or_else(|| base.cluster_type.clone());
        const TYPES: [&str; 6] =
            ["cluster_flow", "cluster_round_robin", "cluster_cpu", "cluster_qm", "cluster_rollover", "cluster_random"];
        if !TYPES.contains(&cluster_type.as_str()) {
            sec.error(
                "cluster-type",
                errs,
                format!("unknown cluster type {cluster_type:?}: use one of {}", TYPES.join(", ")),
            );
        }
        let copy_mode = sec.string("copy-mode", errs).or_else(|| base.copy_mode.clone());
        if let Some(m) = &copy_mode {
            if !matches!(m.as_str(), "ips" | "tap" | "none") {
                sec.error("copy-mode", errs, format!("unknown copy mode {m:?}: use ips, tap or none"));
            }
        }
        AfPacketIface {
            interface: sec.string("interface", errs).unwrap_or_default(),
            threads,
            cluster_id: sec.int_in("cluster-id", 0, 65535, errs).map_or(base.cluster_id, |v| v as u16),
            cluster_type,
            defrag: sec.bool("defrag", base.defrag, errs),
            use_mmap: sec.bool("use-mmap", base.use_mmap, errs),
            mmap_locked: sec.bool("mmap-locked", base.mmap_locked, errs),
            ring_size: sec.int_in("ring-size", 1, 1 << 24, errs).map_or(base.ring_size, |v| v as u32),
            block_size: sec.size_max("block-size", 1 << 30, errs).map_or(base.block_size, |v| v as u32),
            block_timeout: sec.int_in("block-timeout", 1, 60_000, errs).map_or(base.block_timeout, |v| v as u32),
            buffer_size: sec.size_max("buffer-size", 1 << 31, errs).map_or(base.buffer_size, |v| v as u32),
            disable_promisc: sec.bool("disable-promisc", base.disable_promisc, errs),
            bpf_filter: sec.string("bpf-filter", errs).or_else(|| base.bpf_filter.clone()),
            copy_mode: copy_mode.filter(|m| m != "none"),
            copy_iface: sec.string("copy-iface", errs).or_else(|| base.copy_iface.clone()),
            checksum_checks: sec.string("checksum-checks", errs).or_else(|| base.checksum_checks.clone()),
        }
    }
}

/// The `af-packet` section: the listed interfaces, and the `default` item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AfPacket {
    pub interfaces: Vec<AfPacketIface>,
    pub default: AfPacketIface,
}

impl Default for AfPacket {
    fn default() -> Self {
        AfPacket { interfaces: Vec::new(), default: AfPacketIface::builtin("default") }
    }
}

impl AfPacket {
    /// What the stock `suricata.yaml` lists: `eth0` in fanout group 99.
    pub fn stock() -> Self {
        AfPacket { interfaces: vec![AfPacketIface::builtin("eth0")], default: AfPacketIface::builtin("default") }
    }

    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> AfPacket {
        let builtin = AfPacketIface::builtin("default");
        let default = sec
            .children()
            .find(|item| item.node.and_then(|n| n.child_value("interface")) == Some("default"))
            .map(|item| AfPacketIface::read(&item, &builtin, errs))
            .unwrap_or(builtin);
        let interfaces = sec
            .children()
            .filter(|item| item.node.and_then(|n| n.child_value("interface")) != Some("default"))
            .map(|item| AfPacketIface::read(&item, &default, errs))
            .filter(|i| !i.interface.is_empty())
            .collect();
        AfPacket { interfaces, default }
    }

    /// The settings for `iface`: its own item, else the default item's.
    pub fn for_iface(&self, iface: &str) -> AfPacketIface {
        self.interfaces
            .iter()
            .find(|i| i.interface == iface)
            .cloned()
            .unwrap_or_else(|| AfPacketIface { interface: iface.to_string(), ..self.default.clone() })
    }
}

/// The `nfq` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nfq {
    /// `mode`: `accept`, `repeat` or `route`.
    pub mode: String,
    /// `repeat-mark` / `repeat-mask`.
    pub repeat_mark: u32,
    pub repeat_mask: u32,
    /// `route-queue`.
    pub route_queue: u16,
    /// `batchcount`: verdicts sent together.
    pub batchcount: u32,
    /// `fail-open`: the kernel accepts packets when the queue is full.
    pub fail_open: bool,
    /// `queue-maxlen` (vigil's own key; the kernel's default otherwise).
    pub queue_maxlen: u32,
}

impl Default for Nfq {
    fn default() -> Self {
        Nfq {
            mode: "accept".into(),
            repeat_mark: 1,
            repeat_mask: 1,
            route_queue: 2,
            batchcount: 1,
            fail_open: false,
            queue_maxlen: 4096,
        }
    }
}

impl Nfq {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Nfq {
        let d = Nfq::default();
        let mode = sec.string("mode", errs).unwrap_or(d.mode.clone());
        if !matches!(mode.as_str(), "accept" | "repeat" | "route") {
            sec.error("mode", errs, format!("unknown nfq mode {mode:?}: use accept, repeat or route"));
        }
        let u32_key = |key: &str, def: u32, errs: &mut Errors| {
            sec.int_in(key, 0, i64::from(u32::MAX), errs).map_or(def, |v| v as u32)
        };
        Nfq {
            repeat_mark: u32_key("repeat-mark", d.repeat_mark, errs),
            repeat_mask: u32_key("repeat-mask", d.repeat_mask, errs),
            route_queue: sec.int_in("route-queue", 0, 65535, errs).map_or(d.route_queue, |v| v as u16),
            batchcount: sec.int_in("batchcount", 1, 65535, errs).map_or(d.batchcount, |v| v as u32),
            fail_open: sec.bool("fail-open", d.fail_open, errs),
            queue_maxlen: u32_key("queue-maxlen", d.queue_maxlen, errs),
            mode,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, ConfigTree};

    fn config(yaml: &str) -> (Config, Vec<String>) {
        let tree = ConfigTree::parse_str(yaml, "test.yaml").unwrap();
        let (c, errs, _) = Config::from_tree(&tree);
        (c, errs.iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn interfaces_take_the_default_items_values() {
        let (c, errs) = config(
            "af-packet:\n  - interface: eth0\n    threads: 4\n    cluster-id: 98\n    copy-mode: ips\n    copy-iface: eth1\n  - interface: default\n    ring-size: 4096\n    defrag: no\n    threads: auto\nnfq:\n  mode: repeat\n  repeat-mark: 2\n  fail-open: yes\n",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let eth0 = c.af_packet.for_iface("eth0");
        assert_eq!((eth0.threads, eth0.cluster_id, eth0.ring_size, eth0.defrag), (Some(4), 98, 4096, false));
        assert_eq!((eth0.copy_mode.as_deref(), eth0.copy_iface.as_deref()), (Some("ips"), Some("eth1")));
        let other = c.af_packet.for_iface("eth7");
        assert_eq!((other.interface.as_str(), other.threads, other.cluster_id), ("eth7", None, 99));
        assert_eq!((c.nfq.mode.as_str(), c.nfq.repeat_mark, c.nfq.fail_open), ("repeat", 2, true));
    }

    #[test]
    fn bad_values_name_their_key() {
        let (_, errs) = config("af-packet:\n  - interface: eth0\n    cluster-type: cluster_magic\n    ring-size: 0\n");
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0].contains("af-packet.0.cluster-type") || errs.iter().any(|e| e.contains("cluster-type")),
            "{errs:?}"
        );
    }
}
