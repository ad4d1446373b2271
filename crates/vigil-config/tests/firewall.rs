//! `firewall.*`: rule files and default policies, resolved by Suricata's
//! precedence, refused where Suricata would not start.

use vigil_config::{Config, ConfigTree, FwPolicy, FwPolicyAction};

fn load(yaml: &str) -> (Config, Vec<String>) {
    let tree = ConfigTree::parse_str(yaml, "t.yaml").unwrap();
    let (c, errors, _) = Config::from_tree(&tree);
    (c, errors.iter().map(|e| e.to_string()).collect())
}

const fn p(action: FwPolicyAction, alert: bool) -> Option<FwPolicy> {
    Some(FwPolicy { action, alert })
}

#[test]
fn policies_resolve_most_specific_first() {
    let (c, errors) = load(
        "firewall:
  enabled: yes
  rule-path: /etc/fw
  rule-files: [a.rules, b.rules]
  policies:
    default-policy: [\"drop:packet\"]
    packet:
      filter: [\"accept:hook\", \"alert\"]
    app:
      default-policy: [\"drop:flow\"]
      tls:
        default-policy: [\"accept:hook\"]
        client-hello-done: [\"accept:tx\"]
",
    );
    assert!(errors.is_empty(), "{errors:?}");
    let r = &c.rules;
    assert!(r.firewall_enabled);
    assert_eq!(r.firewall_rule_path.as_deref(), Some("/etc/fw"));
    assert_eq!(r.firewall_rule_files, vec!["a.rules", "b.rules"]);
    let pol = &r.firewall_policies;
    use FwPolicyAction::*;
    assert_eq!(pol.packet("filter"), p(AcceptHook, true));
    // No packet default: the global one.
    assert_eq!(pol.packet("pre_flow"), p(DropPacket, false));
    assert_eq!(pol.app("tls", "client_hello_done"), p(AcceptTx, false));
    assert_eq!(pol.app("tls", "server_hello"), p(AcceptHook, false));
    assert_eq!(pol.app("dns", "request_started"), p(DropFlow, false));
    assert_eq!(pol.app("tls", "client_hello_done").unwrap().label(), "accept:tx");
    assert_eq!(pol.packet("filter").unwrap().label(), "accept:hook,alert");
    // Sub states (HTTP/2's) take their own settings first.
    let (c, errors) = load(
        "firewall:\n  policies:\n    app:\n      http2:\n        default-policy: [\"drop:flow\"]\n        stream:\n          request-started: [\"accept:hook\"]\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    let pol = &c.rules.firewall_policies;
    assert_eq!(pol.app_sub("http2", "stream", "request_started"), p(AcceptHook, false));
    assert_eq!(pol.app_sub("http2", "global", "request_started"), p(DropFlow, false));
    // Nothing configured: the engine's built-in defaults apply.
    let (c, _) = load("firewall:\n  enabled: no\n");
    assert_eq!(c.rules.firewall_policies.packet("filter"), None);
}

#[test]
fn policies_suricata_refuses_are_errors() {
    for (yaml, key) in [
        ("firewall:\n  policies:\n    packet:\n      filter: [\"accept:tx\"]\n", "filter"),
        ("firewall:\n  policies:\n    default-policy: [\"accept:tx\"]\n", "default-policy"),
        ("firewall:\n  policies:\n    app:\n      dns:\n        request-started: [\"maybe\"]\n", "request-started"),
        ("firewall:\n  policies:\n    app:\n      default-policy: [\"alert\"]\n", "default-policy"),
        (
            "firewall:\n  policies:\n    app:\n      default-policy: [\"drop:flow\", \"accept:hook\"]\n",
            "default-policy",
        ),
    ] {
        let (_, errors) = load(yaml);
        assert!(errors.iter().any(|e| e.contains(key)), "{yaml}: {errors:?}");
    }
}
