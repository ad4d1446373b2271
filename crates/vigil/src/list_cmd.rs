//! `--list-keywords[=all|csv|NAME]`, `--list-app-layer-protos` and
//! `--list-app-layer-hooks`, in Suricata's formats, each keyword with whether vigil runs it.
//!
//! "Runs" is not a hand-kept list: each keyword is written into small
//! probe rules and handed to the detection engine's own compiler, so the
//! column says what a real run would do with the keyword.

use std::path::Path;
use std::process::ExitCode;
use vigil_detect::compile::DetectExecutor;
use vigil_rules::keywords::suricata8::{SuricataKeyword, KEYWORDS};
use vigil_rules::keywords::{self, Arg, KeywordDef, Kind};
use vigil_rules::{Executor, Loader};

/// What `--list-keywords` was asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Names only (no value).
    Short,
    All,
    Csv,
    /// One keyword, by name.
    One(String),
}

impl Format {
    pub fn parse(value: &str) -> Format {
        match value {
            "" | "short" => Format::Short,
            "all" => Format::All,
            "csv" => Format::Csv,
            name => Format::One(name.to_string()),
        }
    }
}

/// One listed keyword: Suricata's facts where Suricata has it, vigil's
/// table row where vigil knows it.
struct Entry {
    name: &'static str,
    suricata: Option<&'static SuricataKeyword>,
    row: Option<&'static KeywordDef>,
}

impl Entry {
    fn description(&self) -> &'static str {
        self.row.map_or("not known to vigil", |r| r.help)
    }

    fn features(&self) -> String {
        if let Some(s) = self.suricata {
            return s.features.to_string();
        }
        let Some(row) = self.row else { return "none".into() };
        let mut f = Vec::new();
        if row.arg == Arg::None {
            f.push("No option");
        }
        match row.kind {
            Kind::Buffer(_) => f.push("sticky buffer"),
            Kind::Modifier => f.push("content modifier"),
            Kind::Transform => f.push("transform"),
            _ => {}
        }
        if f.is_empty() {
            "none".into()
        } else {
            f.join(":")
        }
    }

    fn doc(&self) -> &'static str {
        self.suricata.map_or("", |s| s.doc)
    }
}

/// Suricata's keywords in its order, then the keywords only vigil has
/// (Suricata-syntax extensions, not aliases and not Snort-only ones).
fn entries() -> Vec<Entry> {
    let mut out: Vec<Entry> =
        KEYWORDS.iter().map(|s| Entry { name: s.name, suricata: Some(s), row: keywords::lookup(s.name) }).collect();
    // A vigil keyword Suricata lists under another spelling is already there.
    let listed: Vec<&str> = out.iter().filter_map(|e| e.row.map(|r| r.canonical)).collect();
    for row in keywords::all() {
        if row.name != row.canonical || matches!(row.kind, Kind::Snort(_)) || listed.contains(&row.name) {
            continue;
        }
        out.push(Entry { name: row.name, suricata: None, row: Some(row) });
    }
    out
}

/// Whether the engine runs `row`, or why not (the compiler's answer for
/// the simplest probe that parses).
pub fn runs(row: &KeywordDef) -> Result<(), String> {
    let loader = Loader::new();
    let values = values(row);
    let mut why = None;
    for value in values {
        let opt = if value.is_empty() { format!("{};", row.name) } else { format!("{}:{value};", row.name) };
        for (before, after) in CONTEXTS {
            for proto in PROTOS {
                let sid = if row.canonical == "sid" { "" } else { " sid:1;" };
                let text = format!("alert {proto} any any -> any any ({before}{opt}{after}{sid})\n");
                let Ok(set) = loader.load_str(&text, "probe") else { continue };
                let Some(rule) = set.rules.first() else { continue };
                match DetectExecutor.check(rule) {
                    Ok(()) => return Ok(()),
                    Err(e) => {
                        why.get_or_insert(e.keywords.join(", "));
                    }
                }
            }
        }
    }
    Err(why.unwrap_or_else(|| "no probe rule parses (no example value)".into()))
}

/// The values a probe tries: none, the keyword's example, else the
/// common shapes (a number, a quoted string, a word).
fn values(row: &KeywordDef) -> Vec<&'static str> {
    let example = sample(row.canonical).or(sample(row.name));
    let shapes = example.map_or(vec!["1", "\"a\"", "a"], |e| vec![e]);
    match row.arg {
        Arg::None => vec![""],
        Arg::Required => shapes,
        Arg::Optional => std::iter::once("").chain(shapes).collect(),
    }
}

/// Where a keyword may stand in a rule: alone, after a content (modifiers,
/// legacy buffers), before one (sticky buffers), in a buffer before one
/// (transforms), between two (relative checks).
const CONTEXTS: &[(&str, &str)] = &[
    ("", ""),
    ("content:\"a\"; ", ""),
    ("", " content:\"a\";"),
    ("http.uri; ", " content:\"a\";"),
    ("http.uri; ", " content:\"A\";"),
    ("content:\"a\"; ", " content:\"b\";"),
    ("flowbits:set,probe; ", ""),
    ("content:\"a\"; base64_decode; ", " content:\"b\";"),
];

const PROTOS: &[&str] = &["ip", "tcp", "udp", "icmp", "http", "tls", "dns", "smb", "dcerpc", "ssh"];

/// An example value for keywords that need one (Suricata's documented
/// forms); the probes try it in each context.
fn sample(name: &str) -> Option<&'static str> {
    Some(match name {
        "msg" => "\"x\"",
        "sid" | "rev" | "gid" | "priority" => "1",
        "classtype" => "misc-activity",
        "reference" => "url,example.com",
        "metadata" => "key value",
        "target" => "dest_ip",
        "requires" => "version >= 7",
        "content" | "uricontent" => "\"a\"",
        "pcre" => "\"/a/\"",
        "depth" | "within" | "offset" | "distance" => "1",
        "fast_pattern" => "only",
        "isdataat" => "1",
        "bsize" | "dsize" | "urilen" => "1",
        "byte_test" => "1,=,1,0",
        "byte_jump" => "1,0",
        "byte_extract" => "1,0,v",
        "byte_math" => "bytes 1,offset 0,oper +,rvalue 1,result v",
        "entropy" => "value >1",
        "base64_decode" => "bytes 1",
        "datarep" => "d,>,1,type string",
        "dataset" => "isset,d,type string",
        "flow" => "established",
        "flowbits" => "set,probe",
        "flowint" => "v,=,1",
        "xbits" => "set,probe,track ip_src",
        "hostbits" => "set,probe,src",
        "flowvar" => "v,\"a\"",
        "pktvar" => "v,\"a\"",
        "stream_size" => "server,>,1",
        "flow.age" => "1",
        "flow.pkts_toserver" | "flow.pkts_toclient" | "flow.bytes_toserver" | "flow.bytes_toclient" => "1",
        "flow.pkts" | "flow.bytes" => "toserver,1",
        "app-layer-protocol" => "http",
        "app-layer-event" => "http.compression_bomb",
        "decode-event" => "ipv4.trunc_pkt",
        "stream-event" => "3whs_synack_with_wrong_ack",
        "threshold" => "type limit,track by_src,count 1,seconds 1",
        "detection_filter" => "track by_src,count 1,seconds 1",
        "tag" => "session,1,packets",
        "rate_filter" => "track by_src,count 1,seconds 1",
        "config" => "logging disable,type tx,scope tx",
        "ttl" | "tos" | "id" | "itype" | "icode" | "icmp_id" | "icmp_seq" | "tcp.mss" | "tcp.wscale" => "1",
        "ip_proto" => "6",
        "ipopts" => "rr",
        "l3_proto" => "ipv4",
        "fragbits" => "M",
        "fragoffset" => "0",
        "tcp.flags" | "flags" => "S",
        "tcp.ack" | "tcp.seq" | "tcp.window" | "ack" | "seq" | "window" => "1",
        "icmpv6.mtu" | "igmp.type" => "1",
        "vlan.id" | "vlan.layers" => "1",
        "iprep" => "src,bad,>,1",
        "geoip" => "src,US",
        "replace" => "\"a\"",
        "lua" | "luajit" => "probe.lua",
        "tls.version" => "1.2",
        "ssl_version" => "tls1.2",
        "tls.cert_chain_len" => "1",
        "tls.fingerprint" | "tls.issuerdn" | "tls.subject" => "\"a\"",
        "ssl_state" => "client_hello",
        "ssh.protoversion" | "ssh.softwareversion" => "2.0",
        "dns.opcode" | "dns.rcode" | "dns.rrtype" | "dns.answer.rrtype" | "dns.query.rrtype" => "1",
        "filesize" => "1",
        "filename" | "fileext" | "filemagic" => "\"a\"",
        "filemd5" => hash_lists()[0].as_str(),
        "filesha1" => hash_lists()[1].as_str(),
        "filesha256" => hash_lists()[2].as_str(),
        "filestore" => "request,file",
        "dce_iface" | "dcerpc.iface" => "4b324fc8-1670-01d3-1278-5a47bf6ee188",
        "dce_opnum" | "dcerpc.opnum" => "1",
        "asn1" => "oversize_length 1",
        "pcrexform" => "\"(a)\"",
        "xor" => "\"0a\"",
        "from_base64" => "bytes 1",
        "subslice" => "1,1",
        "rpc" => "100000,*,*",
        "frame" => "http.request",
        "luaxform" => "probe.lua",
        "ipv4-csum" | "tcpv4-csum" | "tcpv6-csum" | "udpv4-csum" | "udpv6-csum" | "icmpv4-csum" | "icmpv6-csum"
        | "igmp-csum" => "valid",
        "app-layer-state" => ">1",
        "engine-event" => "decoder.ipv4.trunc_pkt",
        "tls_cert_notbefore" | "tls_cert_notafter" => ">2015",
        "modbus" => "function 1",
        "dnp3_ind" | "dnp3.ind" => "device_restart",
        "dnp3_obj" | "dnp3.obj" => "1,1",
        "mqtt.type" => "CONNECT",
        "mqtt.flags" => "retain",
        "mqtt.connect.flags" => "username",
        "mqtt.connack.session_present" => "yes",
        "ftpdata_command" => "retr",
        "ftp.mode" => "active",
        "ftp.reply_received" => "yes",
        "ike.chosen_sa_attribute" => "alg_hash=2",
        "http2.frametype" => "HEADERS",
        "http2.errorcode" => "NO_ERROR",
        "http2.settings" => "SETTINGS_ENABLE_PUSH=0",
        "websocket.flags" => "fin",
        "websocket.opcode" => "text",
        "krb5.ticket_encryption" => "des-cbc-crc",
        "ldap.request.operation" | "ldap.responses.operation" => "search_request",
        _ => return None,
    })
}

/// Hash lists the file hash keywords' probes can load (md5, sha1,
/// sha256: one digest each), written once to the temporary directory and
/// removed when the listing is done.
fn hash_lists() -> &'static [String; 3] {
    static PATHS: std::sync::OnceLock<[String; 3]> = std::sync::OnceLock::new();
    let paths = PATHS.get_or_init(|| {
        [32, 40, 64].map(|len| {
            std::env::temp_dir()
                .join(format!("vigil-list-keywords-{}-{len}.list", std::process::id()))
                .display()
                .to_string()
        })
    });
    for (path, len) in paths.iter().zip([32, 40, 64]) {
        if !Path::new(path).exists() {
            let _ = std::fs::write(path, format!("{}\n", "0".repeat(len)));
        }
    }
    paths
}

fn remove_hash_lists() {
    for p in hash_lists() {
        let _ = std::fs::remove_file(p);
    }
}

pub fn list_keywords(format: &Format) -> ExitCode {
    let (text, found) = keyword_listing(format);
    remove_hash_lists();
    // A reader that stops early (`| head`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The listing's text; false when a keyword asked for by name is unknown.
fn keyword_listing(format: &Format) -> (String, bool) {
    use std::fmt::Write;
    let list = entries();
    let mut out = String::new();
    match format {
        Format::Short => {
            out.push_str("=====Supported keywords=====\n");
            for e in &list {
                // Keywords past Suricata 8.0.6 that vigil parses but does not run yet.
                let note = match (e.row.map(runs).is_some_and(|r| r.is_ok()), e.suricata) {
                    (true, _) => "",
                    (false, Some(_)) => " (not run by vigil)",
                    (false, None) => " (newer Suricata; not run by vigil)",
                };
                let _ = writeln!(out, "- {}{note}", e.name);
            }
        }
        Format::All => {
            for e in &list {
                let _ = writeln!(out, "{}:", e.name);
                details(&mut out, e, "\t");
            }
        }
        Format::Csv => {
            out.push_str("name;description;app layer;features;documentation;runs in vigil\n");
            for e in &list {
                let runs = if e.row.map(runs).is_some_and(|r| r.is_ok()) { "yes" } else { "no" };
                // `;` separates the columns, so none may stand in a description.
                let description = e.description().replace(';', ",");
                let _ = writeln!(out, "{};{description};Unset;{};{};{runs};", e.name, e.features(), e.doc());
            }
        }
        Format::One(name) => {
            // An alias finds the keyword it spells.
            let canonical = keywords::lookup(name).map(|r| r.canonical);
            let found = list
                .iter()
                .find(|e| e.name.eq_ignore_ascii_case(name))
                .or_else(|| list.iter().find(|e| e.row.is_some_and(|r| Some(r.canonical) == canonical)));
            let Some(e) = found else {
                return ("Non existing keyword\n".into(), false);
            };
            let _ = writeln!(out, "= {} =", e.name);
            details(&mut out, e, "");
        }
    }
    (out, true)
}

fn details(out: &mut String, e: &Entry, indent: &str) {
    use std::fmt::Write;
    let _ = writeln!(out, "{indent}Description: {}", e.description());
    let _ = writeln!(out, "{indent}Features: {}", e.features().replace(':', ","));
    if !e.doc().is_empty() {
        let _ = writeln!(out, "{indent}Documentation: {}", e.doc());
    }
    let runs = match e.row.map(runs) {
        None => "no: vigil does not know this keyword (a rule using it fails to load)".to_string(),
        Some(Ok(())) => "yes".to_string(),
        Some(Err(why)) => format!("no: {why}"),
    };
    let _ = writeln!(out, "{indent}Runs in vigil: {runs}");
}

/// The application-layer protocols Suricata 8.0.6 lists, in its order.
const SURICATA_PROTOCOLS: &[&str] = &[
    "http",
    "ftp",
    "smtp",
    "tls",
    "ssh",
    "imap",
    "smb",
    "dcerpc",
    "dns",
    "enip",
    "nfs",
    "ntp",
    "ftp-data",
    "tftp",
    "ike",
    "krb5",
    "quic",
    "dhcp",
    "sip",
    "rfb",
    "mqtt",
    "pgsql",
    "telnet",
    "websocket",
    "ldap",
    "doh2",
    "rdp",
    "http2",
    "bittorrent-dht",
    "pop3",
    "mdns",
    "snmp",
];

/// The protocols vigil parses or detects: the protocol table's.
fn vigil_protocols() -> Vec<&'static str> {
    vigil_applayer::protocols::ALL.iter().map(|p| p.name).collect()
}

/// Suricata's list format, with the protocols vigil parses on stdout (in
/// Suricata's order) and the ones it does not on stderr, so scripts that
/// read the list get what vigil really parses.
pub fn list_app_layer_protos() -> ExitCode {
    let ours = vigil_protocols();
    println!("=========Supported App Layer Protocols=========");
    for p in SURICATA_PROTOCOLS.iter().filter(|p| ours.contains(p)) {
        println!("{p}");
    }
    for p in ours.iter().filter(|p| !SURICATA_PROTOCOLS.contains(p)) {
        println!("{p}");
    }
    let missing: Vec<&str> = SURICATA_PROTOCOLS.iter().copied().filter(|p| !ours.contains(p)).collect();
    if !missing.is_empty() {
        eprintln!("vigil: not parsed yet (Suricata 8 parses them): {}", missing.join(", "));
    }
    ExitCode::SUCCESS
}

/// `--list-app-layer-hooks`: each protocol's hooks as firewall rules name
/// them (`ssh:request_banner_done`), in Suricata's layout, for the
/// protocols vigil parses or detects.
pub fn app_layer_hooks() -> Vec<String> {
    let mut out = vec!["=========Supported App Layer Hooks=========".to_string()];
    let ours = vigil_applayer::protocols::ALL;
    let ordered = SURICATA_PROTOCOLS
        .iter()
        .filter_map(|name| ours.iter().find(|d| d.name == *name))
        .chain(ours.iter().filter(|d| !SURICATA_PROTOCOLS.contains(&d.name)));
    for def in ordered {
        // HTTP/1 rules hook as `http1`.
        let name = if def.name == "http" { "http1" } else { def.name };
        out.extend(def.hooks.names().into_iter().map(|h| format!("{name}:{h}")));
    }
    out
}

/// vigil's runmodes for each way of capturing, in the layout of Suricata's
/// `--list-runmodes` table.
const RUNMODES: &[(&str, &[(&str, &str)])] = &[
    (
        "PCAP_FILE",
        &[
            ("single", "One thread reads, inspects and logs"),
            ("autofp", "A reader hands every packet of a flow to the same worker"),
            ("workers", "Every worker reads the files and inspects the flows of its own hash"),
        ],
    ),
    (
        "AF_PACKET_DEV",
        &[
            ("single", "One thread captures, inspects and logs"),
            ("workers", "Each worker owns one socket of every interface's fanout group, and does everything"),
        ],
    ),
    ("NFQ", &[("workers", "One worker per queue, each giving its packets' verdicts")]),
    (
        "UNIX_SOCKET",
        &[
            ("single", "Files queued on the control socket, each read by one thread"),
            ("autofp", "Files queued on the control socket, each read as autofp reads"),
        ],
    ),
];

pub fn runmodes() -> String {
    let rule = format!("|{}\n", "-".repeat(88));
    let mut out = format!("{:-^89}\n", " Runmodes ");
    out.push_str("| RunMode Type      | Custom Mode       | Description \n");
    out.push_str(&rule);
    for (kind, modes) in RUNMODES {
        for (i, (mode, what)) in modes.iter().enumerate() {
            if i > 0 {
                out.push_str(&format!("|                   {}\n", "-".repeat(69)));
            }
            let kind = if i == 0 { *kind } else { "" };
            out.push_str(&format!("| {kind:<17} | {mode:<17} | {what:<27} \n"));
        }
        out.push_str(&rule);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runmodes_table_in_suricatas_layout() {
        let t = runmodes();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0].len(), 89);
        assert_eq!(lines[1], "| RunMode Type      | Custom Mode       | Description ");
        assert!(lines.contains(&"| PCAP_FILE         | single            | One thread reads, inspects and logs "));
        assert!(lines.contains(
            &"| NFQ               | workers           | One worker per queue, each giving its packets' verdicts "
        ));
        assert_eq!(lines[2], format!("|{}", "-".repeat(88)));
        // Every runmode named here is one `--runmode` accepts.
        for (_, modes) in RUNMODES {
            for (m, _) in *modes {
                let opts = vigil_engine::RunOptions { runmode: Some(m.to_string()), ..Default::default() };
                assert!(vigil_engine::Runmode::resolve(&opts, &vigil_config::Config::default()).is_ok(), "{m}");
            }
        }
    }

    /// The tests that write the probe hash lists take turns, so one's
    /// removal never pulls them from under the other.
    static LISTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn app_layer_hooks_in_suricatas_layout() {
        let hooks = app_layer_hooks();
        assert_eq!(hooks[0], "=========Supported App Layer Hooks=========");
        // As Suricata 8.0.6's `--list-app-layer-hooks` prints SSH's.
        let ssh: Vec<&str> = hooks.iter().map(String::as_str).filter(|h| h.starts_with("ssh:")).collect();
        assert_eq!(
            ssh,
            [
                "ssh:request_started",
                "ssh:request_in_progress",
                "ssh:request_banner_wait_eol",
                "ssh:request_banner_done",
                "ssh:request_finished",
                "ssh:request_complete",
                "ssh:response_started",
                "ssh:response_in_progress",
                "ssh:response_banner_wait_eol",
                "ssh:response_banner_done",
                "ssh:response_finished",
                "ssh:response_complete",
            ]
        );
        assert!(hooks.iter().any(|h| h == "http1:request_line"));
        assert!(hooks.iter().any(|h| h == "dns:response_complete"));
    }

    #[test]
    fn every_suricata_keyword_is_listed_once() {
        let list = entries();
        for k in KEYWORDS {
            assert_eq!(list.iter().filter(|e| e.name == k.name).count(), 1, "{}", k.name);
        }
    }

    #[test]
    fn probes_agree_with_the_engine() {
        let _turn = LISTS.lock().unwrap_or_else(|e| e.into_inner());
        let row = |n| keywords::lookup(n).unwrap();
        for yes in [
            "content",
            "nocase",
            "http.uri",
            "flow",
            "ssh.proto",
            "ssh.hassh",
            "dsize",
            "to_lowercase",
            "filemd5",
            "filesha256",
        ] {
            assert_eq!(runs(row(yes)), Ok(()), "{yes}");
        }
        // A keyword the engine refuses says so, with the compiler's reason.
        let why = runs(row("geoip")).unwrap_err();
        assert!(why.contains("geoip"), "{why}");
        remove_hash_lists();
    }

    /// A keyword needing a value with no example would always read "no";
    /// every such row must have an example that parses.
    #[test]
    fn every_keyword_with_a_value_has_a_parsing_example() {
        let _turn = LISTS.lock().unwrap_or_else(|e| e.into_inner());
        let loader = Loader::new();
        let mut missing = Vec::new();
        // Suricata 8 keeps the two obsolete SSH keywords only to refuse them.
        let refused = ["ssh.protoversion", "ssh.softwareversion"];
        for row in keywords::all()
            .filter(|r| r.arg == Arg::Required && !matches!(r.kind, Kind::Snort(_)) && !refused.contains(&r.name))
        {
            let sid = if row.canonical == "sid" { "" } else { " sid:1;" };
            let parses = values(row).iter().any(|v| {
                CONTEXTS.iter().any(|(b, a)| {
                    PROTOS.iter().any(|p| {
                        let text = format!("alert {p} any any -> any any ({b}{}:{v};{a}{sid})\n", row.name);
                        loader.load_str(&text, "t").is_ok_and(|s| s.rules.len() == 1)
                    })
                })
            });
            if !parses {
                missing.push(row.name);
            }
        }
        remove_hash_lists();
        assert!(missing.is_empty(), "{missing:?}");
    }
}
