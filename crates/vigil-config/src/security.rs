//! `security`: what vigil lets rules do. Only `security.lua` is read; the
//! process limits (`limit-noproc`, `landlock`) are Suricata's own and are
//! reported as ignored keys.

use crate::read::{Errors, Section};

/// `security.lua`: Lua rule scripts and their sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LuaSecurity {
    /// `allow-rules`: rules with the `lua` keyword load (Suricata 8: yes).
    pub allow_rules: bool,
    /// `max-bytes`: memory one script's state may hold.
    pub max_bytes: u64,
    /// `max-instructions`: Lua instructions one call of a script may run.
    pub max_instructions: u64,
    /// `allow-restricted-functions`: the whole standard library (`io`,
    /// `os`, `pcall`, ...), not the sandbox's part of it.
    pub allow_restricted_functions: bool,
}

impl Default for LuaSecurity {
    /// Suricata 8.0.6's defaults (measured: a script over 500,000
    /// instructions or 500,000 bytes fails there).
    fn default() -> Self {
        LuaSecurity {
            allow_rules: true,
            max_bytes: 500_000,
            max_instructions: 500_000,
            allow_restricted_functions: false,
        }
    }
}

impl LuaSecurity {
    pub(crate) fn read(sec: &Section<'_>, errs: &mut Errors) -> LuaSecurity {
        let lua = sec.child("lua");
        let d = LuaSecurity::default();
        LuaSecurity {
            allow_rules: lua.bool("allow-rules", d.allow_rules, errs),
            max_bytes: lua.size_max("max-bytes", u64::from(u32::MAX), errs).unwrap_or(d.max_bytes),
            max_instructions: lua
                .int_in("max-instructions", 1, i64::from(u32::MAX), errs)
                .map_or(d.max_instructions, |v| v as u64),
            allow_restricted_functions: lua.bool("allow-restricted-functions", d.allow_restricted_functions, errs),
        }
    }
}
