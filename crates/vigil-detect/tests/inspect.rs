//! Payload verification semantics, case by case, as Suricata documents them.

use vigil_detect::inspect::*;

fn content(p: &[u8]) -> ContentStep {
    ContentStep::new(p.to_vec(), false)
}

fn run(steps: Vec<Step>, buf: &[u8]) -> bool {
    inspect(&steps, buf, &mut InspectCtx::default())
}

fn rel(p: &[u8], distance: Option<i32>, within: Option<u32>) -> Step {
    let mut c = content(p);
    c.distance = distance;
    c.within = within;
    Step::Content(c)
}

#[test]
fn offset_and_depth_bound_the_window() {
    let mut c = content(b"abc");
    c.offset = 2;
    c.depth = Some(3);
    let steps = || vec![Step::Content(c.clone())];
    assert!(run(steps(), b"xxabcyy"));
    assert!(!run(steps(), b"xxxabcy"), "abc ends past offset+depth");
    assert!(!run(steps(), b"abcxxxx"), "abc starts before offset");
}

#[test]
fn absolute_positions_count_from_the_stream_start() {
    // content:"abc"; offset:2; depth:3; on stream bytes that start at offset `base`.
    let mut c = content(b"abc");
    c.offset = 2;
    c.depth = Some(3);
    let at = |buf: &[u8], base: u64| inspect_at(&[Step::Content(c.clone())], buf, base, &mut InspectCtx::default());
    assert!(at(b"xxabc", 0));
    // Stream offsets 1..6: "abc" at stream offset 2.
    assert!(at(b"xabcyy", 1));
    assert!(!at(b"abcyyy", 1), "abc at stream offset 1 is before offset 2");
    // The window [2, 5) lies wholly before a buffer starting at 5.
    assert!(!at(b"abcabc", 5));
    // isdataat:3 (absolute): byte 3 of the stream exists once the buffer reaches past it.
    let data = |pos, buf: &[u8], base| {
        let steps = [Step::IsDataAt { pos, relative: false, negated: false }];
        inspect_at(&steps, buf, base, &mut InspectCtx::default())
    };
    assert!(data(3, b"z", 3));
    assert!(data(3, b"", 10));
    assert!(!data(3, b"z", 2));
}

#[test]
fn nocase_matches_any_ascii_case() {
    let c = ContentStep::new(b"EvIl".to_vec(), true);
    assert!(run(vec![Step::Content(c.clone())], b"..eViL.."));
    assert!(!run(vec![Step::Content(content(b"EvIl"))], b"..evil.."));
}

#[test]
fn distance_and_within_are_relative_to_the_previous_match() {
    // content:"a"; content:"b"; distance:1; within:2;  -> "b" at 1..3 bytes after "a"
    let steps = || vec![Step::Content(content(b"a")), rel(b"b", Some(1), Some(2))];
    assert!(run(steps(), b"a-b"));
    assert!(!run(steps(), b"ab"), "distance 1 skips the byte right after a");
    assert!(run(steps(), b"a--b"), "within counts from the previous match's end plus distance");
    assert!(!run(steps(), b"a---b"), "within 2 (with distance 1) ends the window 3 bytes after a");
}

#[test]
fn negative_distance_looks_back() {
    let steps = vec![Step::Content(content(b"def")), rel(b"abc", Some(-6), Some(3))];
    assert!(run(steps, b"abcdef"));
}

#[test]
fn a_later_relative_failure_retries_the_earlier_content() {
    // The first "a" is followed by "-", the second by "b": backtracking finds it.
    let steps = vec![Step::Content(content(b"a")), rel(b"b", Some(0), Some(1))];
    assert!(run(steps, b"a-ab"));
}

#[test]
fn negated_content() {
    assert!(run(vec![Step::Content(content(b"x")), Step::Content(negate(content(b"z")))], b"x only"));
    assert!(!run(vec![Step::Content(negate(content(b"only")))], b"x only"));
    // Relative negation: "b" must not directly follow "a".
    let mut nb = negate(content(b"b"));
    nb.distance = Some(0);
    nb.within = Some(1);
    assert!(run(vec![Step::Content(content(b"a")), Step::Content(nb.clone())], b"ac ab"));
    assert!(!run(vec![Step::Content(content(b"a")), Step::Content(nb)], b"ab"));
}

fn negate(mut c: ContentStep) -> ContentStep {
    c.negated = true;
    c
}

#[test]
fn startswith_and_endswith() {
    let mut s = content(b"GET");
    s.depth = Some(3);
    assert!(run(vec![Step::Content(s.clone())], b"GET /"));
    assert!(!run(vec![Step::Content(s)], b" GET /"));
    let mut e = content(b".exe");
    e.endswith = true;
    assert!(run(vec![Step::Content(e.clone())], b"/a.exe"));
    assert!(!run(vec![Step::Content(e)], b"/a.exe?x"));
}

#[test]
fn isdataat() {
    assert!(run(vec![Step::IsDataAt { pos: 3, relative: false, negated: false }], b"abcd"));
    assert!(!run(vec![Step::IsDataAt { pos: 4, relative: false, negated: false }], b"abcd"));
    let after_b = |negated| vec![Step::Content(content(b"b")), Step::IsDataAt { pos: 1, relative: true, negated }];
    assert!(run(after_b(false), b"abcd"));
    // Relative isdataat counts the bytes left after the match: "c" is one.
    assert!(run(after_b(false), b"abc"), "isdataat:1,relative: one byte after b");
    assert!(!run(after_b(false), b"ab"));
    assert!(run(after_b(true), b"ab"), "isdataat:!1,relative: nothing after b");
    assert!(!run(after_b(true), b"abc"));
    // With no earlier match, relative counts from the start: N bytes in an N-byte buffer.
    let from_start = |pos| vec![Step::IsDataAt { pos, relative: true, negated: false }];
    assert!(run(from_start(4), b"abcd"));
    assert!(!run(from_start(5), b"abcd"));
}

fn read(nbytes: u8, offset: i32, base: NumBase) -> Read {
    Read { nbytes, offset, endian: Endian::Big, base, bitmask: None }
}

#[test]
fn byte_test_binary_text_and_bitmask() {
    let t = |r: Read, op, v, negated| {
        Step::ByteTest(ByteTest { read: r, relative: false, negated, op, value: Value::Lit(v) })
    };
    assert!(run(vec![t(read(2, 0, NumBase::Binary), TestOp::Eq, 0x0102, false)], &[1, 2]));
    let mut le = read(2, 0, NumBase::Binary);
    le.endian = Endian::Little;
    assert!(run(vec![t(le, TestOp::Eq, 0x0201, false)], &[1, 2]));
    assert!(run(vec![t(read(3, 1, NumBase::Dec), TestOp::Gt, 99, false)], b"x123"));
    assert!(run(vec![t(read(2, 0, NumBase::Hex), TestOp::Eq, 0xff, false)], b"ff"));
    assert!(run(vec![t(read(1, 0, NumBase::Binary), TestOp::Eq, 5, true)], &[4]), "negated");
    let mut m = read(1, 0, NumBase::Binary);
    m.bitmask = Some(0xf0);
    assert!(run(vec![t(m, TestOp::Eq, 0xa, false)], &[0xa5]), "masked and shifted");
    assert!(!run(vec![t(read(4, 0, NumBase::Binary), TestOp::Eq, 0, false)], &[0, 0]), "past the end");
}

#[test]
fn byte_jump_moves_relative_matching() {
    // A 1-byte length (3), then skip that many bytes: "xyz", then "END" must follow directly.
    let jump = Step::ByteJump(ByteJump {
        read: read(1, 0, NumBase::Binary),
        nbytes_var: None,
        relative: false,
        multiplier: 1,
        align: false,
        from_beginning: false,
        from_end: false,
        post_offset: 0,
    });
    let end = rel(b"END", Some(0), Some(3));
    assert!(run(vec![jump, end], b"\x03xyzEND"));
    let jump = Step::ByteJump(ByteJump {
        read: read(1, 0, NumBase::Binary),
        nbytes_var: None,
        relative: false,
        multiplier: 1,
        align: false,
        from_beginning: false,
        from_end: false,
        post_offset: 0,
    });
    assert!(!run(vec![jump], b"\x09xyz"), "jumping past the end fails");
}

fn jump0(post_offset: i64) -> Step {
    Step::ByteJump(ByteJump {
        read: read(0, 0, NumBase::Binary),
        nbytes_var: None,
        relative: true,
        multiplier: 1,
        align: false,
        from_beginning: false,
        from_end: false,
        post_offset,
    })
}

#[test]
fn byte_jump_of_zero_bytes_moves_by_post_offset_only() {
    // byte_jump:0,0,relative,post_offset -3: back 3 bytes from the end of "cd".
    let steps = || vec![Step::Content(content(b"cd")), jump0(-3), rel(b"bcd", Some(0), Some(3))];
    assert!(run(steps(), b"abcde"));
    assert!(!run(vec![Step::Content(content(b"cd")), jump0(-2), rel(b"bcd", Some(0), Some(3))], b"abcde"));
}

#[test]
fn byte_jump_before_the_start_lands_on_the_first_byte() {
    // post_offset -10 from offset 4 would be -6: Suricata clamps to 0.
    let steps = vec![Step::Content(content(b"cd")), jump0(-10), rel(b"ab", Some(0), Some(2))];
    assert!(run(steps, b"abcde"));
    // Past the end still fails.
    assert!(!run(vec![Step::Content(content(b"cd")), jump0(2)], b"abcde"));
    assert!(run(vec![Step::Content(content(b"cd")), jump0(1)], b"abcde"), "landing on the end is allowed");
}

#[test]
fn byte_jump_reads_its_byte_count_from_a_variable() {
    // byte_extract:1,0,n; byte_jump:n,0,relative; then "END" right after the jump.
    let steps = || {
        vec![
            Step::ByteExtract(ByteExtract {
                read: read(1, 0, NumBase::Binary),
                relative: false,
                multiplier: 1,
                align: 0,
                var: 0,
            }),
            Step::ByteJump(ByteJump {
                read: read(0, 0, NumBase::Binary),
                nbytes_var: Some(0),
                relative: true,
                multiplier: 1,
                align: false,
                from_beginning: false,
                from_end: false,
                post_offset: 0,
            }),
            rel(b"END", Some(0), Some(3)),
        ]
    };
    // n = 2: read the 2-byte value 0x0003 after it, skip 3 bytes.
    assert!(run(steps(), b"\x02\x00\x03xyzEND"));
    // n = 9 is more than a binary read can take: no match, no panic.
    assert!(!run(steps(), b"\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00END"));
    // n = 0 reads nothing and jumps nowhere, as a literal 0 does.
    assert!(run(steps(), b"\x00END"));
}

#[test]
fn byte_extract_feeds_byte_test_and_byte_math() {
    let steps = vec![
        Step::ByteExtract(ByteExtract {
            read: read(1, 0, NumBase::Binary),
            relative: false,
            multiplier: 1,
            align: 0,
            var: 0,
        }),
        Step::ByteMath(ByteMath {
            read: read(1, 1, NumBase::Binary),
            relative: false,
            op: MathOp::Add,
            rvalue: Value::Var(0),
            var: 1,
        }),
        Step::ByteTest(ByteTest {
            read: read(1, 2, NumBase::Binary),
            relative: false,
            negated: false,
            op: TestOp::Eq,
            value: Value::Var(1),
        }),
    ];
    assert!(run(steps, &[2, 3, 5]));
}

#[test]
fn pcre_relative_and_backtracking() {
    let p = |re: &str, relative| Step::Pcre(PcreStep::new(re, PcreFlags::default(), relative, false).unwrap());
    assert!(run(vec![Step::Content(content(b"id=")), p("^[0-9]+;", true)], b"id=x; id=42;"), "retries the content");
    assert!(!run(vec![Step::Content(content(b"id=")), p("^[0-9]+;", true)], b"id=x;"));
    let caseless = PcreStep::new("admin", PcreFlags { caseless: true, ..Default::default() }, false, false).unwrap();
    assert!(run(vec![Step::Pcre(caseless)], b"/ADMIN/"));
}

#[test]
fn pathological_pcre_is_bounded_and_counted() {
    let p = PcreStep::new("(a+)+$", PcreFlags::default(), false, false).unwrap();
    let mut buf = vec![b'a'; 5000];
    buf.push(b'b');
    let mut ctx = InspectCtx::default();
    let start = std::time::Instant::now();
    assert!(!inspect(&[Step::Pcre(p)], &buf, &mut ctx));
    assert_eq!(ctx.pcre_limit_hits, 1);
    assert!(start.elapsed().as_secs() < 5);
}

#[test]
fn backtracking_work_is_bounded() {
    // Many "a"s, each retried, and a relative "b" that never follows.
    let steps = vec![Step::Content(content(b"a")), rel(b"a", Some(0), None), rel(b"b", Some(0), Some(1))];
    let buf = vec![b'a'; 10_000];
    let mut ctx = InspectCtx::default();
    assert!(!inspect(&steps, &buf, &mut ctx));
    assert_eq!(ctx.budget_exhausted, 1);
}

#[test]
fn start_of_pattern_items_stay_first() {
    let p = PcreStep::new("(*UCP)(*UTF)^h\\wllo", PcreFlags { anchored: true, ..Default::default() }, false, false)
        .unwrap();
    assert!(run(vec![Step::Pcre(p)], "héllo".as_bytes()));
}
