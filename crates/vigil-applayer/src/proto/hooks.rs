//! The states a protocol's transactions go through, per side, as firewall
//! rules name them (`ssh:request_banner_done`): Suricata 8's application
//! layer hooks.

use super::ProtoTx;
use crate::progress::Progress;
use vigil_types::Direction;

/// A protocol's states per side, in the order a transaction reaches them.
/// Every protocol has at least `request_started`/`request_complete` (and
/// the `response_` pair); those name its first and last state.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// Named states of the request side, first to last (empty: only the
    /// generic two).
    pub to_server: &'static [&'static str],
    pub to_client: &'static [&'static str],
}

const GENERIC_TS: &[&str] = &["request_started", "request_complete"];
const GENERIC_TC: &[&str] = &["response_started", "response_complete"];

impl Hooks {
    /// A protocol whose transactions only start and complete.
    pub const GENERIC: Hooks = Hooks { to_server: &[], to_client: &[] };

    /// The states of side `dir`, by number.
    pub fn states(&self, dir: Direction) -> &'static [&'static str] {
        match (dir, self.to_server.is_empty(), self.to_client.is_empty()) {
            (Direction::ToServer, true, _) => GENERIC_TS,
            (Direction::ToServer, false, _) => self.to_server,
            (Direction::ToClient, _, true) => GENERIC_TC,
            (Direction::ToClient, _, false) => self.to_client,
        }
    }

    /// The number of the state a hook names, and its side: a named state,
    /// or the generic first and last ones.
    pub fn state(&self, name: &str) -> Option<(Direction, u8)> {
        for dir in [Direction::ToServer, Direction::ToClient] {
            let states = self.states(dir);
            let (started, complete) = match dir {
                Direction::ToServer => ("request_started", "request_complete"),
                Direction::ToClient => ("response_started", "response_complete"),
            };
            if name == started {
                return Some((dir, 0));
            }
            if name == complete {
                return Some((dir, (states.len() - 1) as u8));
            }
            if let Some(i) = states.iter().position(|s| *s == name) {
                return Some((dir, i as u8));
            }
        }
        None
    }

    /// Every name a rule may use, as `--list-app-layer-hooks` prints them:
    /// the generic start, the named states, the generic end, per side.
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (dir, named) in [(Direction::ToServer, self.to_server), (Direction::ToClient, self.to_client)] {
            let generic = if dir == Direction::ToServer { GENERIC_TS } else { GENERIC_TC };
            // Some protocols name the generic states themselves (HTTP's `request_started`).
            if !named.contains(&generic[0]) {
                out.push(generic[0]);
            }
            out.extend(named.iter().copied());
            if !named.contains(&generic[1]) {
                out.push(generic[1]);
            }
        }
        out
    }

    /// The state side `dir` of `tx` is in: its own answer, else what its
    /// coarse progress says (a complete side is in the last state).
    pub fn of(&self, tx: &dyn ProtoTx, dir: Direction) -> u8 {
        let last = (self.states(dir).len() - 1) as u8;
        match tx.hook_state(dir) {
            Some(s) => s.min(last),
            None if tx.progress(dir) == Progress::Complete => last,
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SSH_LIKE: Hooks =
        Hooks { to_server: &["request_a", "request_b", "request_c"], to_client: &["response_a", "response_b"] };

    #[test]
    fn generic_and_named_states() {
        let g = Hooks::GENERIC;
        assert_eq!(g.state("request_started"), Some((Direction::ToServer, 0)));
        assert_eq!(g.state("request_complete"), Some((Direction::ToServer, 1)));
        assert_eq!(g.state("response_complete"), Some((Direction::ToClient, 1)));
        assert_eq!(g.state("request_b"), None);
        assert_eq!(SSH_LIKE.state("request_started"), Some((Direction::ToServer, 0)));
        assert_eq!(SSH_LIKE.state("request_b"), Some((Direction::ToServer, 1)));
        assert_eq!(SSH_LIKE.state("request_complete"), Some((Direction::ToServer, 2)));
        assert_eq!(SSH_LIKE.state("response_b"), Some((Direction::ToClient, 1)));
        assert_eq!(
            SSH_LIKE.names(),
            vec![
                "request_started",
                "request_a",
                "request_b",
                "request_c",
                "request_complete",
                "response_started",
                "response_a",
                "response_b",
                "response_complete"
            ]
        );
        assert_eq!(g.names(), vec!["request_started", "request_complete", "response_started", "response_complete"]);
    }
}
