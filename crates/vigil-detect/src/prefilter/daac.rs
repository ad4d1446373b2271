//! The pure-Rust matcher: daachorse over lower-cased patterns and a
//! lower-cased copy of the buffer; case-sensitive patterns are re-checked
//! against the original bytes.

use super::{Pattern, PrefilterError};
use daachorse::{DoubleArrayAhoCorasick, DoubleArrayAhoCorasickBuilder, MatchKind};

pub(super) struct DaacMatcher {
    ac: DoubleArrayAhoCorasick<u32>,
    /// For each distinct lower-cased literal: the patterns that share it.
    users: Vec<Vec<User>>,
    len: usize,
}

struct User {
    id: u32,
    /// `None` for nocase; otherwise the exact bytes to confirm.
    exact: Option<Box<[u8]>>,
}

/// Reusable buffers: the lower-cased haystack and a generation-stamped
/// "already reported" table (reset by bumping the generation, not clearing).
#[derive(Default)]
pub(super) struct DaacScratch {
    lower: Vec<u8>,
    reported: Vec<u32>,
    generation: u32,
}

impl DaacMatcher {
    pub(super) fn build(patterns: &[Pattern]) -> Result<Self, PrefilterError> {
        let mut index = std::collections::HashMap::<Vec<u8>, u32>::new();
        let mut literals = Vec::new();
        let mut users: Vec<Vec<User>> = Vec::new();
        for (id, p) in patterns.iter().enumerate() {
            let lower = p.bytes.to_ascii_lowercase();
            let slot = *index.entry(lower.clone()).or_insert_with(|| {
                literals.push(lower);
                users.push(Vec::new());
                (users.len() - 1) as u32
            });
            let exact = (!p.nocase).then(|| p.bytes.clone().into_boxed_slice());
            users[slot as usize].push(User { id: id as u32, exact });
        }
        let ac = DoubleArrayAhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build_with_values(literals.iter().enumerate().map(|(i, l)| (l.as_slice(), i as u32)))
            .map_err(|e| PrefilterError::Compile(e.to_string()))?;
        Ok(DaacMatcher { ac, users, len: patterns.len() })
    }

    pub(super) fn scan(&self, s: &mut DaacScratch, hay: &[u8], on_match: &mut dyn FnMut(u32)) {
        if s.reported.len() != self.len {
            s.reported = vec![0; self.len];
            s.generation = 0;
        }
        s.generation = s.generation.wrapping_add(1);
        if s.generation == 0 {
            s.reported.fill(0);
            s.generation = 1;
        }
        s.lower.clear();
        s.lower.extend(hay.iter().map(u8::to_ascii_lowercase));
        for m in self.ac.find_overlapping_iter(&s.lower) {
            for u in &self.users[m.value() as usize] {
                if s.reported[u.id as usize] == s.generation {
                    continue;
                }
                if let Some(exact) = &u.exact {
                    if hay.get(m.start()..m.end()) != Some(exact) {
                        continue;
                    }
                }
                s.reported[u.id as usize] = s.generation;
                on_match(u.id);
            }
        }
    }
}
