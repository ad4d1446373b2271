//! The raw configuration tree: Suricata's `ConfNode` model.
//!
//! Every node has a name, an optional scalar value kept as a string, ordered
//! children and the position it was read from. A YAML sequence becomes a node
//! whose children are named `"0"`, `"1"`, ... A sequence item that is a map
//! (`- eve-log: {...}`) becomes child `"N"` whose *value* is the item's first
//! key (`"eve-log"`) and whose children are the map's keys, so that
//! `outputs.1.eve-log.enabled` addresses it exactly as in Suricata.

use crate::error::{ConfigError, Position};
use crate::value;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

/// Nodes with more children than this get a name index, so that loading a
/// map or list with many entries stays linear.
const INDEX_THRESHOLD: usize = 16;

/// One node of the configuration tree.
///
/// Equality compares names, values and children; positions are where a node
/// came from, not what it says, so two trees loaded from different files
/// with the same content are equal.
#[derive(Clone)]
pub struct ConfigNode {
    pub(crate) name: String,
    pub(crate) value: Option<String>,
    /// Children in order; names are unique. Change only through the
    /// methods below, which keep `index` in step.
    children: Vec<ConfigNode>,
    /// Child name → position, once there are many children.
    index: Option<HashMap<String, usize>>,
    /// The node's value was a YAML sequence (children are `"0"`, `"1"`, ...).
    pub(crate) is_seq: bool,
    /// The node is a map that was itself a sequence item; its first key
    /// becomes its value (Suricata's `is_seq` on item nodes).
    pub(crate) is_item_map: bool,
    /// Where the key (or the sequence item) starts.
    pub(crate) position: Position,
    /// Where the scalar value starts, when it has one.
    pub(crate) value_position: Option<Position>,
}

impl fmt::Debug for ConfigNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigNode")
            .field("name", &self.name)
            .field("value", &self.value)
            .field("is_seq", &self.is_seq)
            .field("position", &self.position)
            .field("children", &self.children)
            .finish()
    }
}

impl PartialEq for ConfigNode {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.value == other.value
            && self.is_seq == other.is_seq
            && self.children == other.children
    }
}

impl ConfigNode {
    /// A new node without value or children.
    pub fn new(name: impl Into<String>, position: Position) -> Self {
        ConfigNode {
            name: name.into(),
            value: None,
            children: Vec::new(),
            index: None,
            is_seq: false,
            is_item_map: false,
            position,
            value_position: None,
        }
    }

    /// The node's own name (`"eve-log"`, `"0"`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scalar value, if any. YAML nulls (`~`, `null`, empty) have none.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// Children in file order.
    pub fn children(&self) -> &[ConfigNode] {
        &self.children
    }

    /// Whether the node's value was a YAML sequence.
    pub fn is_sequence(&self) -> bool {
        self.is_seq
    }

    /// Where the node's key (or sequence item) starts.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Where the node's value starts; the key's position when it has no
    /// scalar value. Errors about a value point here.
    pub fn value_position(&self) -> &Position {
        self.value_position.as_ref().unwrap_or(&self.position)
    }

    /// The direct child called `name`.
    pub fn child(&self, name: &str) -> Option<&ConfigNode> {
        self.child_index(name).map(|i| &self.children[i])
    }

    /// Where child `name` is among the children.
    pub(crate) fn child_index(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.children.iter().position(|c| c.name == name),
        }
    }

    pub(crate) fn child_at_mut(&mut self, i: usize) -> &mut ConfigNode {
        &mut self.children[i]
    }

    /// Append a child whose name is not taken yet; returns its position.
    pub(crate) fn push_child(&mut self, child: ConfigNode) -> usize {
        let i = self.children.len();
        if let Some(index) = &mut self.index {
            index.insert(child.name.clone(), i);
        }
        self.children.push(child);
        if self.index.is_none() && self.children.len() > INDEX_THRESHOLD {
            self.rebuild_index();
        }
        i
    }

    /// The child `name`, appended (as created by `make`) when missing.
    pub(crate) fn child_or_insert(&mut self, name: &str, make: impl FnOnce() -> ConfigNode) -> usize {
        match self.child_index(name) {
            Some(i) => i,
            None => self.push_child(make()),
        }
    }

    /// Remove the children whose names are in `names`, keeping the order
    /// of the rest; returns how many nodes went away in total.
    pub(crate) fn remove_children(&mut self, names: &std::collections::HashSet<String>) -> usize {
        let mut removed = 0;
        self.children.retain(|c| {
            let gone = names.contains(&c.name);
            if gone {
                removed += c.node_count();
            }
            !gone
        });
        self.rebuild_index();
        removed
    }

    fn rebuild_index(&mut self) {
        self.index = (self.children.len() > INDEX_THRESHOLD)
            .then(|| self.children.iter().enumerate().map(|(i, c)| (c.name.clone(), i)).collect());
    }

    /// The value of the direct child `name`.
    pub fn child_value(&self, name: &str) -> Option<&str> {
        self.child(name).and_then(ConfigNode::value)
    }

    /// The descendant at a dotted path relative to this node
    /// (`"types.2.anomaly"`). Names cannot contain dots, as in Suricata.
    pub fn get(&self, path: &str) -> Option<&ConfigNode> {
        path.split('.').try_fold(self, |node, part| node.child(part))
    }

    /// In a list such as `outputs` or `eve-log.types`, the map of the item
    /// whose key is `name`: for `- eve-log: {...}` that is the node holding
    /// `enabled`, `filename`, ... Items written as a bare scalar (`- flow`)
    /// have no map; use [`ConfigNode::find_item_node`] to see those.
    pub fn find_item(&self, name: &str) -> Option<&ConfigNode> {
        self.find_item_node(name).and_then(|item| item.child(name))
    }

    /// The list item (the `"N"` node) whose value is `name`, whether it was
    /// written `- name` or `- name: {...}`.
    pub fn find_item_node(&self, name: &str) -> Option<&ConfigNode> {
        self.children.iter().find(|c| c.value.as_deref() == Some(name))
    }

    /// All list items (the `"N"` nodes) whose value is `name`, in order.
    pub fn find_items<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a ConfigNode> + 'a {
        self.children.iter().filter(move |c| c.value.as_deref() == Some(name))
    }

    /// The list item that has a child `key` with value `value`
    /// (Suricata's `ConfNodeLookupKeyValue`: `af-packet` item with
    /// `interface: eth0`).
    pub fn find_item_by(&self, key: &str, value: &str) -> Option<&ConfigNode> {
        self.children.iter().find(|c| c.child_value(key) == Some(value))
    }

    /// Count of this node and all its descendants.
    pub fn node_count(&self) -> usize {
        1 + self.children.iter().map(ConfigNode::node_count).sum::<usize>()
    }

    /// Clear value and children: what Suricata does to a key that is
    /// defined again ("later wins" replaces the whole subtree).
    pub(crate) fn prune(&mut self) {
        self.value = None;
        self.value_position = None;
        self.children.clear();
        self.index = None;
        self.is_seq = false;
    }
}

/// A loaded configuration: the root node plus what the loader noticed on
/// the way (deprecated spellings), and which files it read.
#[derive(Clone, Debug)]
pub struct ConfigTree {
    pub(crate) root: ConfigNode,
    pub(crate) warnings: Vec<ConfigError>,
    pub(crate) files: Vec<std::path::PathBuf>,
}

impl PartialEq for ConfigTree {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Default for ConfigTree {
    fn default() -> Self {
        ConfigTree::new()
    }
}

impl ConfigTree {
    /// An empty tree.
    pub fn new() -> Self {
        ConfigTree {
            root: ConfigNode::new("", Position::new("<root>".into(), 0, 0)),
            warnings: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The root node; its children are the top-level keys.
    pub fn root(&self) -> &ConfigNode {
        &self.root
    }

    /// Non-fatal notes from loading: deprecated `_` in key names, etc.
    pub fn warnings(&self) -> &[ConfigError] {
        &self.warnings
    }

    /// Files read so far (the main file, includes, `--include` files).
    pub fn files(&self) -> &[std::path::PathBuf] {
        &self.files
    }

    /// The node at a dotted path (`"outputs.1.eve-log.filename"`).
    pub fn get(&self, path: &str) -> Option<&ConfigNode> {
        self.root.get(path)
    }

    /// Top-level children, in file order.
    pub fn children(&self) -> &[ConfigNode] {
        self.root.children()
    }

    /// The scalar at `path`; `None` when absent or null.
    pub fn get_str(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(ConfigNode::value)
    }

    /// The boolean at `path` under Suricata's truth rules; `Ok(None)` when
    /// absent or null; an error naming file:line:col and the key otherwise.
    pub fn get_bool(&self, path: &str) -> Result<Option<bool>, ConfigError> {
        self.convert(path, |s| value::parse_bool(s).ok_or_else(|| value::bool_reason(s)))
    }

    /// The integer at `path` as `ConfGetInt` reads it (`strtoimax` base 0).
    pub fn get_int(&self, path: &str) -> Result<Option<i64>, ConfigError> {
        self.convert(path, value::parse_int)
    }

    /// The byte size at `path` (`64mb`, `1 GiB`, `4096`), for keys where
    /// Suricata uses `ParseSizeStringU64` (memcaps, depths, buffer sizes).
    pub fn get_size(&self, path: &str) -> Result<Option<u64>, ConfigError> {
        self.convert(path, value::parse_size)
    }

    /// The duration at `path` (`10s`, `500ms`, `5m`), for keys where
    /// Suricata uses `ParseTimeString`.
    pub fn get_time(&self, path: &str) -> Result<Option<Duration>, ConfigError> {
        self.convert(path, value::parse_time)
    }

    /// The float at `path` (`ConfGetFloat`).
    pub fn get_float(&self, path: &str) -> Result<Option<f64>, ConfigError> {
        self.convert(path, value::parse_float)
    }

    fn convert<T>(&self, path: &str, f: impl FnOnce(&str) -> Result<T, String>) -> Result<Option<T>, ConfigError> {
        let Some(node) = self.get(path) else {
            return Ok(None);
        };
        let Some(v) = node.value() else {
            return Ok(None);
        };
        f(v).map(Some).map_err(|reason| ConfigError::key(node.value_position().clone(), path, reason))
    }

    /// In the list at `list_path`, the map of the item keyed `name`
    /// (`find_item("outputs", "eve-log")`).
    pub fn find_item(&self, list_path: &str, name: &str) -> Option<&ConfigNode> {
        self.get(list_path).and_then(|l| l.find_item(name))
    }

    /// The dotted path of every node, with its value, in Suricata's
    /// `--dump-config` style (`outputs.1.eve-log.enabled = yes`).
    pub fn dump(&self) -> String {
        fn walk(node: &ConfigNode, prefix: &str, out: &mut String) {
            for c in &node.children {
                let path = if prefix.is_empty() { c.name.clone() } else { format!("{prefix}.{}", c.name) };
                out.push_str(&path);
                out.push_str(" = ");
                out.push_str(c.value.as_deref().unwrap_or("(null)"));
                out.push('\n');
                walk(c, &path, out);
            }
        }
        let mut out = String::new();
        walk(&self.root, "", &mut out);
        out
    }
}
