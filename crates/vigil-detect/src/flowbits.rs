//! `flowbits`: named flags kept per flow, set by one signature and tested by
//! another, so a rule can depend on what an earlier packet of the flow showed.

use vigil_rules::keywords::flow::BitCmd;

/// What detection keeps per flow: its flowbits and flowints, and whether a `pass`
/// signature has passed the rest of the flow or an IPS drop dropped it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDetect {
    pub bits: FlowBits,
    /// `flowint` counters.
    pub ints: crate::flowint::FlowInts,
    /// A signature that sets bits or counters matched since the flow's
    /// variables were last written out (EVE's `metadata`).
    pub vars_changed: bool,
    /// Flow variables `pcre` captured, by name, in the order first set.
    pub flowvars: Vec<(std::sync::Arc<str>, Vec<u8>)>,
    /// The latest entropy `entropy` computed on each buffer (EVE's
    /// `metadata.entropy`), as `f64` bits so the state stays `Eq`.
    pub entropy: Vec<(std::sync::Arc<str>, u64)>,
    /// A `pass` signature matched a packet of the flow: later packets are not inspected.
    pub passed: bool,
    /// A drop of flow scope (IPS): later packets are dropped uninspected.
    pub dropped: bool,
    /// The drop log wrote a packet of the dropped flow in this direction
    /// (to server, to client), for `drop: flows: start`.
    pub drop_logged: [bool; 2],
    /// Exception policies the flow met, one bit per target (the engine's
    /// order), for the flow record.
    pub exceptions: u8,
    /// An exception policy passed the flow (`pass-flow`, `bypass`).
    pub exception_passed: bool,
    /// `bypass`: the flow is not tracked, parsed or inspected any more.
    pub bypassed: bool,
    /// IP-only signatures were inspected in this direction (to server, to
    /// client): they are not again.
    pub ip_only_done: [bool; 2],
    /// Firewall mode's state of the flow.
    pub fw: crate::engine::firewall::FwFlow,
    /// `(transaction id, signature)` of the matches on counted transactions
    /// (inspected at each change): each signature matches one once. The
    /// oldest go past [`MAX_TX_MATCHES`].
    pub tx_matched: Vec<(u64, u32)>,
}

/// Matches on counted transactions a flow remembers.
pub const MAX_TX_MATCHES: usize = 1024;

impl FlowDetect {
    /// Whether signature `sig` matched transaction `tx` before; remembers it if not.
    pub fn tx_matched_before(&mut self, tx: u64, sig: u32) -> bool {
        if self.tx_matched.contains(&(tx, sig)) {
            return true;
        }
        if self.tx_matched.len() >= MAX_TX_MATCHES {
            self.tx_matched.remove(0);
        }
        self.tx_matched.push((tx, sig));
        false
    }
}

impl FlowDetect {
    /// The flow was turned round: what was kept per direction changes sides.
    pub fn reverse(&mut self) {
        self.drop_logged.swap(0, 1);
        self.ip_only_done.swap(0, 1);
        self.fw.reverse();
    }
}

/// The flow variables a flow keeps, and the bytes of each.
pub const MAX_FLOWVARS: usize = 64;
pub const MAX_FLOWVAR_LEN: usize = 4096;

impl FlowDetect {
    /// Sets flow variable `name` (a new name past [`MAX_FLOWVARS`] is not
    /// kept; a value is kept to [`MAX_FLOWVAR_LEN`] bytes).
    pub fn set_flowvar(&mut self, name: &std::sync::Arc<str>, value: &[u8]) {
        let value = value[..value.len().min(MAX_FLOWVAR_LEN)].to_vec();
        let room = self.flowvars.len() < MAX_FLOWVARS;
        match self.flowvars.iter_mut().find(|(n, _)| n == name) {
            Some(v) => v.1 = value,
            None if room => self.flowvars.push((name.clone(), value)),
            None => {}
        }
        self.vars_changed = true;
    }
}

impl FlowDetect {
    /// Keeps what `entropy` computed on a buffer, in place of the last value.
    pub fn set_entropy(&mut self, name: &std::sync::Arc<str>, value: f64) {
        let room = self.entropy.len() < MAX_FLOWVARS;
        match self.entropy.iter_mut().find(|(n, _)| n == name) {
            Some(v) => v.1 = value.to_bits(),
            None if room => self.entropy.push((name.clone(), value.to_bits())),
            None => {}
        }
        self.vars_changed = true;
    }
}

/// A flow's bits, indexed by the ids the engine gave the names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowBits(Vec<u64>);

impl FlowBits {
    pub fn get(&self, id: u16) -> bool {
        self.0.get(id as usize / 64).is_some_and(|w| w >> (id % 64) & 1 == 1)
    }

    /// The same bits under another engine's ids (`map[old] = new`); bits the
    /// other engine has no name for are dropped.
    pub fn remapped(&self, map: &[Option<u16>]) -> FlowBits {
        let mut out = FlowBits::default();
        for (old, new) in map.iter().enumerate() {
            if let Some(new) = new {
                if self.get(old as u16) {
                    out.set(*new, true);
                }
            }
        }
        out
    }

    pub fn set(&mut self, id: u16, on: bool) {
        let w = id as usize / 64;
        if self.0.len() <= w {
            if !on {
                return;
            }
            self.0.resize(w + 1, 0);
        }
        if on {
            self.0[w] |= 1 << (id % 64);
        } else {
            self.0[w] &= !(1 << (id % 64));
        }
    }
}

/// `flowbits:isset|isnotset,a|b` or `a&b`, names resolved to ids.
#[derive(Debug, Clone)]
pub struct BitTest {
    pub ids: Vec<u16>,
    /// `|`: any of the names; otherwise all of them.
    pub any: bool,
    /// `isnotset`.
    pub negated: bool,
}

impl BitTest {
    pub fn matches(&self, bits: Option<&FlowBits>) -> bool {
        // Without a flow there are no bits to test: both forms fail, as in Suricata.
        let Some(bits) = bits else { return false };
        let is = |id: &u16| bits.get(*id) != self.negated;
        if self.any {
            self.ids.iter().any(is)
        } else {
            self.ids.iter().all(is)
        }
    }
}

/// `flowbits:set|unset|toggle,name`, applied when the whole signature matches.
#[derive(Debug, Clone)]
pub struct BitAction {
    pub ids: Vec<u16>,
    pub cmd: BitCmd,
}

impl BitAction {
    pub fn apply(&self, bits: &mut FlowBits) {
        for &id in &self.ids {
            match self.cmd {
                BitCmd::Set => bits.set(id, true),
                BitCmd::Unset => bits.set(id, false),
                BitCmd::Toggle => bits.set(id, !bits.get(id)),
                _ => {}
            }
        }
    }
}

/// A signature's flowbits as written, before the engine numbers the names.
#[derive(Debug, Clone, Default)]
pub struct FlowbitsSpec {
    /// (names, any, negated)
    pub tests: Vec<(Vec<String>, bool, bool)>,
    pub actions: Vec<(Vec<String>, BitCmd)>,
}

impl FlowbitsSpec {
    /// Suricata's ordering rank: signatures that only set bits run before
    /// those that set and test, then those without flowbits, then those that
    /// only test, so a setter earlier in a packet is seen by a tester.
    pub fn rank(&self) -> u8 {
        match (self.actions.is_empty(), self.tests.is_empty()) {
            (false, true) => 0,
            (false, false) => 1,
            (true, true) => 2,
            (true, false) => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_follow_their_names_to_new_ids() {
        let mut bits = FlowBits::default();
        bits.set(0, true);
        bits.set(2, true);
        bits.set(70, true);
        // Old id 0 is now 5, old 2 is gone, old 70 is now 1.
        let mut map = vec![None; 71];
        map[0] = Some(5);
        map[1] = Some(0);
        map[70] = Some(1);
        let new = bits.remapped(&map);
        assert!(new.get(5) && new.get(1));
        assert!(!new.get(0) && !new.get(2) && !new.get(70));
    }
}
