//! YAML text → [`ConfigTree`], the way Suricata's loader builds its tree.
//!
//! The walk follows the YAML event stream (from the `granit-parser` event
//! parser that `serde-saphyr` is built on and re-exports) and applies
//! Suricata's rules as it goes:
//!
//! * `%YAML 1.1` and `---` are accepted; another `%YAML` version is an error.
//!   A file without the directive is accepted too (Suricata refuses it).
//! * A key defined again replaces the earlier subtree ("later wins").
//! * A key with dots (`vars.address-groups.HOME_NET: ...`) addresses a
//!   nested node, creating it if needed, without clearing its siblings.
//! * `_` in key names is read as `-` (deprecated spelling, with a warning),
//!   except directly under `address-groups` and `port-groups`.
//! * Plain `~`, `null`, `Null`, `NULL` and empty values are nulls.
//! * `include: file` or `include: [a, b]` in any mapping loads those files
//!   into that mapping at that point; `key: !include file` loads a file as
//!   the value of `key`. Relative names resolve against the including file's
//!   directory (Suricata uses the main file's directory; the two differ only
//!   for includes of includes).
//!
//! Hostile input is data: every failure is a [`ConfigError`] with a
//! position, and sizes, nesting, node counts and include depth are capped.

use crate::error::{ConfigError, Position};
use crate::tree::{ConfigNode, ConfigTree};
use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, Span, StrInput};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest configuration file read, in bytes (each file, includes too).
pub const MAX_FILE_SIZE: u64 = 16 * 1024 * 1024;
/// Deepest nesting of maps and lists (Suricata's loader stops at 128).
pub const MAX_DEPTH: usize = 128;
/// Deepest chain of includes.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Most nodes one tree may hold (the stock file has about 1,000).
pub const MAX_NODES: usize = 200_000;

impl ConfigTree {
    /// Load a configuration file (and what it includes).
    pub fn load_file(path: impl AsRef<Path>) -> Result<ConfigTree, ConfigError> {
        let path = path.as_ref();
        let mut tree = ConfigTree::new();
        let mut loader = Loader::new(&tree);
        let mut root = std::mem::replace(&mut tree.root, ConfigNode::new("", top_position()));
        let res = loader.load_path(path, None, &mut root, 0, 0);
        tree.root = root;
        loader.finish(&mut tree);
        res.map(|()| tree)
    }

    /// Parse configuration text. `name` is what positions call the source;
    /// includes in it resolve against the current directory.
    pub fn parse_str(text: &str, name: &str) -> Result<ConfigTree, ConfigError> {
        let mut tree = ConfigTree::new();
        tree.merge_str(text, name)?;
        Ok(tree)
    }

    /// Merge more configuration text on top of this tree (later wins), as if
    /// it followed the existing file.
    pub fn merge_str(&mut self, text: &str, name: &str) -> Result<(), ConfigError> {
        let mut loader = Loader::new(self);
        let mut root = std::mem::replace(&mut self.root, ConfigNode::new("", top_position()));
        let res = loader.parse_text(text, Arc::from(name), Path::new("."), &mut root, 0, 0);
        self.root = root;
        loader.finish(self);
        res
    }

    /// `--include FILE`: load another file on top of this tree; its keys
    /// replace the same keys already loaded. As in Suricata, a relative
    /// `FILE` resolves against the directory of the main configuration file
    /// (the first file loaded), or the current directory when there is none.
    pub fn include_file(&mut self, path: impl AsRef<Path>) -> Result<(), ConfigError> {
        let base =
            self.files.first().and_then(|f| f.parent()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        let path = path.as_ref();
        let resolved = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
        let mut loader = Loader::new(self);
        let mut root = std::mem::replace(&mut self.root, ConfigNode::new("", top_position()));
        let res = loader.load_path(&resolved, None, &mut root, 0, 0);
        self.root = root;
        loader.finish(self);
        res
    }
}

fn top_position() -> Position {
    Position::new(Arc::from("<root>"), 0, 0)
}

/// State of one load: which files are open (for cycles), how many nodes
/// exist, and what to tell the user afterwards.
struct Loader {
    include_stack: Vec<PathBuf>,
    nodes: usize,
    warnings: Vec<ConfigError>,
    files: Vec<PathBuf>,
}

/// The event source of one file, with positions named after the file.
struct Events<'a> {
    parser: Box<Parser<'a, StrInput<'a>>>,
    file: Arc<str>,
    dir: PathBuf,
}

impl<'a> Events<'a> {
    fn position(&self, span: &Span) -> Position {
        position_of(&self.file, span.start.line(), span.start.col())
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), ConfigError> {
        match self.parser.next() {
            Some(Ok(item)) => Ok(item),
            Some(Err(e)) => {
                let m = e.marker();
                Err(ConfigError::at(position_of(&self.file, m.line(), m.col()), format!("invalid YAML: {}", e.info())))
            }
            None => {
                Err(ConfigError::at(Position::new(self.file.clone(), 0, 0), "invalid YAML: unexpected end of input"))
            }
        }
    }
}

fn position_of(file: &Arc<str>, line: usize, col: usize) -> Position {
    let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    Position::new(file.clone(), clamp(line), clamp(col.saturating_add(1)))
}

/// YAML's null spellings, which Suricata honours only for plain scalars.
fn is_null(value: &str, style: ScalarStyle) -> bool {
    style == ScalarStyle::Plain && matches!(value, "" | "~" | "null" | "Null" | "NULL")
}

/// Suricata reads `_` in key names as `-`, except for variable names.
fn mangle(parent: &ConfigNode, key: &str) -> Option<String> {
    if !key.contains('_') || matches!(parent.name(), "address-groups" | "port-groups") {
        None
    } else {
        Some(key.replace('_', "-"))
    }
}

impl Loader {
    fn new(tree: &ConfigTree) -> Self {
        Loader { include_stack: Vec::new(), nodes: tree.root.node_count(), warnings: Vec::new(), files: Vec::new() }
    }

    fn finish(self, tree: &mut ConfigTree) {
        tree.warnings.extend(self.warnings);
        tree.files.extend(self.files);
    }

    fn new_node(&mut self, name: String, position: Position) -> Result<ConfigNode, ConfigError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(ConfigError::at(position, format!("configuration has more than {MAX_NODES} nodes")));
        }
        Ok(ConfigNode::new(name, position))
    }

    /// Read `path` and merge its content into `target`. `from` is where the
    /// include was asked for (for error positions), `None` for a main file.
    fn load_path(
        &mut self,
        path: &Path,
        from: Option<&Position>,
        target: &mut ConfigNode,
        include_depth: usize,
        depth: usize,
    ) -> Result<(), ConfigError> {
        let display: Arc<str> = Arc::from(path.display().to_string());
        let here = || from.cloned().unwrap_or_else(|| Position::new(display.clone(), 0, 0));
        if include_depth > MAX_INCLUDE_DEPTH {
            return Err(ConfigError::at(here(), format!("includes nested deeper than {MAX_INCLUDE_DEPTH} levels")));
        }
        let what = if from.is_some() { "include file" } else { "configuration file" };
        let io_err = |e: std::io::Error| ConfigError::at(here(), format!("cannot read {what} {}: {e}", path.display()));
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(ConfigError::at(here(), format!("{what} {} is a directory, not a file", path.display())));
        }
        if meta.len() > MAX_FILE_SIZE {
            return Err(ConfigError::at(
                here(),
                format!("{what} {} is larger than {MAX_FILE_SIZE} bytes", path.display()),
            ));
        }
        let canonical = std::fs::canonicalize(path).map_err(io_err)?;
        if let Some(at) = self.include_stack.iter().position(|p| *p == canonical) {
            let mut chain: Vec<String> = self.include_stack[at..].iter().map(|p| p.display().to_string()).collect();
            chain.push(canonical.display().to_string());
            return Err(ConfigError::at(here(), format!("include cycle: {}", chain.join(" -> "))));
        }
        let bytes = read_capped(path).map_err(io_err)?;
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let bad = e.utf8_error().valid_up_to();
                let (line, col) = line_col(&e.as_bytes()[..bad]);
                return Err(ConfigError::at(Position::new(display, line, col), "file is not valid UTF-8 text"));
            }
        };
        self.files.push(path.to_path_buf());
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        self.include_stack.push(canonical);
        let res = self.parse_text(&text, display, &dir, target, include_depth, depth);
        self.include_stack.pop();
        res
    }

    /// Parse a whole YAML stream into `target`; every document is merged.
    fn parse_text(
        &mut self,
        text: &str,
        file: Arc<str>,
        dir: &Path,
        target: &mut ConfigNode,
        include_depth: usize,
        depth: usize,
    ) -> Result<(), ConfigError> {
        let mut options = Options::default();
        options.set_emit_comments(false);
        let mut ev =
            Events { parser: Box::new(Parser::new_from_str_with_options(text, options)), file, dir: dir.to_path_buf() };
        loop {
            let (event, span) = ev.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::StreamEnd => return Ok(()),
                Event::DocumentStart(_, Some(v)) if (v.major, v.minor) != (1, 1) => {
                    return Err(ConfigError::at(
                        ev.position(&span),
                        format!("unsupported %YAML {}.{}: the version must be 1.1", v.major, v.minor),
                    ));
                }
                Event::DocumentStart(..) => {}
                Event::MappingStart(..) => {
                    self.parse_mapping(&mut ev, target, depth + 1, include_depth)?;
                }
                Event::Scalar(v, style, ..) if is_null(&v, style) => {}
                _ => {
                    return Err(ConfigError::at(
                        ev.position(&span),
                        "the configuration must be a mapping of keys to values",
                    ));
                }
            }
        }
    }

    /// Keys and values of a mapping, up to its end, into `node`.
    fn parse_mapping(
        &mut self,
        ev: &mut Events<'_>,
        node: &mut ConfigNode,
        depth: usize,
        include_depth: usize,
    ) -> Result<(), ConfigError> {
        check_depth(node, depth)?;
        loop {
            let (event, span) = ev.next()?;
            let key_pos = ev.position(&span);
            let key = match event {
                Event::MappingEnd => return Ok(()),
                Event::Scalar(k, ..) => k.into_owned(),
                Event::Alias(_) | Event::UnresolvedAlias(_) => {
                    return Err(ConfigError::at(key_pos, "YAML aliases (*name) are not supported"));
                }
                _ => {
                    return Err(ConfigError::at(key_pos, "only plain keys are supported, not lists or maps as keys"));
                }
            };
            if key.is_empty() {
                return Err(ConfigError::at(key_pos, "empty key"));
            }
            if key == "include" {
                self.parse_include(ev, node, &key_pos, include_depth, depth)?;
                continue;
            }
            // A list item that is a map takes its first key as its value.
            if node.is_item_map && node.value.is_none() {
                node.value = Some(mangle(node, &key).unwrap_or_else(|| key.clone()));
            }
            let (value, value_span) = ev.next()?;
            if key.contains('.') {
                let child = self.get_or_create(node, &key, &key_pos)?;
                self.parse_value(ev, value, value_span, child, depth, include_depth)?;
                continue;
            }
            let name = match mangle(node, &key) {
                Some(m) => {
                    self.warnings.push(ConfigError::key(
                        key_pos.clone(),
                        key.clone(),
                        format!("deprecated spelling, use {m:?}"),
                    ));
                    m
                }
                None => key,
            };
            let idx = match node.child_index(&name) {
                Some(i) => {
                    let existing = node.child_at_mut(i);
                    self.nodes = self.nodes.saturating_sub(existing.node_count() - 1);
                    existing.prune();
                    existing.position = key_pos;
                    i
                }
                None => {
                    let child = self.new_node(name, key_pos)?;
                    node.push_child(child)
                }
            };
            let child = node.child_at_mut(idx);
            self.parse_value(ev, value, value_span, child, depth, include_depth)?;
        }
    }

    /// The value of a key (already read as `event`) into `node`.
    fn parse_value(
        &mut self,
        ev: &mut Events<'_>,
        event: Event<'_>,
        span: Span,
        node: &mut ConfigNode,
        depth: usize,
        include_depth: usize,
    ) -> Result<(), ConfigError> {
        let pos = ev.position(&span);
        match event {
            Event::Scalar(v, style, _, tag) => {
                let is_include = tag.as_deref().is_some_and(|t| t.handle() == "!" && t.suffix() == "include");
                if is_include && !is_null(&v, style) {
                    let path = self.resolve(ev, &v);
                    self.load_path(&path, Some(&pos), node, include_depth + 1, depth)?;
                } else if !is_null(&v, style) {
                    node.value = Some(v.into_owned());
                    node.value_position = Some(pos);
                }
                Ok(())
            }
            Event::SequenceStart(..) => {
                node.is_seq = true;
                self.parse_sequence(ev, node, depth + 1, include_depth)
            }
            Event::MappingStart(..) => self.parse_mapping(ev, node, depth + 1, include_depth),
            Event::Alias(_) | Event::UnresolvedAlias(_) => {
                Err(ConfigError::at(pos, "YAML aliases (*name) are not supported"))
            }
            _ => Err(ConfigError::at(pos, "invalid YAML: expected a value")),
        }
    }

    /// Items of a sequence, up to its end, as children `"0"`, `"1"`, ...
    fn parse_sequence(
        &mut self,
        ev: &mut Events<'_>,
        node: &mut ConfigNode,
        depth: usize,
        include_depth: usize,
    ) -> Result<(), ConfigError> {
        check_depth(node, depth)?;
        // Items that already exist (a dotted key reached into this list
        // earlier) are replaced, and the new ones go to the end so that
        // iteration follows the list's order.
        let had_children = !node.children().is_empty();
        let mut replaced = std::collections::HashSet::new();
        let mut items = Vec::new();
        let mut index = 0usize;
        loop {
            let (event, span) = ev.next()?;
            if matches!(event, Event::SequenceEnd) {
                break;
            }
            let pos = ev.position(&span);
            let name = index.to_string();
            index += 1;
            if had_children && node.child_index(&name).is_some() {
                replaced.insert(name.clone());
            }
            let mut item = self.new_node(name, pos)?;
            match event {
                Event::MappingStart(..) => {
                    item.is_item_map = true;
                    self.parse_mapping(ev, &mut item, depth + 1, include_depth)?;
                }
                other => self.parse_value(ev, other, span, &mut item, depth, include_depth)?,
            }
            items.push(item);
        }
        if !replaced.is_empty() {
            let removed = node.remove_children(&replaced);
            self.nodes = self.nodes.saturating_sub(removed);
        }
        for item in items {
            node.push_child(item);
        }
        Ok(())
    }

    /// `include:` in a mapping: one file name or a list of them, each loaded
    /// into `node` in order.
    fn parse_include(
        &mut self,
        ev: &mut Events<'_>,
        node: &mut ConfigNode,
        key_pos: &Position,
        include_depth: usize,
        depth: usize,
    ) -> Result<(), ConfigError> {
        let (event, span) = ev.next()?;
        let pos = ev.position(&span);
        match event {
            Event::Scalar(v, style, ..) => {
                if is_null(&v, style) {
                    return Err(ConfigError::key(key_pos.clone(), "include", "missing file name"));
                }
                let path = self.resolve(ev, &v);
                self.load_path(&path, Some(&pos), node, include_depth + 1, depth)
            }
            Event::SequenceStart(..) => loop {
                let (item, span) = ev.next()?;
                let pos = ev.position(&span);
                match item {
                    Event::SequenceEnd => return Ok(()),
                    Event::Scalar(v, style, ..) if is_null(&v, style) => {}
                    Event::Scalar(v, ..) => {
                        let path = self.resolve(ev, &v);
                        self.load_path(&path, Some(&pos), node, include_depth + 1, depth)?;
                    }
                    _ => return Err(ConfigError::key(pos, "include", "include list items must be file names")),
                }
            },
            _ => Err(ConfigError::key(pos, "include", "include fields cannot be a mapping")),
        }
    }

    fn resolve(&self, ev: &Events<'_>, name: &str) -> PathBuf {
        let p = Path::new(name);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            ev.dir.join(p)
        }
    }

    /// The node at dotted `path` under `node`, created as needed.
    fn get_or_create<'n>(
        &mut self,
        node: &'n mut ConfigNode,
        path: &str,
        pos: &Position,
    ) -> Result<&'n mut ConfigNode, ConfigError> {
        let mut cur = node;
        for part in path.split('.') {
            if part.is_empty() {
                return Err(ConfigError::key(pos.clone(), path, "empty name in dotted key"));
            }
            let idx = match cur.child_index(part) {
                Some(i) => i,
                None => {
                    let child = self.new_node(part.to_string(), pos.clone())?;
                    cur.push_child(child)
                }
            };
            cur = cur.child_at_mut(idx);
        }
        Ok(cur)
    }
}

/// Read a file but never more than the cap (it may grow after `stat`).
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.take(MAX_FILE_SIZE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE_SIZE {
        return Err(std::io::Error::other(format!("larger than {MAX_FILE_SIZE} bytes")));
    }
    Ok(buf)
}

/// 1-based line and column just after `prefix`.
fn line_col(prefix: &[u8]) -> (u32, u32) {
    let line = prefix.iter().filter(|b| **b == b'\n').count() + 1;
    let col = prefix.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
}

/// Refuses maps and lists nested deeper than [`MAX_DEPTH`] (hostile or broken files).
fn check_depth(node: &ConfigNode, depth: usize) -> Result<(), ConfigError> {
    if depth > MAX_DEPTH {
        return Err(ConfigError::at(
            node.position().clone(),
            format!("maps and lists nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(())
}
