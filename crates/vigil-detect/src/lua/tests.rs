use super::*;
use vigil_decode::{DecodeConfig, Decoder};
use vigil_types::LinkType;
use vigil_wire::build::PacketBuilder;

/// Writes `text` as a script in a fresh directory; the rule file's path
/// beside it.
fn script(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("vigil-lua-unit-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.lua")), text).unwrap();
    dir.join("test.rules").display().to_string()
}

fn run_on_get(s: &LuaScript) -> (bool, LuaStates) {
    let frame = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 0, 2])
        .tcp(40000, 80)
        .payload(b"GET / HTTP/1.1\r\n")
        .build_ethernet();
    let mut dec = Decoder::new(DecodeConfig { validate_checksums: false, ..DecodeConfig::default() });
    let p = dec.decode(&frame, Timestamp::from_micros(1_464_332_171, 701_229), LinkType::Ethernet, 7);
    let mut states = LuaStates::default();
    let m = states
        .run(s, &LuaInput { p: Some(&p), flow: None, tx: None, stream: None, rule: None, vars: None, file: None });
    (m, states)
}

#[test]
fn init_must_return_a_table_and_match_must_exist() {
    let rules = script("noinit", "function match(a) return 1 end");
    let e = LuaScript::load("noinit.lua", &rules, &LuaSettings::default()).unwrap_err();
    assert!(e.contains("no init function"), "{e}");
    let rules = script("badinit", "function init(a) return 1 end\nfunction match(a) return 1 end");
    let e = LuaScript::load("badinit.lua", &rules, &LuaSettings::default()).unwrap_err();
    assert!(e.contains("did not return a table"), "{e}");
    let rules = script("syntax", "function init(a) return {} end\nfunction match(a) return 1");
    assert!(LuaScript::load("syntax.lua", &rules, &LuaSettings::default()).is_err());
}

#[test]
fn allow_rules_off_refuses_the_keyword() {
    let rules = script("off", "function init(a) return {} end\nfunction match(a) return 1 end");
    let off = LuaSettings { allow_rules: false, ..LuaSettings::default() };
    let e = LuaScript::load("off.lua", &rules, &off).unwrap_err();
    assert!(e.contains("security.lua.allow-rules"), "{e}");
}

#[test]
fn packet_values_as_suricata_gives_them() {
    let text = r#"
local packet = require("suricata.packet")
function init(a) return {packet = true} end
function match(a)
  local p = packet.get()
  local s, us = p:timestamp()
  if s ~= 1464332171.0 or us ~= 701229.0 or math.type(s) ~= "float" then error("ts " .. s .. " " .. us) end
  if p:timestring_legacy() ~= "05/27/2016-06:56:11.701229" then error(p:timestring_legacy()) end
  if p:timestring_iso8601() ~= "2016-05-27T06:56:11.701229+0000" then error(p:timestring_iso8601()) end
  local v, src, dst, proto, sp, dp = p:tuple()
  if table.concat({v, src, dst, proto, sp, dp}, " ") ~= "4 198.18.0.1 198.18.0.2 6 40000 80" then error("tuple") end
  if p:pcap_cnt() ~= 7 or math.type(p:pcap_cnt()) ~= "integer" then error("pcap_cnt") end
  if p:payload() ~= "GET / HTTP/1.1\r\n" then error("payload") end
  if #p:packet() ~= 14 + 20 + 20 + 16 then error("packet " .. #p:packet()) end
  if next(a) ~= nil then error("match gets an empty table") end
  return 1
end
"#;
    let rules = script("pkt", text);
    let s = LuaScript::load("pkt.lua", &rules, &LuaSettings::default()).unwrap();
    assert!(s.needs.packet);
    let (m, states) = run_on_get(&s);
    assert!(m, "{:?}", states.messages);
    assert_eq!(states.stats, LuaStats::default());
}

#[test]
fn unknown_modules_and_restricted_functions() {
    let rules = script(
        "req",
        "local x = require('suricata.nosuch')\nfunction init(a) return {} end\nfunction match(a) return 1 end",
    );
    let e = LuaScript::load("req.lua", &rules, &LuaSettings::default()).unwrap_err();
    assert!(e.contains("module 'suricata.nosuch' not found"), "{e}");
    let text = "function init(a) return {} end\nfunction match(a) local ok = pcall(function() end) return os and io and ok and 1 or 0 end";
    let rules = script("restricted", text);
    let open = LuaSettings { allow_restricted_functions: true, ..LuaSettings::default() };
    let s = LuaScript::load("restricted.lua", &rules, &open).unwrap();
    assert!(run_on_get(&s).0);
    let s = LuaScript::load("restricted.lua", &rules, &LuaSettings::default()).unwrap();
    let (m, states) = run_on_get(&s);
    assert!(!m);
    assert_eq!(states.stats.blocked_function_errors, 1);
    assert!(states.messages[0].1.ends_with("Blocked Lua function called: pcall"), "{:?}", states.messages);
}

#[test]
fn a_library_outside_match_fails() {
    let text = "local packet = require('suricata.packet')\nlocal p = packet.get()\nfunction init(a) return {} end\nfunction match(a) return 1 end";
    let rules = script("early", text);
    let e = LuaScript::load("early.lua", &rules, &LuaSettings::default()).unwrap_err();
    assert!(e.contains("only available while the script's match or log function runs"), "{e}");
}

#[test]
fn thread_init_runs_before_match() {
    let text = "function init(a) return {} end\nfunction thread_init() ready = 41 end\nfunction match(a) ready = ready + 1 return ready == 42 and 1 or 0 end";
    let rules = script("thread", text);
    let s = LuaScript::load("thread.lua", &rules, &LuaSettings::default()).unwrap();
    let (m, states) = run_on_get(&s);
    assert!(m, "{:?}", states.messages);
}

#[test]
fn util_thread_info_names_the_thread() {
    let text = "local util = require('suricata.util')\nfunction init(a) return {} end\nfunction match(a) local t = util.thread_info() return (t.id > 0 and type(t.name) == 'string') and 1 or 0 end";
    let rules = script("util", text);
    let s = LuaScript::load("util.lua", &rules, &LuaSettings::default()).unwrap();
    let (m, states) = run_on_get(&s);
    assert!(m, "{:?}", states.messages);
}
