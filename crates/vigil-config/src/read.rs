//! Typed reads from the tree with Suricata's conversions, collecting errors.
//!
//! A [`Section`] is a node (maybe absent) plus its full dotted path, so every
//! error can name the key the user wrote. A bad value records an error and
//! yields the caller's default: one typo never stops the rest of the
//! configuration from loading.

use crate::error::ConfigError;
use crate::tree::ConfigNode;
use crate::value;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// Errors found while typing a tree.
pub(crate) type Errors = Vec<ConfigError>;

/// The keys the typed reader asked for, by the node they were asked of
/// (its address): what the configuration could have said, for telling a
/// mistyped key from one vigil reads.
#[derive(Default)]
pub(crate) struct Asked(RefCell<HashMap<usize, HashSet<String>>>);

impl Asked {
    fn record(&self, parent: &ConfigNode, key: &str) {
        let id = parent as *const ConfigNode as usize;
        self.0.borrow_mut().entry(id).or_default().insert(key.to_string());
    }

    pub(crate) fn of(&self, parent: &ConfigNode) -> Option<HashSet<String>> {
        self.0.borrow().get(&(parent as *const ConfigNode as usize)).cloned()
    }
}

/// A place in the tree: the node there (if the key exists) and its path.
#[derive(Clone)]
pub(crate) struct Section<'a> {
    pub(crate) node: Option<&'a ConfigNode>,
    pub(crate) path: String,
    asked: Option<&'a Asked>,
}

impl<'a> Section<'a> {
    /// The root section of a read that records the keys it asks for.
    pub(crate) fn recording(node: &'a ConfigNode, asked: &'a Asked) -> Self {
        Section { node: Some(node), path: String::new(), asked: Some(asked) }
    }

    /// A section of another node (a list item read as a map) in the same read.
    pub(crate) fn with_node(&self, node: Option<&'a ConfigNode>, path: impl Into<String>) -> Self {
        Section { node, path: path.into(), asked: self.asked }
    }

    fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The section for child `key` (absent when this one is).
    pub(crate) fn child(&self, key: &str) -> Section<'a> {
        if let (Some(asked), Some(n)) = (self.asked, self.node) {
            asked.record(n, key);
        }
        Section { node: self.node.and_then(|n| n.child(key)), path: self.key_path(key), asked: self.asked }
    }

    /// This node's key.
    pub(crate) fn name(&self) -> &'a str {
        self.node.map_or("", |n| n.name())
    }

    /// Whether this node holds keys (a map or a list), not a value.
    pub(crate) fn has_children(&self) -> bool {
        self.node.is_some_and(|n| !n.children().is_empty())
    }

    /// Children of this node, each as a section.
    pub(crate) fn children(&self) -> impl Iterator<Item = Section<'a>> + '_ {
        self.node.into_iter().flat_map(|n| n.children()).map(|c| {
            // Keys read by walking them are all read.
            if let (Some(asked), Some(n)) = (self.asked, self.node) {
                asked.record(n, c.name());
            }
            Section { node: Some(c), path: self.key_path(c.name()), asked: self.asked }
        })
    }

    /// The scalar of child `key`, or an error when `key` holds a list or map.
    /// Absent keys and YAML nulls are `None`.
    pub(crate) fn scalar(&self, key: &str, errs: &mut Errors) -> Option<(&'a str, &'a ConfigNode)> {
        self.child(key).own_scalar(errs)
    }

    /// This node's own scalar (see [`Section::scalar`]).
    pub(crate) fn own_scalar(&self, errs: &mut Errors) -> Option<(&'a str, &'a ConfigNode)> {
        let node = self.node?;
        match node.value() {
            Some(v) if node.children().is_empty() => Some((v, node)),
            _ if node.children().is_empty() => None,
            _ => {
                let what = if node.is_sequence() { "a list" } else { "a map" };
                errs.push(ConfigError::key(
                    node.position().clone(),
                    self.path.clone(),
                    format!("expected a single value, got {what}"),
                ));
                None
            }
        }
    }

    /// Convert child `key` with `f`; on failure record an error naming the
    /// key and return `None`.
    pub(crate) fn convert<T>(
        &self,
        key: &str,
        errs: &mut Errors,
        f: impl FnOnce(&str) -> Result<T, String>,
    ) -> Option<T> {
        let (v, node) = self.scalar(key, errs)?;
        match f(v) {
            Ok(t) => Some(t),
            Err(reason) => {
                errs.push(ConfigError::key(node.value_position().clone(), self.key_path(key), reason));
                None
            }
        }
    }

    /// A string value.
    pub(crate) fn string(&self, key: &str, errs: &mut Errors) -> Option<String> {
        self.scalar(key, errs).map(|(v, _)| v.to_string())
    }

    /// A boolean by Suricata's truth table, `None` when absent or bad.
    pub(crate) fn opt_bool(&self, key: &str, errs: &mut Errors) -> Option<bool> {
        self.convert(key, errs, |s| value::parse_bool(s).ok_or_else(|| value::bool_reason(s)))
    }

    /// A boolean, `default` when absent or bad.
    pub(crate) fn bool(&self, key: &str, default: bool, errs: &mut Errors) -> bool {
        self.opt_bool(key, errs).unwrap_or(default)
    }

    /// An integer read as `ConfGetInt` does, which must lie in `min..=max`.
    pub(crate) fn int_in(&self, key: &str, min: i64, max: i64, errs: &mut Errors) -> Option<i64> {
        self.convert(key, errs, |s| {
            let v = value::parse_int(s)?;
            if (min..=max).contains(&v) {
                Ok(v)
            } else {
                Err(format!("value {v} out of range ({min}-{max})"))
            }
        })
    }

    /// A size in bytes (`64mb`, `32 KiB`), which must not exceed `max`.
    /// A size (`64mb`, `32 KiB`, bytes) of at most `max`. One that cannot
    /// be read is fatal: Suricata refuses to start on it.
    pub(crate) fn size_max(&self, key: &str, max: u64, errs: &mut Errors) -> Option<u64> {
        let before = errs.len();
        let v = self.convert(key, errs, |s| {
            let v = value::parse_size(s)?;
            if v <= max {
                Ok(v)
            } else {
                Err(format!("size {v} is larger than the maximum {max}"))
            }
        });
        if errs.len() > before {
            if let Some(e) = errs.pop() {
                errs.push(e.fatal());
            }
        }
        v
    }

    /// A string list: a YAML list of scalars. A null is an empty list; a
    /// single value or a map is an error (`None`).
    pub(crate) fn string_list(&self, key: &str, errs: &mut Errors) -> Option<Vec<String>> {
        let sec = self.child(key);
        let node = sec.node?;
        if node.is_sequence() {
            let items = sec.children().filter_map(|item| item.own_scalar(errs));
            return Some(items.map(|(v, _)| v.to_string()).collect());
        }
        if node.value().is_none() && node.children().is_empty() {
            return Some(Vec::new());
        }
        sec.error("", errs, "expected a list");
        None
    }

    /// Record an error about child `key` (or this node when `key` is empty).
    pub(crate) fn error(&self, key: &str, errs: &mut Errors, reason: impl Into<String>) {
        let sec = if key.is_empty() { self.clone() } else { self.child(key) };
        let pos = sec
            .node
            .or(self.node)
            .map(|n| n.value_position().clone())
            .unwrap_or_else(crate::error::Position::command_line);
        errs.push(ConfigError::key(pos, sec.path, reason));
    }
}
