//! `datasets`: sets declared in the configuration, the defaults and limits
//! of every set, and where rules may have sets written.

use crate::read::{Errors, Section};

/// One set declared under `datasets` (any key but `defaults`, `limits`
/// and `rules`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetDecl {
    pub name: String,
    /// `type` as written (`string`, `md5`, `sha256`, `ipv4`, `ip`); checked
    /// where the set is made.
    pub kind: String,
    pub load: Option<String>,
    pub save: Option<String>,
    pub state: Option<String>,
    pub memcap: Option<u64>,
    pub hashsize: Option<u64>,
}

/// The `datasets` section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datasets {
    /// `defaults.memcap`: a set's memory bound where it names none.
    pub default_memcap: Option<u64>,
    /// `defaults.hashsize`.
    pub default_hashsize: Option<u64>,
    /// `limits.single-hashsize`: the largest `hashsize` one set may ask for.
    pub single_hashsize: u64,
    /// `limits.total-hashsizes`: the most all sets together may ask for.
    pub total_hashsizes: u64,
    /// `rules.allow-write`: rules may `save` or keep `state`.
    pub allow_write: bool,
    /// `rules.allow-absolute-filenames`: the files they write may be named
    /// by absolute paths or reach out of the data directory with `..`.
    pub allow_absolute: bool,
    pub sets: Vec<DatasetDecl>,
}

impl Default for Datasets {
    /// Suricata 8's defaults.
    fn default() -> Self {
        Datasets {
            default_memcap: None,
            default_hashsize: None,
            single_hashsize: 65_536,
            total_hashsizes: 16_777_216,
            allow_write: true,
            allow_absolute: false,
            sets: Vec::new(),
        }
    }
}

impl Datasets {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> Datasets {
        let d = Datasets::default();
        let defaults = sec.child("defaults");
        let limits = sec.child("limits");
        let rules = sec.child("rules");
        let sets = sec
            .children()
            // Scalars (`enabled`) are no sets.
            .filter(|s| s.has_children() && !matches!(s.name(), "defaults" | "limits" | "rules"))
            .map(|s| DatasetDecl {
                name: s.name().to_string(),
                kind: s.string("type", errs).unwrap_or_else(|| {
                    s.error("", errs, "a dataset needs a type");
                    String::new()
                }),
                load: s.string("load", errs),
                save: s.string("save", errs),
                state: s.string("state", errs),
                memcap: s.size_max("memcap", u64::MAX, errs),
                hashsize: s.int_in("hashsize", 1, i64::from(u32::MAX), errs).map(|v| v as u64),
            })
            .collect();
        Datasets {
            default_memcap: defaults.size_max("memcap", u64::MAX, errs),
            default_hashsize: defaults.int_in("hashsize", 1, i64::from(u32::MAX), errs).map(|v| v as u64),
            single_hashsize: limits
                .int_in("single-hashsize", 1, i64::from(u32::MAX), errs)
                .map_or(d.single_hashsize, |v| v as u64),
            total_hashsizes: limits
                .int_in("total-hashsizes", 1, i64::from(u32::MAX), errs)
                .map_or(d.total_hashsizes, |v| v as u64),
            allow_write: rules.bool("allow-write", d.allow_write, errs),
            allow_absolute: rules.bool("allow-absolute-filenames", d.allow_absolute, errs),
            sets,
        }
    }
}
