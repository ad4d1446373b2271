//! What the decoder is told by configuration (Suricata's `decoder.*` keys,
//! checksum validation). The engine builds it from the validated config.

/// A UDP-carried tunnel the decoder may look into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpTunnel {
    pub enabled: bool,
    /// The ports that select the tunnel; `None` means any port.
    pub ports: Option<Vec<u16>>,
}

impl UdpTunnel {
    pub fn matches(&self, port: u16) -> bool {
        self.enabled && self.ports.as_ref().is_none_or(|p| p.contains(&port))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeConfig {
    /// `decoder.max-layers`: headers one packet may stack before it is refused
    /// (`decoder.too_many_layers`); this also caps tunnel nesting.
    pub max_layers: usize,
    /// Validate IPv4/TCP/UDP/ICMP checksums (`-k` and `checksum-checks`).
    pub validate_checksums: bool,
    /// `decoder.vxlan`, default port 4789.
    pub vxlan: UdpTunnel,
    /// `decoder.geneve`, default port 6081.
    pub geneve: UdpTunnel,
    /// `decoder.teredo`, default port 3544 (either direction).
    pub teredo: UdpTunnel,
    /// `decoder.erspan.typeI.enabled`: GRE 0x88be without a sequence number is
    /// a bare mirrored frame.
    pub erspan_type1: bool,
}

impl Default for DecodeConfig {
    fn default() -> Self {
        DecodeConfig {
            max_layers: 16,
            validate_checksums: true,
            vxlan: UdpTunnel { enabled: true, ports: Some(vec![4789]) },
            geneve: UdpTunnel { enabled: true, ports: Some(vec![6081]) },
            teredo: UdpTunnel { enabled: true, ports: Some(vec![3544]) },
            erspan_type1: true,
        }
    }
}
