//! `rules_analysis.txt`: Suricata's readable engine analysis, one block per
//! loaded rule with what vigil knows of it (the kind of signature, its
//! application protocol, its fast pattern) and the warnings vigil checks
//! for (a `filestore` rule without a `file-store` output). Suricata's other
//! heuristics (content without `flow`, both directions inspected, ...) are
//! not repeated.

use serde_json::Value;
use std::fmt::Write as _;

/// What a block says of one rule beyond its `rules.json` record.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Notes {
    pub filestore: bool,
}

/// The kind of signature in Suricata's words.
fn kind(sig_type: &str) -> Option<&'static str> {
    Some(match sig_type {
        "ip_only" => "ip only",
        "like_ip_only" | "pkt" => "packet inspecting",
        "pd_only" => "PD only",
        "de_only" => "DE only",
        "pkt_stream" | "stream" => "stream inspecting",
        "app_layer" => "app-layer inspecting",
        "app_tx" => "App-layer TX inspecting",
        _ => return None,
    })
}

/// The whole file: `now` is the wall clock (UTC, Suricata's day-first date).
pub(crate) fn document(records: &[Value], notes: &[Notes], file_store: bool, now: vigil_types::Timestamp) -> String {
    let rule = "-".repeat(67);
    let secs = now.secs();
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = vigil_output::civil_from_days(secs.div_euclid(86_400));
    let mut out = format!(
        "{rule}\nDate: {d:02}/{m:02}/{y:04} -- {:02}:{:02}:{:02}\n{rule}\n",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    );
    for (rec, note) in records.iter().zip(notes) {
        let _ = writeln!(out, "== Sid: {} ==", rec["id"]);
        let _ = writeln!(out, "{}", rec["raw"].as_str().unwrap_or_default());
        if let Some(k) = rec["type"].as_str().and_then(kind) {
            let _ = writeln!(out, "    Rule is {k}.");
        }
        if let Some(app) = rec["app_proto"].as_str().filter(|a| *a != "unknown") {
            let _ = writeln!(out, "    App layer protocol is {app}.");
        }
        if let (Some(p), Some(b)) = (rec["mpm"]["pattern"].as_str(), rec["mpm"]["buffer"].as_str()) {
            let _ = writeln!(out, "    Fast Pattern \"{p}\" on \"{b}\" buffer.");
        }
        if note.filestore && !file_store {
            out.push_str("    Warning: Rule requires file-store but the output file-store is not enabled.\n");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_say_what_vigil_knows() {
        let recs = vec![
            json!({"id": 10, "raw": "alert http any any -> any any (file.name; content:\".exe\"; filestore; sid:10;)",
                   "type": "app_tx", "app_proto": "http_any", "mpm": {"buffer": "file.name", "pattern": ".exe"}}),
            json!({"id": 1, "raw": "alert ip 1.2.3.4 any -> any any (sid:1;)", "type": "ip_only", "app_proto": "unknown"}),
        ];
        let notes = [Notes { filestore: true }, Notes::default()];
        let now = vigil_types::Timestamp::from_micros(1_795_759_889, 0);
        let text = document(&recs, &notes, false, now);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "Date: 27/11/2026 -- 06:11:29");
        assert_eq!(lines[3], "== Sid: 10 ==");
        assert_eq!(lines[5], "    Rule is App-layer TX inspecting.");
        assert_eq!(lines[6], "    App layer protocol is http_any.");
        assert_eq!(lines[7], "    Fast Pattern \".exe\" on \"file.name\" buffer.");
        assert_eq!(lines[8], "    Warning: Rule requires file-store but the output file-store is not enabled.");
        assert!(text.contains("== Sid: 1 ==\nalert ip 1.2.3.4 any -> any any (sid:1;)\n    Rule is ip only.\n\n"));
        assert!(!document(&recs, &notes, true, now).contains("Warning"), "with the output, no warning");
    }
}
