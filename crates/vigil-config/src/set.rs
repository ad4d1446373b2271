//! `--set key=value`: Suricata's `ConfSetFromString`.
//!
//! The dotted key is walked from the root and missing nodes are created; the
//! last node gets the value (children it may have are kept, as in
//! Suricata). vigil applies `--set` after loading the file, which gives the
//! same result as Suricata's "set first, mark final, file cannot override".

use crate::error::{ConfigError, Position};
use crate::tree::{ConfigNode, ConfigTree};

impl ConfigTree {
    /// Set `path` to `value`, creating intermediate nodes.
    ///
    /// `outputs.1.eve-log.types.2.anomaly.types.stream` addresses list items
    /// by index exactly as Suricata does. A node created directly under a
    /// list (`outputs.9.fast.enabled`) becomes a list item keyed by its first
    /// child (`fast`), like `- fast: {...}` in YAML would.
    pub fn set(&mut self, path: &str, value: &str) -> Result<(), ConfigError> {
        let pos = Position::command_line();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(ConfigError::key(pos, path, "invalid key: empty name between dots"));
        }
        let mut cur: &mut ConfigNode = &mut self.root;
        for part in path.split('.') {
            let parent_is_seq = cur.is_seq;
            let needs_key = cur.is_item_map && cur.value.is_none() && cur.child_index(part).is_none();
            if needs_key {
                cur.value = Some(part.to_string());
            }
            let idx = cur.child_or_insert(part, || {
                let mut node = ConfigNode::new(part, pos.clone());
                node.is_item_map = parent_is_seq;
                node
            });
            cur = cur.child_at_mut(idx);
        }
        cur.value = Some(value.to_string());
        cur.value_position = Some(pos);
        Ok(())
    }

    /// Apply one `--set` argument, `key=value`. Blanks before `=` and after
    /// it are dropped, as Suricata does.
    pub fn set_from_arg(&mut self, arg: &str) -> Result<(), ConfigError> {
        let Some((key, value)) = arg.split_once('=') else {
            return Err(ConfigError::at(
                Position::command_line(),
                format!("invalid --set argument {arg:?}: must be key=value"),
            ));
        };
        self.set(key.trim_end(), value.trim_start())
    }
}
