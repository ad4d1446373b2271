//! Hostile input: errors, never a panic or a hang.

use std::time::{Duration, Instant};
use vigil_config::{Config, ConfigTree, MAX_DEPTH, MAX_FILE_SIZE, MAX_NODES};

/// Parse and type `text`, asserting it finishes quickly; returns the error
/// text if loading failed.
fn survive(text: &str) -> Option<String> {
    let start = Instant::now();
    let res = ConfigTree::parse_str(text, "hostile.yaml");
    let out = match res {
        Ok(tree) => {
            let _ = Config::from_tree(&tree);
            let _ = tree.dump();
            None
        }
        Err(e) => Some(e.to_string()),
    };
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
    out
}

#[test]
fn deep_block_nesting() {
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&" ".repeat(i));
        text.push_str("a:\n");
    }
    let err = survive(&text).expect("too deep");
    assert!(err.contains("nested deeper") || err.contains("invalid YAML"), "{err}");
}

#[test]
fn deep_flow_nesting() {
    for (open, close) in [("[", "]"), ("{a: ", "}")] {
        let text = format!("a: {}1{}\n", open.repeat(100_000), close.repeat(100_000));
        assert!(survive(&text).is_some());
    }
}

#[test]
fn nesting_just_under_the_cap_is_fine() {
    let depth = MAX_DEPTH - 2;
    let text = format!("a: {}1{}\n", "{b: ".repeat(depth), "}".repeat(depth));
    assert_eq!(survive(&text), None);
}

#[test]
fn one_megabyte_lines() {
    let big = "x".repeat(1 << 20);
    // A long value is fine.
    let text = format!("a: {big}\n");
    assert_eq!(survive(&text), None);
    let tree = ConfigTree::parse_str(&text, "t").unwrap();
    assert_eq!(tree.get_str("a").map(str::len), Some(1 << 20));
    // A long key, a long unkeyed line, a long quoted line: errors or not,
    // but quick and calm.
    survive(&format!("{big}: 1\n"));
    survive(&format!("{big}\n"));
    survive(&format!("a: \"{big}\n"));
    survive(&format!("a: [{}]\n", "1,".repeat(1 << 19)));
}

#[test]
fn binary_garbage() {
    // A small deterministic generator: no dependency needed.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let len = (next() % 4096) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        survive(&String::from_utf8_lossy(&bytes));
        // Garbage that looks a bit like YAML.
        let alphabet = b" \n\t:-[]{}#&*!|>'\"%@`,?abc01.\\";
        let text: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize] as char).collect();
        survive(&text);
        let _ = round;
    }
}

#[test]
fn invalid_utf8_file_and_oversized_file() {
    let dir = std::env::temp_dir().join(format!("vigil-config-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("bin.yaml");
    std::fs::write(&bin, b"a: 1\nb: \xff\xfe\x00\x01\n").unwrap();
    let err = ConfigTree::load_file(&bin).unwrap_err();
    assert_eq!((err.position.line, err.position.column), (2, 4), "{err}");
    assert!(err.reason.contains("UTF-8"), "{err}");

    let big = dir.join("big.yaml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(MAX_FILE_SIZE + 1).unwrap();
    let err = ConfigTree::load_file(&big).unwrap_err();
    assert!(err.reason.contains("larger than"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn self_include_is_a_cycle_not_a_stack_overflow() {
    let dir = std::env::temp_dir().join(format!("vigil-config-self-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("self.yaml");
    std::fs::write(&f, "a: !include self.yaml\n").unwrap();
    let err = ConfigTree::load_file(&f).unwrap_err();
    assert!(err.reason.starts_with("include cycle"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn many_nodes_are_capped() {
    // More list items than the node cap: refused.
    let text = format!("a: [{}1]\n", "1,".repeat(MAX_NODES + 10));
    let err = survive(&text).expect("over the node cap");
    assert!(err.contains("nodes"), "{err}");
}

#[test]
fn big_maps_and_lists_load_in_linear_time() {
    let n = 50_000;
    let flow_map = format!("a: {{{}}}\n", (0..n).map(|i| format!("k{i}: {i}")).collect::<Vec<_>>().join(", "));
    assert_eq!(survive(&flow_map), None);
    let dotted: String = (0..n).map(|i| format!("a.k{i}: {i}\n")).collect();
    let start = Instant::now();
    let tree = ConfigTree::parse_str(&dotted, "t").unwrap();
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(tree.get_str("a.k49999"), Some("49999"));
    assert_eq!(survive(&format!("a: [{}]\n", "1,".repeat(n))), None);
}

#[test]
fn repeated_keys_do_not_grow_without_bound() {
    // Redefining a key frees its old subtree from the node budget.
    let mut text = String::new();
    for _ in 0..20_000 {
        text.push_str("a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
    }
    assert_eq!(survive(&text), None);
}

#[test]
fn nesting_counts_across_includes() {
    // Each file nests 100 levels and includes the next at the bottom: the
    // depth cap applies to the whole tree, not per file.
    let dir = std::env::temp_dir().join(format!("vigil-config-deepinc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..10 {
        let mut text = String::new();
        for d in 0..100 {
            text.push_str(&"  ".repeat(d));
            text.push_str("a:\n");
        }
        text.push_str(&"  ".repeat(100));
        text.push_str(&format!("b: !include f{}.yaml\n", i + 1));
        std::fs::write(dir.join(format!("f{i}.yaml")), text).unwrap();
    }
    std::fs::write(dir.join("f10.yaml"), "end: 1\n").unwrap();
    let err = ConfigTree::load_file(dir.join("f0.yaml")).unwrap_err();
    assert!(err.reason.contains("nested deeper"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn include_depth_is_capped() {
    let dir = std::env::temp_dir().join(format!("vigil-config-incdepth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..40 {
        std::fs::write(dir.join(format!("f{i}.yaml")), format!("k{i}: 1\ninclude: f{}.yaml\n", i + 1)).unwrap();
    }
    std::fs::write(dir.join("f40.yaml"), "end: 1\n").unwrap();
    let err = ConfigTree::load_file(dir.join("f0.yaml")).unwrap_err();
    assert!(err.reason.contains("includes nested deeper"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
