//! The file service end to end: HTTP bodies as files, `fileinfo` records
//! with state, hashes and `stored`, the file keywords (`filename`,
//! `fileext`, `file.name`, `filemd5`, `filesha256`), `filestore` and the
//! `file-store` output's layout, on sessions built with vigil's builders.

mod common;

use common::{of_type, spaced, tcp_session, tempdir, write_pcap};
use serde_json::Value;
use std::path::Path;
use vigil_engine::{run_offline, RunOptions};

fn response(body: &[u8], extra: &str) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 200 OK\r\n{extra}Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    r.extend_from_slice(body);
    r
}

/// Runs the frames with `rules` and `yaml` in a fresh directory; the EVE
/// records and the directory (removed by the caller).
fn run(
    name: &str,
    frames: &[Vec<u8>],
    rules: &str,
    yaml: &str,
    extra: &[(&str, &[u8])],
) -> (Vec<Value>, std::path::PathBuf) {
    let dir = tempdir("files", name);
    write_pcap(&dir.join("in.pcap"), spaced(frames));
    std::fs::write(dir.join("test.rules"), rules).unwrap();
    std::fs::write(dir.join("vigil.yaml"), yaml).unwrap();
    for (file, body) in extra {
        std::fs::write(dir.join(file), body).unwrap();
    }
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        config: Some(dir.join("vigil.yaml")),
        checksum: Some("none".into()),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    };
    run_offline(&opts, &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.join("eve.json")).unwrap();
    (text.lines().map(|l| serde_json::from_str(l).unwrap()).collect(), dir)
}

const EVE: &str = "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        - alert\n        - files:\n            force-hash: [md5, sha1, sha256]\n";

fn sids(recs: &[Value]) -> Vec<u64> {
    let mut v: Vec<u64> = of_type(recs, "alert").iter().map(|r| r["alert"]["signature_id"].as_u64().unwrap()).collect();
    v.sort_unstable();
    v
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn file_keywords_and_fileinfo_records() {
    use md5::Digest;
    let pdf = b"%PDF-1.4 pretend document".to_vec();
    let md5 = hex(&md5::Md5::digest(&pdf));
    let (r1, r2) = (response(&pdf, ""), response(b"zz", "Content-Disposition: attachment; filename=\"notes.txt\"\r\n"));
    let frames = tcp_session(
        80,
        &[(b"GET /docs/Report.PDF?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", &r1), (b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n", &r2)],
    );
    let rules = "\
alert tcp any any -> any any (msg:\"name\"; filename:\"report.pdf\"; sid:1;)
alert tcp any any -> any any (msg:\"ext\"; fileext:\"pdf\"; sid:2;)
alert tcp any any -> any any (msg:\"not doc\"; fileext:!\"doc\"; sid:3;)
alert tcp any any -> any any (msg:\"ext is exact\"; fileext:\"pd\"; sid:4;)
alert http any any -> any any (msg:\"sticky\"; file.name; content:\"notes\"; startswith; sid:5;)
alert http any any -> any any (msg:\"md5 listed\"; filemd5:md5.list; sid:6;)
alert http any any -> any any (msg:\"md5 not listed\"; filemd5:!md5.list; sid:7;)
";
    let list = format!("# listed\n{md5}  report\n");
    let (recs, dir) = run("keywords", &frames, rules, EVE, &[("md5.list", list.as_bytes())]);
    let _ = std::fs::remove_dir_all(&dir);
    // Each rule once per file it matches: 3 matches both files; 7 the one not listed.
    assert_eq!(sids(&recs), vec![1, 2, 3, 3, 5, 6, 7]);
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files.len(), 2, "{files:#?}");
    let f = &files[0]["fileinfo"];
    assert_eq!(f["filename"], "/docs/Report.PDF");
    assert_eq!(f["state"], "CLOSED");
    assert_eq!(f["size"], pdf.len());
    assert_eq!(f["md5"], md5);
    assert_eq!(f["stored"], false);
    assert!(f["sha1"].is_string() && f["sha256"].is_string());
    assert_eq!(files[1]["fileinfo"]["filename"], "notes.txt");
    assert_eq!(files[1]["http"]["url"], "/a");
    // Alerts carry the files of their side, as they stand then, as Suricata's do.
    let alert = of_type(&recs, "alert").into_iter().find(|a| a["alert"]["signature_id"] == 5).unwrap();
    assert_eq!(alert["files"][0]["filename"], "notes.txt", "{alert:#}");
    assert_eq!(alert["files"][0]["stored"], false);
    assert!(alert["files"][0].get("storing").is_none());
}

#[test]
fn filestore_writes_files_by_sha256_with_their_record() {
    use sha2::Digest;
    let body = b"stored file body".to_vec();
    let sha = hex(&sha2::Sha256::digest(&body));
    let (r1, r2) = (response(&body, ""), response(b"not stored", ""));
    let frames = tcp_session(
        80,
        &[(b"GET /keep.bin HTTP/1.1\r\nHost: h\r\n\r\n", &r1), (b"GET /skip.bin HTTP/1.1\r\nHost: h\r\n\r\n", &r2)],
    );
    // The request matches; its response's file, not yet open, is stored.
    let rules =
        "alert http any any -> any any (msg:\"store\"; http.uri; content:\"keep\"; filestore:response,tx; sid:1;)\n";
    let yaml = format!("{EVE}  - file-store:\n      version: 2\n      enabled: yes\n      write-fileinfo: yes\n");
    let (recs, dir) = run("store", &frames, rules, &yaml, &[]);
    let stored = dir.join("filestore").join(&sha[..2]).join(&sha);
    let kept = std::fs::read(&stored);
    let metas: Vec<_> = std::fs::read_dir(stored.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    let all_stored = walk(&dir.join("filestore"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(kept.unwrap(), body);
    assert_eq!(all_stored, 2, "the file and its record, nothing else");
    assert_eq!(metas.len(), 1);
    assert!(metas[0].starts_with(&format!("{sha}.1700000000.")), "{metas:?}");
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files[0]["fileinfo"]["stored"], true);
    assert_eq!(files[0]["fileinfo"]["sid"], serde_json::json!([1]));
    assert_eq!(files[0]["fileinfo"]["file_id"], 1);
    assert_eq!(files[1]["fileinfo"]["stored"], false);
    let stats = of_type(&recs, "stats");
    if let Some(last) = stats.last() {
        assert_eq!(last["stats"]["file_store"]["fs_errors"], 0);
    }
}

/// Files under `dir`, folders not counted.
fn walk(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| if e.path().is_dir() { walk(&e.path()) } else { 1 }).sum())
        .unwrap_or(0)
}

#[test]
fn force_filestore_stores_every_file_and_a_version_1_store_is_refused() {
    let r1 = response(b"one", "");
    let frames = tcp_session(80, &[(b"GET /one HTTP/1.1\r\nHost: h\r\n\r\n", &r1)]);
    let yaml = format!("{EVE}  - file-store:\n      version: 2\n      enabled: yes\n      force-filestore: yes\n");
    let (recs, dir) = run("force", &frames, "", &yaml, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(of_type(&recs, "fileinfo")[0]["fileinfo"]["stored"], true);

    let dir = tempdir("files", "v1");
    write_pcap(&dir.join("in.pcap"), spaced(&frames));
    std::fs::write(dir.join("vigil.yaml"), "outputs:\n  - file-store:\n      enabled: yes\n").unwrap();
    std::fs::write(dir.join("test.rules"), "").unwrap();
    let opts = RunOptions {
        inputs: vec![dir.join("in.pcap")],
        log_dir: Some(dir.clone()),
        config: Some(dir.join("vigil.yaml")),
        exclusive_rules: vec![dir.join("test.rules")],
        ..Default::default()
    };
    let err = run_offline(&opts, &mut |_| {}).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err.to_string().contains("version 1 was removed"), "{err}");
}

/// `filemagic`, `file.magic` and fileinfo `magic` through libmagic, and a
/// store decided by the type: the file's first bytes were held, so it is
/// stored whole. Skipped, and says so, where libmagic is not installed.
#[test]
fn file_types_by_libmagic_decide_rules_and_the_store() {
    if let Err(why) = vigil_capture::magic_available() {
        eprintln!("skipped: {why}");
        return;
    }
    use sha2::Digest;
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x24\0\0\0\x24\x08\x06\0\0\0".to_vec();
    png.resize(600, 0);
    let sha = hex(&sha2::Sha256::digest(&png));
    let text = b"just some words and no magic number at all\n".repeat(20);
    let (r1, r2) = (response(&png, ""), response(&text, ""));
    let frames = tcp_session(
        80,
        &[(b"GET /img HTTP/1.1\r\nHost: h\r\n\r\n", &r1), (b"GET /txt HTTP/1.1\r\nHost: h\r\n\r\n", &r2)],
    );
    let rules = "\
alert http any any -> any any (msg:\"png, any case\"; filemagic:\"png IMAGE\"; filestore; sid:1;)
alert http any any -> any any (msg:\"not png\"; filemagic:!\"PNG\"; sid:2;)
alert http any any -> any any (msg:\"sticky\"; file.magic; content:\"ASCII text\"; sid:3;)
";
    let yaml = format!("{EVE}  - file-store:\n      version: 2\n      enabled: yes\n");
    let (recs, dir) = run("magic", &frames, rules, &yaml, &[]);
    let stored = std::fs::read(dir.join("filestore").join(&sha[..2]).join(&sha));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(sids(&recs), vec![1, 2, 3]);
    assert_eq!(stored.expect("the image was stored"), png);
    let files = of_type(&recs, "fileinfo");
    let magic: Vec<&str> = files.iter().map(|f| f["fileinfo"]["magic"].as_str().unwrap_or_default()).collect();
    assert!(magic[0].starts_with("PNG image data, 36 x 36"), "{magic:?}");
    assert!(magic[1].contains("ASCII text"), "{magic:?}");
    assert_eq!(files[0]["fileinfo"]["stored"], true);
    assert_eq!(files[1]["fileinfo"]["stored"], false);
    // The alert of the storing rule says the file is to be stored.
    let alert = of_type(&recs, "alert").into_iter().find(|a| a["alert"]["signature_id"] == 1).unwrap();
    assert_eq!(alert["files"][0]["storing"], true, "{alert:#}");
    assert!(alert["files"][0]["magic"].as_str().unwrap().starts_with("PNG"));
}

/// A file sent in parts over several flows (`206` with `Content-Range`):
/// each part is logged with its `start` and `end`, and once the parts
/// cover the file, the file is logged whole, with its digests, as
/// Suricata's byterange container does. A `206` that carries all of the
/// file is a file like any other.
#[test]
fn parts_of_a_file_over_several_flows_make_the_file() {
    use sha2::Digest;
    let file: Vec<u8> = (0..300u32).map(|i| (i * 7 % 251) as u8).collect();
    let part = |a: usize, b: usize| {
        let mut r = format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{}\r\nContent-Length: {}\r\n\r\n",
            file.len(),
            b + 1 - a
        )
        .into_bytes();
        r.extend_from_slice(&file[a..=b]);
        r
    };
    let get = b"GET /big.bin HTTP/1.1\r\nHost: h\r\nRange: bytes=0-\r\n\r\n";
    let (p1, p2) = (part(100, 299), part(0, 149));
    let mut frames = tcp_session(80, &[(get, &p1)]);
    frames.extend(tcp_session(8081, &[(get, &p2)]));
    let whole_206 = part(0, 299);
    frames.extend(tcp_session(8082, &[(b"GET /other.bin HTTP/1.1\r\nHost: h\r\n\r\n", &whole_206)]));
    let (recs, dir) = run("ranges", &frames, "", EVE, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let files = of_type(&recs, "fileinfo");
    let f: Vec<&Value> = files.iter().map(|r| &r["fileinfo"]).collect();
    assert_eq!(f.len(), 4, "{f:#?}");
    assert_eq!(
        (f[0]["start"].as_u64(), f[0]["end"].as_u64(), f[0]["size"].as_u64()),
        (Some(100), Some(299), Some(200))
    );
    assert_eq!((f[1]["start"].as_u64(), f[1]["end"].as_u64()), (Some(0), Some(149)));
    // The whole file, once its last part came.
    assert!(f[2].get("start").is_none());
    assert_eq!(f[2]["size"], 300);
    assert_eq!(f[2]["state"], "CLOSED");
    assert_eq!(f[2]["sha256"], hex(&sha2::Sha256::digest(&file)));
    // All of a file in one `206`: no part, no second record.
    assert!(f[3].get("start").is_none());
    assert_eq!(f[3]["filename"], "/other.bin");
    let stats = of_type(&recs, "stats");
    if let Some(last) = stats.last() {
        assert_eq!(last["stats"]["http"]["byterange"]["memuse"], 0, "nothing waits");
    }
}

#[test]
fn a_rule_that_only_stores_matches_where_there_are_files() {
    // Two exchanges: the first answers with a file, the second with no body.
    let (r1, r2) = (response(b"a file", ""), response(b"", ""));
    let frames = tcp_session(
        80,
        &[(b"GET /a.bin HTTP/1.1\r\nHost: h\r\n\r\n", &r1), (b"GET /b HTTP/1.1\r\nHost: h\r\n\r\n", &r2)],
    );
    let rules = "alert http any any -> any any (msg:\"store\"; filestore; sid:7;)\n";
    let (recs, dir) = run("store-alone", &frames, rules, EVE, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let alerts = of_type(&recs, "alert");
    assert_eq!(alerts.len(), 1, "{alerts:#?}");
    assert_eq!(alerts[0]["http"]["url"], "/a.bin");
}

/// An RPC message over UDP between 198.18.0.1:800 and the NFS server 198.18.0.2:2049.
fn nfs_datagram(to_server: bool, rpc: &[u8]) -> Vec<u8> {
    use vigil_wire::build::PacketBuilder;
    let (c, s) = ([198, 18, 0, 1], [198, 18, 0, 2]);
    let b = if to_server { PacketBuilder::ipv4(c, s).udp(800, 2049) } else { PacketBuilder::ipv4(s, c).udp(2049, 800) };
    b.payload(rpc).build_ethernet()
}

#[test]
fn an_nfs_read_is_a_file_logged_from_the_server_without_a_name() {
    let word = |v: u32| v.to_be_bytes().to_vec();
    // NFSv2 READ of 8,192 bytes from offset 0 of a 32-byte handle never looked up.
    let call = [
        word(9),
        word(0),
        word(2),
        word(100_003),
        word(2),
        word(6),
        vec![0; 16],
        vec![7; 32],
        word(0),
        word(8192),
        word(0),
    ]
    .concat();
    // Its answer: OK, the file's attributes (size 4), and the 4 bytes: the whole file.
    let mut attrs = vec![0u8; 68];
    attrs[20..24].copy_from_slice(&4u32.to_be_bytes());
    let reply = [word(9), word(1), word(0), vec![0; 8], word(0), word(0), attrs, word(4), b"data".to_vec()].concat();
    let frames = [nfs_datagram(true, &call), nfs_datagram(false, &reply)];
    let (recs, dir) = run("nfs-read", &frames, "", EVE, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let files = of_type(&recs, "fileinfo");
    assert_eq!(files.len(), 1, "{recs:#?}");
    let f = files[0];
    assert_eq!(
        (f["src_port"].as_u64(), f["dest_port"].as_u64()),
        (Some(2049), Some(800)),
        "the file went to the client"
    );
    assert!(f["fileinfo"].get("filename").is_none(), "a file nobody named has no name");
    assert_eq!((f["fileinfo"]["size"].as_u64(), f["fileinfo"]["state"].as_str()), (Some(4), Some("CLOSED")));
    assert_eq!(f["nfs"]["procedure"], "READ");
    assert_eq!(f["rpc"]["xid"], 9);
}
