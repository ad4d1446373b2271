//! `app-layer`: which protocols are detected and parsed, and the settings
//! vigil reads of them. A value Suricata refuses to start on (an
//! `enabled` that is neither a boolean nor `detection-only`, a body limit
//! that is not a size) is a fatal error here too.

use crate::read::{Errors, Section};

/// `app-layer.protocols.<name>.enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProtoSwitch {
    /// Absent, or `yes`.
    #[default]
    On,
    Off,
    /// `detection-only`: detected, not parsed.
    DetectionOnly,
}

impl ProtoSwitch {
    fn parse(s: &str) -> Result<ProtoSwitch, String> {
        if s == "detection-only" {
            return Ok(ProtoSwitch::DetectionOnly);
        }
        match crate::value::parse_bool(s) {
            Some(true) => Ok(ProtoSwitch::On),
            Some(false) => Ok(ProtoSwitch::Off),
            None => Err(format!("invalid value {s:?} (expected yes, no or detection-only)")),
        }
    }

    pub fn enabled(self) -> bool {
        self != ProtoSwitch::Off
    }
}

/// `detection-ports`: the ports a protocol whose signature is weak is
/// probed on: `dp`, the server's, and `sp`, the client's; each a list of
/// ports and `low:high` ranges (`139, 445`, `[1024:65535]`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DetectionPorts {
    pub dp: Vec<(u16, u16)>,
    pub sp: Vec<(u16, u16)>,
}

impl DetectionPorts {
    fn parse_list(v: &str) -> Result<Vec<(u16, u16)>, String> {
        let inner = v.trim().trim_start_matches('[').trim_end_matches(']');
        let mut out = Vec::new();
        for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let port = |s: &str| s.trim().parse::<u16>().map_err(|_| format!("invalid port {s:?} in {v:?}"));
            let range = match item {
                "any" => (0, u16::MAX),
                _ => match item.split_once(':') {
                    Some((lo, hi)) => (port(lo)?, port(hi)?),
                    None => (port(item)?, port(item)?),
                },
            };
            if range.0 > range.1 {
                return Err(format!("port range {item:?} runs backwards"));
            }
            out.push(range);
        }
        if out.is_empty() {
            return Err(format!("no port in {v:?}"));
        }
        Ok(out)
    }

    fn read(sec: &Section<'_>, errs: &mut Errors) -> Option<DetectionPorts> {
        let s = sec.child("detection-ports");
        s.node?;
        Some(DetectionPorts {
            dp: s.convert("dp", errs, DetectionPorts::parse_list).unwrap_or_default(),
            sp: s.convert("sp", errs, DetectionPorts::parse_list).unwrap_or_default(),
        })
    }
}

/// One protocol's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppProtoConf {
    pub name: String,
    pub enabled: ProtoSwitch,
    /// Whether `enabled` was written (a protocol off by default stays off
    /// when its section leaves it out).
    pub enabled_set: bool,
    /// The per-transport switches (`dns.tcp.enabled`, `dns.udp.enabled`),
    /// when written: they win over `enabled` for their transport.
    pub tcp_enabled: Option<ProtoSwitch>,
    pub udp_enabled: Option<ProtoSwitch>,
    /// `encryption-handling`, as written (checked by the engine, which knows the values).
    pub encryption_handling: Option<String>,
    /// `detection-ports`, and the per-transport ones (`dns.tcp.detection-ports`).
    pub detection_ports: Option<DetectionPorts>,
    pub tcp_detection_ports: Option<DetectionPorts>,
    pub udp_detection_ports: Option<DetectionPorts>,
    /// `stream-depth`: the protocol's own reassembly depth (0: all).
    pub stream_depth: Option<u64>,
}

/// `app-layer`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AppLayer {
    /// Every protocol the section names, in file order.
    pub protocols: Vec<AppProtoConf>,
    /// `protocols.http.libhtp.default-config.request-body-limit` and
    /// `response-body-limit`, in bytes.
    pub http_request_body_limit: Option<u64>,
    pub http_response_body_limit: Option<u64>,
}

impl AppLayer {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> AppLayer {
        let mut out = AppLayer::default();
        let protocols = sec.child("protocols");
        let switch = |s: &Section<'_>, key: &str, errs: &mut Errors| {
            let before = errs.len();
            let v = s.convert(key, errs, ProtoSwitch::parse).unwrap_or_default();
            // Suricata refuses to start on it.
            if errs.len() > before {
                if let Some(e) = errs.pop() {
                    errs.push(e.fatal());
                }
            }
            v
        };
        for p in protocols.children() {
            let Some(node) = p.node else { continue };
            let transport = |t: &str, errs: &mut Errors| {
                let s = p.child(t);
                s.child("enabled").node.is_some().then(|| switch(&s, "enabled", errs))
            };
            out.protocols.push(AppProtoConf {
                name: node.name().to_string(),
                enabled: switch(&p, "enabled", errs),
                enabled_set: p.child("enabled").node.is_some(),
                tcp_enabled: transport("tcp", errs),
                udp_enabled: transport("udp", errs),
                encryption_handling: p.string("encryption-handling", errs),
                detection_ports: DetectionPorts::read(&p, errs),
                tcp_detection_ports: DetectionPorts::read(&p.child("tcp"), errs),
                udp_detection_ports: DetectionPorts::read(&p.child("udp"), errs),
                stream_depth: p.size_max("stream-depth", u64::MAX, errs),
            });
        }
        let http = protocols.child("http").child("libhtp").child("default-config");
        out.http_request_body_limit = http.size_max("request-body-limit", u64::MAX, errs);
        out.http_response_body_limit = http.size_max("response-body-limit", u64::MAX, errs);
        out
    }

    /// The settings of protocol `name`, if the section names it.
    pub fn protocol(&self, name: &str) -> Option<&AppProtoConf> {
        self.protocols.iter().find(|p| p.name == name)
    }

    /// Whether protocol `name` runs (absent: yes, as in Suricata).
    pub fn enabled(&self, name: &str) -> bool {
        self.protocol(name).is_none_or(|p| p.enabled.enabled())
    }

    /// The ports protocol `name` is probed on over TCP (`tcp: true`) or
    /// UDP: that transport's `detection-ports` when written, else its own.
    pub fn detection_ports(&self, name: &str, tcp: bool) -> Option<&DetectionPorts> {
        let p = self.protocol(name)?;
        let own = if tcp { p.tcp_detection_ports.as_ref() } else { p.udp_detection_ports.as_ref() };
        own.or(p.detection_ports.as_ref())
    }

    /// Whether protocol `name` runs over TCP (`tcp: true`) or UDP: its
    /// switch for that transport when written, else its own.
    pub fn enabled_on(&self, name: &str, tcp: bool) -> bool {
        self.enabled_on_or(name, tcp, true)
    }

    /// [`AppLayer::enabled_on`] for a protocol whose default, when no
    /// switch is written, is `default`.
    pub fn enabled_on_or(&self, name: &str, tcp: bool, default: bool) -> bool {
        let Some(p) = self.protocol(name) else { return default };
        let own = if tcp { p.tcp_enabled } else { p.udp_enabled };
        match own {
            Some(s) => s.enabled(),
            None if p.enabled_set => p.enabled.enabled(),
            None => default,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, ConfigTree};

    fn config(yaml: &str) -> (Config, Vec<crate::ConfigError>) {
        let tree = ConfigTree::parse_str(yaml, "s.yaml").unwrap();
        let (c, errs, _) = Config::from_tree(&tree);
        (c, errs)
    }

    #[test]
    fn protocols_off_by_default_and_their_own_depths() {
        let (c, errs) = config(
            "app-layer:\n  protocols:\n    pgsql:\n      stream-depth: 0\n    modbus:\n      enabled: yes\n      stream-depth: 64kb\n",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let a = &c.app_layer;
        // Named without a switch: the protocol's own default holds.
        assert!(!a.enabled_on_or("pgsql", true, false) && a.enabled_on_or("pgsql", true, true));
        assert!(a.enabled_on_or("modbus", true, false));
        assert!(!a.enabled_on_or("dnp3", true, false));
        assert_eq!(a.protocol("pgsql").unwrap().stream_depth, Some(0));
        assert_eq!(a.protocol("modbus").unwrap().stream_depth, Some(64 << 10));
    }

    #[test]
    fn switches_limits_and_what_suricata_refuses() {
        let (c, errs) = config(
            "app-layer:\n  protocols:\n    http:\n      enabled: detection-only\n      libhtp:\n        default-config:\n          request-body-limit: 4kb\n    tls:\n      enabled: no\n      encryption-handling: bypass\n    dns:\n      tcp:\n        enabled: no\n",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let a = &c.app_layer;
        assert!(a.enabled("http") && !a.enabled("tls") && a.enabled("ssh"));
        assert_eq!(a.protocol("tls").unwrap().encryption_handling.as_deref(), Some("bypass"));
        assert!(!a.enabled_on("dns", true) && a.enabled_on("dns", false));
        assert_eq!(a.http_request_body_limit, Some(4096));
        let (_, errs) = config(
            "app-layer:\n  protocols:\n    http:\n      enabled: maybe\n      libhtp:\n        default-config:\n          response-body-limit: lots\n",
        );
        let fatal: Vec<String> = errs.iter().filter(|e| e.fatal).map(ToString::to_string).collect();
        assert_eq!(fatal.len(), 2, "{errs:?}");
        assert!(
            fatal[0].starts_with("s.yaml:4:16: app-layer.protocols.http.enabled: invalid value \"maybe\""),
            "{fatal:?}"
        );
        assert!(fatal[1].contains("response-body-limit"), "{fatal:?}");
    }

    #[test]
    fn detection_ports_per_protocol_and_transport() {
        let (c, errs) = config(
            "app-layer:\n  protocols:\n    smb:\n      detection-ports:\n        dp: 139, 445\n    dns:\n      tcp:\n        detection-ports:\n          dp: 53\n      udp:\n        detection-ports:\n          dp: \"[53, 5300:5399]\"\n          sp: any\n",
        );
        assert!(errs.is_empty(), "{errs:?}");
        let a = &c.app_layer;
        assert_eq!(a.detection_ports("smb", true).unwrap().dp, [(139, 139), (445, 445)]);
        assert_eq!(a.detection_ports("dns", true).unwrap().dp, [(53, 53)]);
        let udp = a.detection_ports("dns", false).unwrap();
        assert_eq!((udp.dp.as_slice(), udp.sp.as_slice()), (&[(53, 53), (5300, 5399)][..], &[(0, 65535)][..]));
        assert!(a.detection_ports("ssh", true).is_none());
        let (_, errs) = config("app-layer:\n  protocols:\n    dns:\n      detection-ports:\n        dp: 70000\n");
        assert!(errs.iter().any(|e| e.to_string().contains("app-layer.protocols.dns.detection-ports.dp")), "{errs:?}");
    }
}
