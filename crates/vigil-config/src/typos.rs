//! Mistyped keys: a key of a section vigil reads that vigil never asked
//! for, and that is one or two letters away from one it did ask for
//! (`depht` for `depth`), is reported with the key it probably meant.
//! Suricata reads such a key as absent without a word; vigil says so, as a
//! configuration error (a warning, fatal with `--init-errors-fatal`). Keys
//! far from every asked-for one are Suricata's own that vigil does not
//! read, and are left alone (as are top-level sections, which the
//! ignored-keys warning names).

use crate::error::ConfigError;
use crate::read::Asked;
use crate::tree::ConfigNode;

/// Mistyped keys under `node` (at dotted `path`), in file order.
pub(crate) fn find(node: &ConfigNode, path: &str, asked: &Asked, out: &mut Vec<ConfigError>) {
    let wanted = asked.of(node);
    for (i, child) in node.children().iter().enumerate() {
        let name = child.name();
        let child_path = match (path.is_empty(), node.is_sequence()) {
            (true, _) => name.to_string(),
            (false, true) => format!("{path}.{i}"),
            (false, false) => format!("{path}.{name}"),
        };
        // List items are read one by one; a map's keys are checked against
        // those asked of it (a map nothing was asked of is not read at all).
        let read = node.is_sequence() || wanted.as_ref().is_some_and(|w| w.contains(name));
        if read {
            find(child, &child_path, asked, out);
            continue;
        }
        // Top-level keys vigil does not read are listed as ignored instead:
        // Suricata has many sections vigil has no use for (`nflog`, ...).
        let Some(wanted) = wanted.as_ref().filter(|_| !path.is_empty()) else { continue };
        if let Some(meant) = closest(name, wanted) {
            out.push(ConfigError::key(
                child.position().clone(),
                child_path,
                format!("not a key vigil reads; a typo of {meant:?}? (Suricata would ignore it too)"),
            ));
        }
    }
}

/// The asked-for key `name` is most likely a typo of: at most two edits
/// away (one for short keys), and not `name` told apart only by `-`/`_`
/// (Suricata's spelling differences vigil reads as the same key elsewhere).
fn closest<'a>(name: &str, wanted: &'a std::collections::HashSet<String>) -> Option<&'a str> {
    let limit = if name.len() <= 4 { 1 } else { 2 };
    wanted
        .iter()
        .map(|w| (edits(name, w), w))
        .filter(|(d, w)| *d > 0 && *d <= limit && name.replace('_', "-") != w.replace('_', "-"))
        .min()
        .map(|(_, w)| w.as_str())
}

/// Levenshtein distance, a transposition counting as one edit.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_of_asked_keys_only() {
        let wanted: std::collections::HashSet<String> =
            ["depth", "memcap", "toserver-chunk-size", "raw"].iter().map(|s| s.to_string()).collect();
        assert_eq!(closest("depht", &wanted), Some("depth"));
        assert_eq!(closest("memcapp", &wanted), Some("memcap"));
        assert_eq!(closest("toserver_chunk_size", &wanted), None, "a spelling vigil reads alike");
        assert_eq!(closest("segment-prealloc", &wanted), None, "a key vigil does not read");
        assert_eq!(closest("raq", &wanted), Some("raw"));
        assert_eq!(closest("rxx", &wanted), None, "short keys get one edit");
        assert_eq!(edits("depht", "depth"), 1);
    }
}
