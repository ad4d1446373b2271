//! Finding the tests of a suite, selecting them, and naming their themes.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One test: its name (path under `tests/`, `/`-separated) and directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub name: String,
    pub dir: PathBuf,
}

/// Every directory under `tests_dir` holding a `test.yaml`, sorted by name. Nothing
/// below a test directory is a separate test; `tests_dir` itself is never a test.
pub fn discover(tests_dir: &Path) -> io::Result<Vec<TestCase>> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    walk(tests_dir, "", &mut found, &mut seen)?;
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

fn walk(dir: &Path, prefix: &str, found: &mut Vec<TestCase>, seen: &mut BTreeSet<PathBuf>) -> io::Result<()> {
    // Upstream follows symlinks; remembering real paths keeps a link loop finite.
    if !seen.insert(fs::canonicalize(dir)?) {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if !path.is_dir() {
            continue;
        }
        let base = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = if prefix.is_empty() { base } else { format!("{prefix}/{base}") };
        if path.join("test.yaml").is_file() {
            found.push(TestCase { name, dir: path });
        } else {
            walk(&path, &name, found, seen)?;
        }
    }
    Ok(())
}

/// Test names from a list file: one per line, `#` starts a comment, blanks ignored.
pub fn read_list(path: &Path) -> io::Result<Vec<String>> {
    let text = fs::read_to_string(path)?;
    Ok(text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .map(|line| line.trim_end_matches('/').to_string())
        .collect())
}

/// `name -> theme` from `<suite>/manifest.json`, if there is one.
pub fn manifest_themes(suite_root: &Path) -> HashMap<String, String> {
    let Ok(text) = fs::read_to_string(suite_root.join("manifest.json")) else {
        return HashMap::new();
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        eprintln!("vigil-verify: ignoring unreadable {}", suite_root.join("manifest.json").display());
        return HashMap::new();
    };
    manifest
        .get("tests")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t.get("name")?.as_str()?.to_string(), t.get("theme")?.as_str()?.to_string())))
        .collect()
}

/// The theme of a test: the manifest's, else the first path component.
pub fn theme_of(name: &str, themes: &HashMap<String, String>) -> String {
    themes.get(name).cloned().unwrap_or_else(|| name.split('/').next().unwrap_or(name).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_tests_and_lists() {
        let root = std::env::temp_dir().join(format!("vigil-verify-discover-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for dir in ["b", "a/x", "a/y/deeper", "c/sub", "empty/none"] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        for t in ["b", "a/x", "a/y", "c", "c/sub"] {
            fs::write(root.join(t).join("test.yaml"), "").unwrap();
        }
        // Something below a test is part of it, even with its own test.yaml.
        fs::write(root.join("a/y/deeper/test.yaml"), "").unwrap();
        let names: Vec<_> = discover(&root).unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["a/x", "a/y", "b", "c"]);

        let list = root.join("list.txt");
        fs::write(&list, "# passing\na/x\n\n  b  # note\nc/\n").unwrap();
        assert_eq!(read_list(&list).unwrap(), ["a/x", "b", "c"]);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn themes_fall_back_to_the_first_component() {
        let themes: HashMap<_, _> = [("a/x".to_string(), "http".to_string())].into_iter().collect();
        assert_eq!(theme_of("a/x", &themes), "http");
        assert_eq!(theme_of("detect-http-uri/UriTestSig01", &themes), "detect-http-uri");
        assert_eq!(theme_of("plain", &themes), "plain");
    }
}
