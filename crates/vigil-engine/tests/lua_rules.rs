//! Lua rules end to end on captures built with vigil's packet builders:
//! the `suricata.*` libraries a script reads the packet, the flow and the
//! transaction through, hooked rules, negation, and the sandbox's failures
//! (counted in `detect.lua.*`, logged once per script).

mod common;

use common::{of_type, tcp_session, tempdir, write_pcap};
use serde_json::Value;
use vigil_engine::RunOptions;

const REQUEST: &[u8] =
    b"GET /index.html?a=1 HTTP/1.1\r\nHost: www.example.test\r\nUser-Agent: lua-test/1.0\r\nX-A: 1\r\nx-a: 2\r\n\r\n";
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";

/// Runs the HTTP session with `rules` and the named scripts beside them;
/// the EVE records and the log file's text.
fn run(name: &str, rules: &str, scripts: &[(&str, &str)]) -> (Vec<Value>, String) {
    let dir = tempdir("lua-rules", name);
    write_pcap(&dir.join("in.pcap"), common::spaced(&tcp_session(80, &[(REQUEST, RESPONSE)])));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    for (file, text) in scripts {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let yaml = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types: [alert, stats]\n\
                logging:\n  outputs:\n    - file:\n        enabled: yes\n        filename: vigil.log\n        level: info\n";
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    run_in(&dir);
    let recs = eve(&dir);
    let log = std::fs::read_to_string(dir.join("vigil.log")).unwrap_or_default();
    std::fs::remove_dir_all(&dir).unwrap();
    (recs, log)
}

/// An offline run of `dir/in.pcap` with `dir/test.rules` and
/// `dir/vigil.yaml`, scripts found in `dir` (`default-rule-path`).
fn run_in(dir: &std::path::Path) {
    let opts = RunOptions {
        config: Some(dir.join("vigil.yaml")),
        sets: vec![format!("default-rule-path={}", dir.display())],
        ..common::offline_opts(dir)
    };
    vigil_engine::run_offline(&opts, &mut |_| {}).unwrap();
}

/// Runs `dir` writing EVE alert and stats records only; the records.
fn run_alerts(dir: &std::path::Path) -> Vec<Value> {
    std::fs::write(
        dir.join("vigil.yaml"),
        "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types: [alert, stats]\n",
    )
    .unwrap();
    run_in(dir);
    eve(dir)
}

/// Runs `dir` with the output scripts `scripts` (beside the capture).
fn run_outputs(dir: &std::path::Path, scripts: &[&str]) {
    let yaml = format!(
        "outputs:\n  - lua:\n      enabled: yes\n      scripts-dir: {}\n      scripts: [{}]\n",
        dir.display(),
        scripts.join(", ")
    );
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    run_in(dir);
}

/// The EVE records a run wrote.
fn eve(dir: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn sids(recs: &[Value]) -> Vec<u64> {
    of_type(recs, "alert").iter().map(|a| a["alert"]["signature_id"].as_u64().unwrap()).collect()
}

fn lua_stats(recs: &[Value]) -> Value {
    of_type(recs, "stats").last().map(|s| s["stats"]["detect"]["lua"].clone()).unwrap_or_default()
}

/// Checks values the libraries give against what the capture holds; each
/// failed expectation is an error naming it, so a wrong value fails the
/// test with its name.
const HTTP_SCRIPT: &str = r#"
local http = require("suricata.http")
local flow = require("suricata.flow")
local packet = require("suricata.packet")
function init(args) return {} end
local function want(what, got, expected)
  if got ~= expected then error(what .. ": got " .. tostring(got) .. ", want " .. tostring(expected)) end
end
function match(args)
  local tx = http.get_tx()
  want("request_line", tx:request_line(), "GET /index.html?a=1 HTTP/1.1")
  want("response_line", tx:response_line(), "HTTP/1.1 200 OK\r\n")
  want("uri", tx:request_uri_raw(), "/index.html?a=1")
  want("host", tx:request_host(), "www.example.test")
  want("header", tx:request_header("user-agent"), "lua-test/1.0")
  want("joined", tx:request_header("X-A"), "1, 2")
  want("response header", tx:response_header("Content-Type"), "text/plain")
  want("headers table", tx:request_headers()["Host"], "www.example.test")
  want("body", tx:response_body()[1], "hello")
  want("no request body", tx:request_body(), nil)
  local v, src, dst, proto, sp, dp = flow.get():tuple()
  want("flow tuple", table.concat({v, src, dst, proto, sp, dp}, " "), "4 198.18.0.1 198.18.0.2 6 40000 80")
  local app = flow.get():app_layer_proto()
  want("app proto", app, "http")
  local tsp, tsb, tcp, tcb = flow.get():stats()
  if tsp < 3 or tcp < 2 then error("flow stats " .. tsp .. " " .. tcp) end
  local s, us = packet.get():timestamp()
  if s < 1 then error("timestamp") end
  return 1
end
"#;

#[test]
fn libraries_read_the_transaction_the_flow_and_the_packet() {
    let rules = "alert http:response_complete any any -> any any (msg:\"http lua\"; lua:http.lua; sid:1;)\n";
    let (recs, log) = run("http", rules, &[("http.lua", HTTP_SCRIPT)]);
    assert_eq!(sids(&recs), [1], "{log}");
    assert_eq!(lua_stats(&recs)["errors"], 0, "{log}");
}

#[test]
fn packet_library_and_negation() {
    let script = r#"
local packet = require("suricata.packet")
local base64 = require("suricata.base64")
local hashing = require("suricata.hashing")
function init(args) return {payload = true} end
function match(args)
  local p = packet.get()
  local v, src, dst, proto, sp, dp = p:tuple()
  if dp ~= 80 or not p:payload():find("^GET ") then return 0 end
  if base64.decode(base64.encode("vigil")) ~= "vigil" then error("base64") end
  if base64.encode_nopad("fo") ~= "Zm8" then error("nopad") end
  local h = hashing.sha256()
  h:update("www.suricata")
  h:update(".io")
  if h:finalize_to_hex() ~= hashing.sha256_hex_digest("www.suricata.io") then error("hasher") end
  if hashing.md5_hex_digest("") ~= "d41d8cd98f00b204e9800998ecf8427e" then error("md5") end
  return 1
end
"#;
    let rules = "alert tcp any any -> any any (msg:\"get\"; flow:to_server; lua:get.lua; sid:1;)\n\
                 alert tcp any any -> any any (msg:\"not get\"; flow:to_server; lua:!get.lua; sid:2;)\n";
    let (recs, log) = run("packet", rules, &[("get.lua", script)]);
    // The script runs on the one packet with a payload (its `payload`
    // need): it matches there and the negated rule never does.
    assert_eq!(sids(&recs), [1], "{log}");
    assert_eq!(lua_stats(&recs)["errors"], 0, "{log}");
}

#[test]
fn the_sandbox_fails_scripts_and_counts_them() {
    let blocked = "function init(a) return {} end\nfunction match(a) pcall(print, 1) return 1 end\n";
    let io = "function init(a) return {} end\nfunction match(a) io.open('/etc/passwd') return 1 end\n";
    let spin = "function init(a) return {} end\nfunction match(a) local i = 0 while true do i = i + 1 end end\n";
    let hog = "function init(a) return {} end\nfunction match(a) local t = {} for i = 1, 1e7 do t[i] = ('x'):rep(64) .. i end return 1 end\n";
    let rules = "alert tcp any any -> any any (flow:to_server; lua:blocked.lua; sid:1;)\n\
                 alert tcp any any -> any any (flow:to_server; lua:io.lua; sid:2;)\n\
                 alert tcp any any -> any any (flow:to_server; content:\"GET\"; lua:spin.lua; sid:3;)\n\
                 alert tcp any any -> any any (flow:to_server; content:\"GET\"; lua:hog.lua; sid:4;)\n";
    let scripts = [("blocked.lua", blocked), ("io.lua", io), ("spin.lua", spin), ("hog.lua", hog)];
    let (recs, log) = run("sandbox", rules, &scripts);
    assert!(sids(&recs).is_empty(), "{log}");
    let st = lua_stats(&recs);
    assert_eq!(st["instruction_limit_errors"], 1, "{st}");
    assert_eq!(st["memory_limit_errors"], 1, "{st}");
    // The client sends 4 packets (handshake ACK, request, ACK, FIN/ACK...):
    // the two scripts that run on each fail on each.
    let per_packet = st["blocked_function_errors"].as_u64().unwrap();
    assert!(per_packet >= 3, "{st}");
    assert_eq!(st["errors"].as_u64().unwrap(), 2 * per_packet + 2, "{st}");
    // Each script's failure is logged once.
    let once = |needle: &str| log.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(once("Blocked Lua function called: pcall"), 1, "{log}");
    assert_eq!(once("attempt to index a nil value (global 'io')"), 1, "{log}");
    assert_eq!(once("Lua script failed to run successfully: instruction limit exceeded"), 1, "{log}");
    assert_eq!(once("Lua script failed to run successfully: memory limit exceeded"), 1, "{log}");
}

#[test]
fn a_script_that_cannot_load_fails_its_rule() {
    let no_match = "function init(a) return {} end\n";
    let rules = "alert tcp any any -> any any (lua:nomatch.lua; sid:1;)\n\
                 alert tcp any any -> any any (lua:missing.lua; sid:2;)\n\
                 alert tcp any any -> any any (content:\"GET\"; sid:3;)\n";
    let (recs, log) = run("bad", rules, &[("nomatch.lua", no_match)]);
    assert_eq!(sids(&recs), [3]);
    assert!(log.contains("no match function in script"), "{log}");
    assert!(log.contains("missing.lua"), "{log}");
}

#[test]
fn luaxform_transforms_the_sticky_buffer() {
    let upper = "function transform(input, args) return input:upper(), #input end\n";
    // The arguments after the script's name, as written (leading space kept).
    let cut = "function transform(input, args)\n  if args[1] ~= ' keep 3' then error('args: ' .. tostring(args[1])) end\n  return input .. 'TAIL', 3\nend\n";
    let one = "function transform(input, args) return input .. 'X' end\n";
    let broken = "function transform(input, args) error('boom') end\n";
    let rules = "alert http any any -> any any (http.uri; luaxform:upper.lua; content:\"/INDEX.HTML?A=1\"; sid:1;)\n\
                 alert http any any -> any any (http.uri; luaxform:cut.lua, keep 3; content:\"/in\"; endswith; sid:2;)\n\
                 alert http any any -> any any (http.uri; luaxform:one.lua; content:\"/index.html?a=1\"; endswith; sid:3;)\n\
                 alert http any any -> any any (http.uri; luaxform:broken.lua; bsize:15; sid:4;)\n\
                 alert http any any -> any any (http.uri; luaxform:none.lua; content:\"/\"; sid:5;)\n";
    let scripts =
        [("upper.lua", upper), ("cut.lua", cut), ("one.lua", one), ("broken.lua", broken), ("none.lua", "x = 1\n")];
    let (recs, log) = run("luaxform", rules, &scripts);
    // A single value, or a failure, leaves the buffer as it was; a script
    // without `transform` fails its rule.
    let mut got = sids(&recs);
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3, 4], "{log}");
    assert!(log.contains("no transform function in script"), "{log}");
}

/// Lua output scripts: each logs what its `init` asked for into a file of
/// its own in the log directory; the files' lines.
#[test]
fn output_scripts_log_transactions_alerts_flows_packets_and_stats() {
    let dir = tempdir("lua-rules", "outputs");
    write_pcap(&dir.join("in.pcap"), common::spaced(&tcp_session(80, &[(REQUEST, RESPONSE)])));
    std::fs::write(
        dir.join("test.rules"),
        "alert http any any -> any any (msg:\"get\"; content:\"GET\"; sid:7; rev:3;)\n",
    )
    .unwrap();
    let opener = |file: &str| {
        format!(
            "local config = require('suricata.config')\nfunction setup(a) out = assert(io.open(config.log_path() .. '/{file}', 'a')) end\nfunction deinit(a) out:write('done\\n') out:close() end\n"
        )
    };
    let scripts = [
        ("http.lua", "local http = require('suricata.http')\nfunction init(a) return {protocol = 'http'} end\nfunction log(a) local tx = http.get_tx() out:write(tx:request_line() .. '|' .. tx:request_host() .. '\\n') end\n", "http.out"),
        ("alerts.lua", "local rule = require('suricata.rule')\nfunction init(a) return {type = 'packet', filter = 'alerts'} end\nfunction log(a) local r = rule.get_rule() out:write(r:sid() .. ' ' .. r:rev() .. ' ' .. r:msg() .. '\\n') end\n", "alerts.out"),
        ("flow.lua", "local flow = require('suricata.flow')\nfunction init(a) return {type = 'flow'} end\nfunction log(a) local f = flow.get() local p, b, q, c = f:stats() out:write(table.concat({f:tuple()}, ',') .. ' ' .. f:app_layer_proto() .. ' ' .. p .. ' ' .. q .. ' ' .. tostring(f:has_alerts()) .. '\\n') end\n", "flow.out"),
        ("packets.lua", "local packet = require('suricata.packet')\nlocal flow = require('suricata.flow')\nfunction init(a) return {type = 'packet'} end\nfunction log(a) out:write(packet.get():pcap_cnt() .. ' ' .. select(6, flow.get():tuple()) .. '\\n') end\n", "packets.out"),
        ("stats.lua", "function init(a) return {type = 'stats'} end\nfunction log(a) for _, c in ipairs(a) do if c.name == 'decoder.pkts' then out:write(c.tmname .. ' ' .. c.value .. '\\n') end end end\n", "stats.out"),
    ];
    for (file, body, out) in scripts {
        std::fs::write(dir.join(file), format!("{}{body}", opener(out))).unwrap();
    }
    run_outputs(&dir, &["http.lua", "alerts.lua", "flow.lua", "packets.lua", "stats.lua"]);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert_eq!(read("http.out"), "GET /index.html?a=1 HTTP/1.1|www.example.test\ndone\n");
    assert_eq!(read("alerts.out"), "7 3 get\ndone\n");
    let frames = tcp_session(80, &[(REQUEST, RESPONSE)]).len();
    let flow = read("flow.out");
    let first = flow.lines().next().unwrap();
    assert!(first.starts_with("4,198.18.0.1,198.18.0.2,6,40000,80 http "), "{flow}");
    assert!(first.ends_with(" true"), "{flow}");
    let packets: Vec<String> = read("packets.out").lines().map(str::to_string).collect();
    // Each packet with its flow (the server's port from the flow's tuple).
    let want: Vec<String> = (1..=frames).map(|n| format!("{n} 80")).chain(["done".to_string()]).collect();
    assert_eq!(packets, want);
    assert!(read("stats.out").contains(&format!("Total {frames}\n")), "{}", read("stats.out"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn smtp_library_reads_the_envelope_and_header_fields() {
    let dir = tempdir("lua-rules", "smtp");
    let exchanges: [(&[u8], &[u8]); 6] = [
        (b"EHLO client.test\r\n", b"250 mx.test\r\n"),
        (b"MAIL FROM:<alice@a.test>\r\n", b"250 Ok\r\n"),
        (b"RCPT TO:<bob@b.test>\r\n", b"250 Ok\r\n"),
        (b"RCPT TO:<carol@c.test>\r\n", b"250 Ok\r\n"),
        (b"DATA\r\n", b"354 go ahead\r\n"),
        (b"Subject: hello there\r\nFrom: alice@a.test\r\n\r\nbody\r\n.\r\n", b"250 queued\r\n"),
    ];
    // The server speaks first.
    let frames = common::tcp_conversation(
        (common::CLIENT, 40000),
        (common::SERVER, 25),
        &std::iter::once((false, &b"220 mx.test ESMTP\r\n"[..]))
            .chain(exchanges.iter().flat_map(|(c, s)| [(true, *c), (false, *s)]))
            .collect::<Vec<_>>(),
    );
    write_pcap(&dir.join("in.pcap"), common::spaced(&frames));
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let script = "local config = require('suricata.config')\nlocal smtp = require('suricata.smtp')\n\
                  function init(a) return {protocol = 'smtp'} end\n\
                  function setup(a) out = assert(io.open(config.log_path() .. '/smtp.out', 'a')) end\n\
                  function log(a) local tx = smtp.get_tx() local from = tx:get_mail_from() if from == nil then return end\n\
                  out:write(from .. ' ' .. table.concat(tx:get_rcpt_list(), ',') .. ' ' .. tostring(tx:get_mime_field('Subject')) .. ' ' .. tostring(select(2, tx:get_mime_field('x-nope'))) .. '\\n') end\n\
                  function deinit(a) out:close() end\n";
    std::fs::write(dir.join("smtp.lua"), script).unwrap();
    run_outputs(&dir, &["smtp.lua"]);
    let out = std::fs::read_to_string(dir.join("smtp.out")).unwrap();
    assert_eq!(out, "<alice@a.test> <bob@b.test>,<carol@c.test> hello there request mime field not found\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A DNS query for `www.example.test` and its answer (one A record, TTL 60).
fn dns_exchange() -> Vec<Vec<u8>> {
    use vigil_wire::build::PacketBuilder;
    let name = b"\x03www\x07example\x04test\x00";
    let mut query = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    query.extend_from_slice(name);
    query.extend_from_slice(&[0, 1, 0, 1]);
    let mut answer = vec![0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
    answer.extend_from_slice(name);
    answer.extend_from_slice(&[0, 1, 0, 1, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 9]);
    vec![
        PacketBuilder::ipv4(common::CLIENT, common::SERVER).udp(40000, 53).payload(&query).build_ethernet(),
        PacketBuilder::ipv4(common::SERVER, common::CLIENT).udp(53, 40000).payload(&answer).build_ethernet(),
    ]
}

#[test]
fn dns_library_reads_the_query_and_the_answer() {
    let dir = tempdir("lua-rules", "dns");
    write_pcap(&dir.join("in.pcap"), common::spaced(&dns_exchange()));
    // Tables numbered from 0, as Suricata 8.0.6 numbers them; recursion
    // desired read from the request's bit 0x0080 (not set here).
    let script = "local dns = require('suricata.dns')\nfunction init(a) return {} end\n\
                  function match(a) local tx = dns.get_tx()\n\
                  if tx:txid() ~= 0x1234 or tx:rrname() ~= 'www.example.test' or tx:rcode_string() ~= 'NOERROR' or tx:rcode() ~= 0 then error('header') end\n\
                  if tx:recursion_desired() then error('rd') end\n\
                  local an = tx:answers()\n\
                  if #tx:queries() == 0 and tx:queries()[0].rrname == 'www.example.test' and tx:queries()[0].type == 'A' and #an == 0 and (an[0] == nil or (an[0].addr == '198.18.0.9' and an[0].ttl == 60)) then return 1 end\n\
                  error('tables') end\n";
    std::fs::write(dir.join("dns.lua"), script).unwrap();
    std::fs::write(
        dir.join("test.rules"),
        "alert dns:request_complete any any -> any any (lua:dns.lua; sid:1;)\nalert dns:response_complete any any -> any any (lua:dns.lua; sid:2;)\n",
    )
    .unwrap();
    let recs = run_alerts(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let mut got = sids(&recs);
    got.sort_unstable();
    assert_eq!(got, [1, 2], "{:?}", lua_stats(&recs));
    assert_eq!(lua_stats(&recs)["errors"], 0);
}

#[test]
fn ntp_library_reads_the_header() {
    use vigil_wire::build::PacketBuilder;
    let dir = tempdir("lua-rules", "ntp");
    // A version 4 client request, then the server's answer (stratum 2, reference "LOCL").
    let mut request = vec![0x23, 0, 6, 0xec];
    request.resize(48, 0);
    let mut answer = vec![0x24, 2, 6, 0xec, 0, 0, 0, 0, 0, 0, 0, 0];
    answer.extend_from_slice(b"LOCL");
    answer.resize(48, 0);
    let frames = vec![
        PacketBuilder::ipv4(common::CLIENT, common::SERVER).udp(40123, 123).payload(&request).build_ethernet(),
        PacketBuilder::ipv4(common::SERVER, common::CLIENT).udp(123, 40123).payload(&answer).build_ethernet(),
    ];
    write_pcap(&dir.join("in.pcap"), common::spaced(&frames));
    let script = "local ntp = require('suricata.ntp')\nfunction init(a) return {} end\n\
                  function match(a) local tx = ntp.get_tx()\n\
                  if tx:version() == 4 and tx:mode() == 4 and tx:stratum() == 2 and tx:reference_id() == 'LOCL' then return 1 end\n\
                  return 0 end\n";
    std::fs::write(dir.join("ntp.lua"), script).unwrap();
    std::fs::write(dir.join("test.rules"), "alert ntp any any -> any any (lua:ntp.lua; sid:1;)\n").unwrap();
    let recs = run_alerts(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(sids(&recs), [1], "only the server's answer: {:?}", lua_stats(&recs));
    assert_eq!(lua_stats(&recs)["errors"], 0);
}

#[test]
fn flowvar_and_flowint_libraries_change_the_flows_variables() {
    let script = "local flowvar = require('suricata.flowvar')\nlocal flowint = require('suricata.flowint')\n\
                  function init(a) flowvar.register('luavar') flowint.register('luaint') return {} end\n\
                  function thread_init(a) fv = flowvar.get('luavar') fi = flowint.get('luaint') end\n\
                  function match(a)\n\
                  if fv:value() ~= nil or fi:value() ~= nil then error('set before') end\n\
                  fv:set('abcdef', 3) fi:set(5)\n\
                  local v, len = fv:value()\n\
                  if v ~= 'abc' or len ~= 3 or fi:incr() ~= 6 or fi:decr() ~= 5 or fi:incr() ~= 6 then error('values') end\n\
                  return 1 end\n";
    let rules = "alert http any any -> any any (http.method; content:\"GET\"; lua:vars.lua; sid:1;)\n\
                 alert tcp any any -> any any (flowvar:luavar,\"abc\"; flowint:luaint,=,6; sid:2;)\n";
    let (recs, _) = run("vars", rules, &[("vars.lua", script)]);
    let got = sids(&recs);
    assert_eq!(got.iter().filter(|s| **s == 1).count(), 1, "{got:?} {:?}", lua_stats(&recs));
    assert!(got.contains(&2), "the keywords see what the script set: {got:?}");
    assert_eq!(lua_stats(&recs)["errors"], 0);
    let later = of_type(&recs, "alert").into_iter().find(|a| a["alert"]["signature_id"] == 2).unwrap();
    assert_eq!(later["metadata"]["flowints"]["luaint"], 6, "{later}");
    assert_eq!(later["metadata"]["flowvars"][0]["luavar"], "abc", "{later}");
}

#[test]
fn file_output_scripts_see_each_file() {
    let dir = tempdir("lua-rules", "files");
    write_pcap(&dir.join("in.pcap"), common::spaced(&tcp_session(80, &[(REQUEST, RESPONSE)])));
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let script = "local config = require('suricata.config')\nlocal filelib = require('suricata.file')\n\
                  function init(a) return {type = 'file'} end\n\
                  function setup(a) out = assert(io.open(config.log_path() .. '/files.out', 'a')) end\n\
                  function log(a) local f = filelib.get_file()\n\
                  out:write(table.concat({f:tx_id(), f:name(), f:size(), f:get_state(), tostring(f:is_stored()), tostring(f:md5()), tostring(f:sha256())}, ' ') .. '\\n') end\n\
                  function deinit(a) out:close() end\n";
    std::fs::write(dir.join("files.lua"), script).unwrap();
    run_outputs(&dir, &["files.lua"]);
    let out = std::fs::read_to_string(dir.join("files.out")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // The response body ("hello"), named by the URI's path; no digest asked for, none given.
    assert_eq!(out, "0 /index.html 5 CLOSED false nil nil\n", "{out}");
}

#[test]
fn streaming_output_scripts_get_the_streams_and_the_bodies() {
    let dir = tempdir("lua-rules", "streaming");
    write_pcap(&dir.join("in.pcap"), common::spaced(&tcp_session(80, &[(REQUEST, RESPONSE)])));
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let script = |kind: &str, out: &str| {
        format!(
            "local config = require('suricata.config')\n\
             function init(a) return {kind} end\n\
             function setup(a) out = assert(io.open(config.log_path() .. '/{out}', 'a')) end\n\
             function log(a) local s = a.stream\n\
             out:write((s.to_server and '>' or '<') .. (s.open and 'O' or '') .. (s.close and 'C' or '') .. tostring(a.tx_id) .. ':' .. s.data .. '|') end\n\
             function deinit(a) out:close() end\n"
        )
    };
    std::fs::write(dir.join("tcp.lua"), script("{type = 'streaming', filter = 'tcp'}", "tcp.out")).unwrap();
    std::fs::write(dir.join("http.lua"), script("{type = 'streaming', protocol = 'http'}", "http.out")).unwrap();
    run_outputs(&dir, &["tcp.lua", "http.lua"]);
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let (tcp, http) = (read("tcp.out"), read("http.out"));
    std::fs::remove_dir_all(&dir).unwrap();
    // Each side opened by its first piece, whole, and closed at the flow's end.
    let request = String::from_utf8_lossy(REQUEST);
    let response = String::from_utf8_lossy(RESPONSE);
    assert_eq!(tcp, format!(">Onil:{request}|<Onil:{response}|>Cnil:|<Cnil:|"), "{tcp}");
    // The response body, one piece that opens and closes it, with its transaction (a float, as in Suricata).
    assert_eq!(http, "<OC0.0:hello|", "{http}");
}
