//! `decoder` (tunnels, layer limits) and the top-level `vlan` switch.

use crate::read::{Errors, Section};

/// `decoder`, plus `vlan.use-for-tracking`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoder {
    /// `decoder.teredo`.
    pub teredo: TunnelDecoder,
    /// `decoder.vxlan`.
    pub vxlan: TunnelDecoder,
    /// `decoder.geneve`.
    pub geneve: TunnelDecoder,
    /// `decoder.erspan.typeI.enabled`, if set. Suricata (since 6.0)
    /// always decodes ERSPAN Type I and only warns that this key is
    /// ignored.
    pub erspan_type1_enabled: Option<bool>,
    /// `decoder.vntag.enabled`: decode VN-Tag (802.1Qbh). Default false.
    pub vntag_enabled: bool,
    /// `decoder.max-layers`: most decoded layers per packet (0-255).
    /// Default 16.
    pub max_layers: u8,
    /// `decoder.recursion-level.use-for-tracking`: the tunnel depth is
    /// part of the flow key. Default true.
    pub recursion_level_use_for_tracking: bool,
    /// `vlan.use-for-tracking` (top-level `vlan:` section): VLAN ids are
    /// part of the flow key. Default true.
    pub vlan_use_for_tracking: bool,
}

/// A UDP-port-selected tunnel decoder (`teredo`, `vxlan`, `geneve`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunnelDecoder {
    /// `enabled`. Default true.
    pub enabled: bool,
    /// `ports`, as written (`$VXLAN_PORTS`, `[8472, 4789]`, `any`): the
    /// rules layer resolves variables and port syntax. `None` when absent;
    /// see [`Decoder::effective_ports`].
    pub ports: Option<String>,
}

impl Default for Decoder {
    /// The stock `suricata.yaml` values.
    fn default() -> Self {
        let t = |ports: &str| TunnelDecoder { enabled: true, ports: Some(ports.into()) };
        Decoder {
            teredo: t("$TEREDO_PORTS"),
            vxlan: t("$VXLAN_PORTS"),
            geneve: t("$GENEVE_PORTS"),
            ..Decoder::builtin()
        }
    }
}

impl Decoder {
    /// Suricata's values when the keys are absent.
    pub(crate) fn builtin() -> Self {
        let t = TunnelDecoder { enabled: true, ports: None };
        Decoder {
            teredo: t.clone(),
            vxlan: t.clone(),
            geneve: t,
            erspan_type1_enabled: None,
            vntag_enabled: false,
            max_layers: 16,
            recursion_level_use_for_tracking: true,
            vlan_use_for_tracking: true,
        }
    }

    /// The port expression a tunnel decoder uses: its `ports`, or
    /// Suricata's default when absent (Teredo `any`, VXLAN `4789`,
    /// Geneve `6081`). `name` is `teredo`, `vxlan` or `geneve`.
    pub fn effective_ports(&self, name: &str) -> Option<&str> {
        let (t, default) = match name {
            "teredo" => (&self.teredo, "any"),
            "vxlan" => (&self.vxlan, "4789"),
            "geneve" => (&self.geneve, "6081"),
            _ => return None,
        };
        Some(t.ports.as_deref().unwrap_or(default))
    }

    pub(crate) fn read(sec: &Section<'_>, vlan: &Section<'_>, errs: &mut Errors) -> Decoder {
        let d = Decoder::builtin();
        let tunnel = |name: &str, errs: &mut Errors| {
            let s = sec.child(name);
            TunnelDecoder { enabled: s.bool("enabled", true, errs), ports: s.string("ports", errs) }
        };
        Decoder {
            teredo: tunnel("teredo", errs),
            vxlan: tunnel("vxlan", errs),
            geneve: tunnel("geneve", errs),
            erspan_type1_enabled: sec.child("erspan").child("typeI").opt_bool("enabled", errs),
            vntag_enabled: sec.child("vntag").bool("enabled", d.vntag_enabled, errs),
            max_layers: sec.int_in("max-layers", 0, 255, errs).map_or(d.max_layers, |v| v as u8),
            recursion_level_use_for_tracking: sec.child("recursion-level").bool(
                "use-for-tracking",
                d.recursion_level_use_for_tracking,
                errs,
            ),
            vlan_use_for_tracking: vlan.bool("use-for-tracking", d.vlan_use_for_tracking, errs),
        }
    }
}
