//! What the file service computes and keeps for a run, decided once from
//! the outputs (`file-store`, `fileinfo`'s `force-hash`) and the rules
//! (`filemd5`, `filesha1`, `filesha256`, `filestore`).

use crate::error::EngineError;
use vigil_applayer::FileConfig;
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
    for eve in config.outputs.enabled_eve_logs() {
        eve.types.files_force_hash.iter().for_each(|h| force(h));
    }
    if let Some(fs) = store {
        fs.force_hash.iter().for_each(|h| force(h));
        if fs.force_magic {
            warnings.push("outputs.file-store.force-magic: vigil has no libmagic support; no magic is logged".into());
        }
        if fs.stream_depth.is_some() {
            warnings.push(
                "outputs.file-store.stream-depth is not applied: files are tracked up to stream.reassembly.depth"
                    .into(),
            );
        }
    }
    let mut wants_store = false;
    for sig in rules.engine.as_deref().map(|e| e.signatures()).unwrap_or_default() {
        wants_store |= sig.filestore.is_some();
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
    match store {
        Some(fs) => {
            // Stored files are named by their sha256.
            cfg.sha256 = true;
            cfg.keep = true;
            cfg.store_all = fs.force_filestore;
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
