//! What the file service computes and keeps for a run, decided once from
//! the outputs (`file-store`, `fileinfo`'s `force-hash` and `force-magic`)
//! and the rules (`filemd5`, `filesha1`, `filesha256`, `filestore`,
//! `filemagic`/`file.magic`).

use crate::error::EngineError;
use vigil_applayer::{BufferId, FileConfig, HoldBudget, MagicFn};
use vigil_config::Config;
use vigil_detect::compile::{AppCheck, HashKind};

/// The file configuration, with warnings for what is asked but not done.
pub(crate) fn file_config(
    config: &Config,
    rules: &crate::rules::LoadedRules,
    warnings: &mut Vec<String>,
) -> Result<FileConfig, EngineError> {
    let stores = &config.outputs.file_store;
    // Suricata 8 only has the version 2 store, and refuses to start otherwise.
    if let Some(fs) = stores.iter().find(|f| f.version.as_deref() != Some("2")) {
        return Err(EngineError::Config(vec![format!(
            "outputs.file-store: version {} is not supported: file-store version 1 was removed, set `version: 2`",
            fs.version.as_deref().unwrap_or("(none)")
        )]));
    }
    if stores.len() > 1 {
        warnings.push("outputs.file-store: only the first enabled file-store is used".into());
    }
    let store = stores.first();
    let mut cfg = FileConfig::default();
    let mut force = |name: &str| match name {
        "md5" => cfg.md5 = true,
        "sha1" => cfg.sha1 = true,
        "sha256" => cfg.sha256 = true,
        _ => {}
    };
    let mut force_magic = false;
    for eve in config.outputs.enabled_eve_logs() {
        eve.types.files_force_hash.iter().for_each(|h| force(h));
        force_magic |= eve.types.files_force_magic;
    }
    if let Some(fs) = store {
        fs.force_hash.iter().for_each(|h| force(h));
        force_magic |= fs.force_magic;
        if fs.stream_depth.is_some() {
            warnings.push(
                "outputs.file-store.stream-depth is not applied: files are tracked up to stream.reassembly.depth"
                    .into(),
            );
        }
    }
    let mut wants_store = false;
    let mut magic_sids = Vec::new();
    for sig in rules.engine.as_deref().map(|e| e.signatures()).unwrap_or_default() {
        wants_store |= sig.filestore.is_some();
        if sig.tx.iter().flat_map(|t| t.buffers.iter()).any(|b| b.id == BufferId::FileMagic) {
            magic_sids.push(sig.sid);
        }
        for check in sig.tx.iter().flat_map(|t| t.checks.iter()) {
            if let AppCheck::FileHash { hash: h, .. } = check {
                match h.kind {
                    HashKind::Md5 => cfg.md5 = true,
                    HashKind::Sha1 => cfg.sha1 = true,
                    HashKind::Sha256 => cfg.sha256 = true,
                }
            }
        }
    }
    if force_magic || !magic_sids.is_empty() {
        // `magic-file`: the database to load instead of libmagic's default.
        vigil_capture::set_magic_database(config.magic_file.as_deref());
        match vigil_capture::magic_available() {
            Ok(()) => cfg.magic = Some(MagicFn(vigil_capture::describe_magic)),
            Err(why) if magic_sids.is_empty() => {
                warnings.push(format!("force-magic: {why}; no file magic is logged"));
            }
            Err(why) => warnings.push(format!(
                "{} rule(s) use filemagic/file.magic (sid {}{}): {why}; they never match",
                magic_sids.len(),
                magic_sids.iter().take(5).map(u32::to_string).collect::<Vec<_>>().join(", "),
                if magic_sids.len() > 5 { ", ..." } else { "" }
            )),
        }
    }
    match store {
        Some(fs) => {
            // Stored files are named by their sha256.
            cfg.sha256 = true;
            cfg.keep = true;
            cfg.store_all = fs.force_filestore;
            // A filestore rule may decide once it has seen the file (its
            // type, its hash): hold each file's bytes until then, within a
            // bound for all workers. Made once per run (a few bytes, never freed).
            cfg.hold = wants_store && !fs.force_filestore;
            if cfg.hold {
                cfg.hold_budget = Some(Box::leak(Box::new(HoldBudget::new(fs.hold_memcap))));
            }
        }
        None if wants_store => {
            // Suricata's words, which operators grep for, then what it means.
            warnings.push(
                "One or more rule(s) depends on the file-store output log which is not enabled. Enable the output \"file-store\" (no file is stored)."
                    .into(),
            )
        }
        None => {}
    }
    Ok(cfg)
}
