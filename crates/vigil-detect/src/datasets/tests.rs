use super::*;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vigil-datasets-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn spec(text: &str) -> DatasetSpec {
    let rule = format!("alert dns any any -> any any (dns.query; {text}; sid:1;)");
    let set = vigil_rules::Loader::new().load_str(&rule, "t.rules").unwrap();
    let opt = set.rules[0].options.iter().find(|o| matches!(o.value, vigil_rules::Value::Dataset(_))).cloned();
    match opt.map(|o| o.value) {
        Some(vigil_rules::Value::Dataset(d)) => *d,
        other => panic!("{other:?} {:?}", set.errors),
    }
}

fn op(sets: &Datasets, text: &str) -> SetOp {
    SetOp::of_rule(&spec(text), sets, None).unwrap()
}

#[test]
fn set_unset_isset_isnotset() {
    let sets = Datasets::new(DatasetsSetup::default());
    let set = op(&sets, "dataset:set,seen,type string");
    let isset = op(&sets, "dataset:isset,seen");
    let isnotset = op(&sets, "dataset:isnotset,seen");
    let unset = op(&sets, "dataset:unset,seen");
    assert!(isnotset.matches(b"a") && !isset.matches(b"a"));
    assert!(set.matches(b"a"), "added now");
    assert!(!set.matches(b"a"), "there already");
    assert!(isset.matches(b"a") && !isnotset.matches(b"a"));
    assert!(unset.matches(b"a") && !unset.matches(b"a"));
    assert!(Arc::ptr_eq(&set.set, &unset.set));
    // Without a type, a name no one made is an error; with another, too.
    assert!(SetOp::of_rule(&spec("dataset:isset,nobody"), &sets, None).is_err());
    assert!(SetOp::of_rule(&spec("dataset:isset,seen,type md5"), &sets, None).is_err());
}

#[test]
fn values_take_the_sets_form() {
    let sets = Datasets::new(DatasetsSetup::default());
    let md5 = op(&sets, "dataset:set,h,type md5");
    assert!(!md5.matches(b"not sixteen"), "a digest of another size is no value");
    assert!(md5.matches(&[7u8; 16]));
    let ip = op(&sets, "dataset:set,addrs,type ip");
    assert!(ip.matches(&[198, 18, 0, 1]));
    let isset = op(&sets, "dataset:isset,addrs");
    let mut v4 = [0u8; 16];
    v4[..4].copy_from_slice(&[198, 18, 0, 1]);
    assert!(isset.matches(&v4), "an IPv4 address in an ip set is its four bytes and zeros");
    // Empty buffers match nothing; a value of another size is not in a set.
    let v4set = op(&sets, "dataset:isnotset,four,type ipv4");
    assert!(!v4set.matches(b""));
    assert!(v4set.matches(&[0u8; 16]), "an IPv6 address is not in an ipv4 set");
}

#[test]
fn a_reload_keeps_written_and_declared_sets_only() {
    let sets = Datasets::new(DatasetsSetup::default());
    let kept = op(&sets, "dataset:set,kept,type string,state kept.lst");
    let _ = op(&sets, "dataset:set,loaded,type string");
    assert!(kept.matches(b"a"));
    sets.prepare_reload();
    let names: Vec<String> = sets.sets().iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["kept"]);
    assert!(!op(&sets, "dataset:set,kept").matches(b"a"), "its values stay");
}

#[test]
fn state_is_read_and_written_in_the_data_dir() {
    let d = dir("state");
    std::fs::write(d.join("seen.csv"), "ZXhhbXBsZS5jb20=\n").unwrap();
    let sets = Datasets::new(DatasetsSetup { data_dir: d.clone(), ..DatasetsSetup::default() });
    let set = op(&sets, "dataset:set,seen,type string,state seen.csv");
    assert!(!set.matches(b"example.com"), "loaded from the state file");
    assert!(set.matches(b"vigil.test"));
    let done = sets.save_all();
    assert!(done.iter().all(Result::is_ok), "{done:?}");
    assert_eq!(std::fs::read_to_string(d.join("seen.csv")).unwrap(), "ZXhhbXBsZS5jb20=\ndmlnaWwudGVzdA==\n");
    // A state file not written yet is an empty set; a file to load must exist.
    assert!(SetOp::of_rule(&spec("dataset:set,fresh,type string,state none.csv"), &sets, None).is_ok());
    assert!(SetOp::of_rule(&spec("dataset:isset,gone,type string,load none.csv"), &sets, None).is_err());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn load_files_are_found_beside_the_rule_file_and_reputations_compare() {
    let d = dir("load");
    std::fs::write(d.join("bad.rep"), "# md5 of the names\n1d5920f4b44b27a802bd77c4f0536f5a,300\n").unwrap();
    let rules = d.join("local.rules");
    let sets = Datasets::new(DatasetsSetup::default());
    let rep = spec("datarep:bad,>,200,load bad.rep,type md5");
    let op = SetOp::of_rule(&rep, &sets, rules.to_str()).unwrap();
    let key = [0x1d, 0x59, 0x20, 0xf4, 0xb4, 0x4b, 0x27, 0xa8, 0x02, 0xbd, 0x77, 0xc4, 0xf0, 0x53, 0x6f, 0x5a];
    assert!(op.matches(&key));
    assert!(!op.matches(&[0; 16]));
    std::fs::write(d.join("worse.rep"), "1d5920f4b44b27a802bd77c4f0536f5a,65536\n").unwrap();
    let e = SetOp::of_rule(&spec("datarep:worse,>,1,load worse.rep,type md5"), &sets, rules.to_str()).unwrap_err();
    assert!(e.contains("invalid datarep value"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_memcap_and_the_hashsize_limits_bound_sets() {
    let sets = Datasets::new(DatasetsSetup::default());
    let small = op(&sets, "dataset:set,small,type string,memcap 100");
    assert!(small.matches(b"0123456789"));
    assert!(!small.matches(b"another value"), "past the memcap");
    assert_eq!((small.set.len(), small.set.refused()), (1, 1));
    let e = SetOp::of_rule(&spec("dataset:set,big,type string,hashsize 70000"), &sets, None).unwrap_err();
    assert!(e.contains("single-hashsize"), "{e}");
}
