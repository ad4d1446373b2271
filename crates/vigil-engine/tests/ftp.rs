//! FTP end to end: a control channel that sets up a passive download and
//! an active upload, and the two data flows it announced, built with
//! vigil's packet builders and run offline: `ftp` records, `ftp-data`
//! flows found by expectation (whatever their ports) with `ftp_data` and
//! `fileinfo` records carrying the control flow's id as `parent_id`, and
//! the FTP and data-channel keywords.

mod common;

use common::{of_type, tcp_conversation};
use serde_json::Value;

const C: [u8; 4] = [198, 18, 0, 1];
const S: [u8; 4] = [198, 18, 0, 2];

const RULES: &str = r#"
alert ftp any any -> any any (msg:"retr"; ftp.command; content:"RETR"; sid:1;)
alert ftp-data any any -> any any (msg:"download"; ftpdata_command:retr; sid:2;)
alert ftp-data any any -> any any (msg:"file content"; file.data; content:"secret"; sid:3;)
alert ftp any any -> any any (msg:"passive port"; ftp.dynamic_port:5001; flow:to_client; sid:4;)
alert tcp any any -> any any (msg:"bounce"; ftpbounce; sid:5;)
alert ftp-data any any -> any any (msg:"upload"; ftpdata_command:stor; sid:6;)
"#;

fn frames() -> Vec<Vec<u8>> {
    let control = |msgs: &[(bool, &[u8])]| tcp_conversation((C, 40000), (S, 21), msgs);
    let all = control(&[
        (false, b"220 ready\r\n"),
        (true, b"USER anonymous\r\n"),
        (false, b"331 Password please\r\n"),
        (true, b"PASS guest\r\n"),
        (false, b"230 Logged in\r\n"),
        (true, b"PASV\r\n"),
        (false, b"227 Entering Passive Mode (198,18,0,2,19,137).\r\n"),
        (true, b"RETR notes.txt\r\n"),
        (false, b"150 Opening BINARY mode data connection\r\n"),
        // The data flows go here (see below).
        (false, b"226 Transfer complete\r\n"),
        (true, b"PORT 198,18,0,1,156,65\r\n"),
        (false, b"200 PORT command successful\r\n"),
        (true, b"STOR up.bin\r\n"),
        (false, b"150 Ok to send data\r\n"),
        (false, b"226 Transfer complete\r\n"),
        (true, b"QUIT\r\n"),
        (false, b"221 Goodbye\r\n"),
    ]);
    // Passive: the client connects to the server's port 5001; the file comes back.
    let download = tcp_conversation((C, 40001), (S, 5001), &[(false, b"top secret notes\n")]);
    // Active: the server connects from port 20 to the port PORT named (156 * 256 + 65), and the file goes to it.
    let upload = tcp_conversation((S, 20), (C, 40001), &[(false, b"uploaded bytes")]);
    // Control up to the 150 reply: the handshake, five server messages and
    // their acknowledgements, four client commands answered at once.
    let cut = 3 + 5 * 2 + 4;
    // Then 226, PORT and its answer, STOR and its 150.
    let upload_at = cut + 2 + (1 + 2) + (1 + 2);
    let mut out = all[..cut].to_vec();
    out.extend(download);
    out.extend_from_slice(&all[cut..upload_at]);
    out.extend(upload);
    out.extend_from_slice(&all[upload_at..]);
    out
}

fn run() -> Vec<Value> {
    common::run_rules("ftp", "passive-and-active", &frames(), RULES)
}

#[test]
fn control_and_data_channels_as_suricata_logs_them() {
    let recs = run();
    let ftp = of_type(&recs, "ftp");
    let commands: Vec<&str> = ftp.iter().map(|r| r["ftp"]["command"].as_str().unwrap_or("-")).collect();
    assert_eq!(commands, ["-", "USER", "PASS", "PASV", "RETR", "PORT", "STOR", "QUIT"]);
    let control_id = ftp[0]["flow_id"].as_u64().unwrap();
    assert_eq!(ftp[3]["ftp"]["dynamic_port"], 5001);
    assert_eq!(ftp[4]["ftp"]["completion_code"], serde_json::json!(["150", "226"]));
    assert_eq!((&ftp[5]["ftp"]["dynamic_port"], &ftp[5]["ftp"]["mode"]), (&40001.into(), &"active".into()));

    let data = of_type(&recs, "ftp_data");
    assert_eq!(data.len(), 2, "{data:#?}");
    let retr = data.iter().find(|r| r["ftp_data"]["command"] == "RETR").unwrap();
    assert_eq!(retr["ftp_data"]["filename"], "notes.txt");
    assert_eq!((retr["dest_port"].as_u64(), retr["parent_id"].as_u64()), (Some(5001), Some(control_id)));
    let stor = data.iter().find(|r| r["ftp_data"]["command"] == "STOR").unwrap();
    assert_eq!((stor["src_port"].as_u64(), stor["parent_id"].as_u64()), (Some(20), Some(control_id)));

    let files = of_type(&recs, "fileinfo");
    let names: Vec<(&str, u64)> = files
        .iter()
        .map(|r| (r["fileinfo"]["filename"].as_str().unwrap(), r["fileinfo"]["size"].as_u64().unwrap()))
        .collect();
    assert_eq!(names, [("notes.txt", 17), ("up.bin", 14)]);
    assert!(files.iter().all(|r| r["app_proto"] == "ftp-data" && r["parent_id"].as_u64() == Some(control_id)));

    let flows = of_type(&recs, "flow");
    let data_flows: Vec<&&Value> = flows.iter().filter(|f| f["app_proto"] == "ftp-data").collect();
    assert_eq!(data_flows.len(), 2);
    assert!(data_flows.iter().all(|f| f["parent_id"].as_u64() == Some(control_id)));

    let mut sids: Vec<u64> =
        of_type(&recs, "alert").iter().map(|r| r["alert"]["signature_id"].as_u64().unwrap()).collect();
    sids.sort_unstable();
    assert_eq!(sids, [1, 2, 3, 4, 6], "one alert each; no bounce: PORT named the client");
}
