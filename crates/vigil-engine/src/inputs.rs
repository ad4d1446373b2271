//! Expands `-r` arguments: a file is read as given; a directory contributes
//! every regular file in it, in name order, as Suricata's pcap-file mode does.

use std::path::{Path, PathBuf};

pub(crate) fn expand(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| format!("{}: {e}", input.display()))?;
        if meta.is_dir() {
            files.extend(dir_files(input)?);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

fn dir_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
    files.sort();
    Ok(files)
}
