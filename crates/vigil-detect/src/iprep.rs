//! IP reputation, as Suricata's `iprep` keyword reads it: categories from
//! `reputation-categories-file` (`id,short name,description`, ids 1 to 60)
//! and scores from each of `reputation-files` (`address[/prefix],category
//! id,score`, scores 0 to 127). An address's score for a category is its
//! own line's, else that of the longest network holding it. Loaded once,
//! shared read-only by every rule and worker.
//!
//! `iprep:<any|src|dst|both>,<category>,<op>,<score>` with `<`, `>`, `=`
//! or `!=`, or `isset`/`isnotset`: an address without a score for the
//! category matches no comparison (a score of 0 is a score).

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use vigil_decode::Packet;

/// How many categories Suricata takes (ids 0 to 59), and the highest score.
pub const CATEGORIES: u8 = 60;
pub const MAX_SCORE: u8 = 127;

/// Scores by category, for one address or network.
type Scores = Vec<(u8, u8)>;

/// The reputation data of a run.
#[derive(Debug, Default)]
pub struct Reputation {
    /// Short name to id.
    categories: HashMap<String, u8>,
    hosts: HashMap<IpAddr, Scores>,
    /// Networks by family and prefix length, the longest first, each
    /// keyed by its masked address: a lookup costs one probe per length.
    nets: Vec<(bool, u8, HashMap<u128, Scores>)>,
}

fn add(scores: &mut Scores, cat: u8, score: u8) {
    match scores.iter_mut().find(|(c, _)| *c == cat) {
        Some(s) => s.1 = score,
        None => scores.push((cat, score)),
    }
}

/// A file's lines, whatever ends them (LF, CR LF, or CR alone, as files
/// from old Macs have them).
fn lines(text: &str) -> std::vec::IntoIter<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.lines().map(str::to_string).collect::<Vec<_>>().into_iter()
}

/// `ip` cut to its first `prefix` bits: whether it is IPv6, and the bits.
fn masked(ip: IpAddr, prefix: u8) -> (bool, u128) {
    let (v6, a, bits): (bool, u128, u32) = match ip {
        IpAddr::V4(a) => (false, u32::from(a).into(), 32),
        IpAddr::V6(a) => (true, u128::from(a), 128),
    };
    let p = u32::from(prefix).min(bits);
    (v6, if p == 0 { 0 } else { a >> (bits - p) })
}

impl Reputation {
    /// Reads the categories and then each reputation file; what could not
    /// be read, line by line.
    pub fn load(categories: &Path, files: &[impl AsRef<Path>]) -> (Reputation, Vec<String>) {
        let mut rep = Reputation::default();
        let mut problems = Vec::new();
        match std::fs::read_to_string(categories) {
            Ok(text) => rep.read_categories(&text, &categories.display().to_string(), &mut problems),
            Err(e) => problems.push(format!("{}: {e}", categories.display())),
        }
        for f in files {
            let f = f.as_ref();
            match std::fs::read_to_string(f) {
                Ok(text) => rep.read_scores(&text, &f.display().to_string(), &mut problems),
                Err(e) => problems.push(format!("{}: {e}", f.display())),
            }
        }
        rep.nets.sort_by_key(|n| std::cmp::Reverse(n.1));
        (rep, problems)
    }

    fn read_categories(&mut self, text: &str, name: &str, problems: &mut Vec<String>) {
        for (i, line) in lines(text).enumerate() {
            let line = line.as_str().trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.splitn(3, ',');
            let id = parts.next().and_then(|s| s.trim().parse::<u8>().ok()).filter(|&id| id < CATEGORIES);
            match (id, parts.next().map(str::trim).filter(|s| !s.is_empty())) {
                (Some(id), Some(short)) => {
                    self.categories.insert(short.to_string(), id);
                }
                _ => problems.push(format!(
                    "{name}:{}: bad category line (id 0-{},name,description)",
                    i + 1,
                    CATEGORIES - 1
                )),
            }
        }
    }

    fn read_scores(&mut self, text: &str, name: &str, problems: &mut Vec<String>) {
        for (i, line) in lines(text).enumerate() {
            let line = line.as_str().trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = line.split(',').map(str::trim).collect();
            let parsed = match parts.as_slice() {
                [addr, cat, score] => {
                    let (ip, prefix) = match addr.split_once('/') {
                        Some((a, p)) => (a.parse::<IpAddr>().ok(), p.parse::<u8>().ok()),
                        None => (addr.parse::<IpAddr>().ok(), None),
                    };
                    let cat = cat.parse::<u8>().ok().filter(|&c| c < CATEGORIES);
                    let score = score.parse::<u8>().ok().filter(|&s| s <= MAX_SCORE);
                    match (ip, cat, score, addr.contains('/')) {
                        (Some(ip), Some(c), Some(s), true) => prefix.map(|p| (ip, Some(p), c, s)),
                        (Some(ip), Some(c), Some(s), false) => Some((ip, None, c, s)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some((ip, prefix, cat, score)) = parsed else {
                problems.push(format!("{name}:{}: bad reputation line (address,category,score 0-{MAX_SCORE})", i + 1));
                continue;
            };
            let full = if ip.is_ipv4() { 32 } else { 128 };
            match prefix.filter(|&p| p < full) {
                None => add(self.hosts.entry(ip).or_default(), cat, score),
                Some(p) => {
                    let (v6, key) = masked(ip, p);
                    let at = match self.nets.iter().position(|(f, q, _)| *f == v6 && *q == p) {
                        Some(at) => at,
                        None => {
                            self.nets.push((v6, p, HashMap::new()));
                            self.nets.len() - 1
                        }
                    };
                    add(self.nets[at].2.entry(key).or_default(), cat, score);
                }
            }
        }
    }

    /// The id of the category named `short`.
    pub fn category(&self, short: &str) -> Option<u8> {
        self.categories.get(short).copied()
    }

    /// `ip`'s score in category `cat`: its own, else its longest network's.
    pub fn score(&self, ip: IpAddr, cat: u8) -> Option<u8> {
        let find = |s: &Scores| s.iter().find(|(c, _)| *c == cat).map(|&(_, v)| v);
        if let Some(v) = self.hosts.get(&ip).and_then(find) {
            return Some(v);
        }
        let v6 = ip.is_ipv6();
        self.nets.iter().filter(|(f, _, _)| *f == v6).find_map(|(_, p, map)| map.get(&masked(ip, *p).1).and_then(find))
    }
}

/// Whose address `iprep` looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepSide {
    Any,
    Src,
    Dst,
    Both,
}

/// What it asks of the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepTest {
    Lt(u8),
    Gt(u8),
    Eq(u8),
    Ne(u8),
    IsSet,
    IsNotSet,
}

/// One `iprep` keyword, its category resolved.
#[derive(Debug, Clone)]
pub struct IprepCheck {
    rep: Arc<Reputation>,
    side: RepSide,
    cat: u8,
    test: RepTest,
}

impl IprepCheck {
    /// `iprep`'s value against the run's reputation data (`None`: none
    /// configured, which Suricata refuses such a rule for).
    pub fn compile(value: &str, rep: Option<&Arc<Reputation>>) -> Result<IprepCheck, String> {
        let parts: Vec<&str> = value.split(',').map(str::trim).collect();
        let side = match parts.first().copied() {
            Some("any") => RepSide::Any,
            Some("src") => RepSide::Src,
            Some("dst") => RepSide::Dst,
            Some("both") => RepSide::Both,
            other => return Err(format!("iprep: bad side {:?}: any, src, dst or both", other.unwrap_or(""))),
        };
        let Some(rep) = rep else {
            return Err("iprep: no reputation data (set reputation-categories-file and reputation-files)".into());
        };
        let name = parts.get(1).copied().unwrap_or("");
        let cat = rep.category(name).ok_or_else(|| format!("iprep: unknown category '{name}'"))?;
        let score = |v: Option<&&str>| {
            v.and_then(|s| s.parse::<u8>().ok()).filter(|&s| s <= MAX_SCORE).ok_or("iprep: the score is 0 to 127")
        };
        let test = match (parts.get(2).copied(), parts.len()) {
            (Some("isset"), 3) => RepTest::IsSet,
            (Some("isnotset"), 3) => RepTest::IsNotSet,
            (Some("<"), 4) => RepTest::Lt(score(parts.get(3))?),
            (Some(">"), 4) => RepTest::Gt(score(parts.get(3))?),
            (Some("="), 4) => RepTest::Eq(score(parts.get(3))?),
            (Some("!="), 4) => RepTest::Ne(score(parts.get(3))?),
            _ => return Err(format!("iprep: bad test in '{value}': <, >, =, != and a score, or isset, isnotset")),
        };
        Ok(IprepCheck { rep: Arc::clone(rep), side, cat, test })
    }

    fn holds(&self, ip: IpAddr) -> bool {
        let score = self.rep.score(ip, self.cat);
        match (self.test, score) {
            (RepTest::IsSet, s) => s.is_some(),
            (RepTest::IsNotSet, s) => s.is_none(),
            (_, None) => false,
            (RepTest::Lt(v), Some(s)) => s < v,
            (RepTest::Gt(v), Some(s)) => s > v,
            (RepTest::Eq(v), Some(s)) => s == v,
            (RepTest::Ne(v), Some(s)) => s != v,
        }
    }

    /// Whether the packet's addresses pass.
    pub fn matches(&self, p: &Packet<'_>) -> bool {
        let Some(ip) = p.ip else { return false };
        match self.side {
            RepSide::Src => self.holds(ip.src),
            RepSide::Dst => self.holds(ip.dst),
            RepSide::Any => self.holds(ip.src) || self.holds(ip.dst),
            RepSide::Both => self.holds(ip.src) && self.holds(ip.dst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep() -> Arc<Reputation> {
        let mut r = Reputation::default();
        let mut problems = Vec::new();
        r.read_categories("1,bad,Bad hosts\n# a comment\n2,tor,Exit nodes\n99,big,Too big\n", "c", &mut problems);
        r.read_scores(
            "198.18.0.1,1,100\n198.18.0.0/24,1,20\n198.18.0.0/16,2,5\n2001:db8::/32,1,7\n198.18.0.9,1,0\nnonsense\n",
            "f",
            &mut problems,
        );
        r.nets.sort_by_key(|n| std::cmp::Reverse(n.1));
        assert_eq!(problems.len(), 2, "{problems:?}");
        Arc::new(r)
    }

    #[test]
    fn hosts_before_networks_the_longest_first() {
        let r = rep();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(r.score(ip("198.18.0.1"), 1), Some(100));
        assert_eq!(r.score(ip("198.18.0.2"), 1), Some(20));
        assert_eq!(r.score(ip("198.18.1.2"), 1), None);
        assert_eq!(r.score(ip("198.18.1.2"), 2), Some(5));
        assert_eq!(r.score(ip("2001:db8::5"), 1), Some(7));
        assert_eq!(r.score(ip("198.18.0.9"), 1), Some(0), "a score of 0 is a score");
    }

    #[test]
    fn lines_end_with_lf_crlf_or_cr() {
        let mut r = Reputation::default();
        let mut problems = Vec::new();
        r.read_categories("1,bad,Bad\r2,tor,Tor\r\n", "c", &mut problems);
        r.read_scores("198.18.0.1,1,5\r198.18.0.2,2,6\r\n198.18.0.3,1,7\n", "f", &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(r.score("198.18.0.2".parse().unwrap(), 2), Some(6));
        assert_eq!(r.score("198.18.0.3".parse().unwrap(), 1), Some(7));
    }

    #[test]
    fn the_keyword_and_what_it_refuses() {
        let r = rep();
        let c = |v: &str| IprepCheck::compile(v, Some(&r));
        assert!(c("src,bad,>,50").is_ok() && c("both,tor,isset").is_ok() && c("any,bad,!=,1").is_ok());
        assert!(c("src,ugly,>,1").unwrap_err().contains("unknown category"));
        assert!(c("up,bad,>,1").is_err() && c("src,bad,>,128").is_err() && c("src,bad,>=,1").is_err());
        assert!(IprepCheck::compile("src,bad,>,1", None).is_err());
        let check = c("src,bad,=,0").unwrap();
        assert!(check.holds("198.18.0.9".parse().unwrap()) && !check.holds("198.18.5.5".parse().unwrap()));
        let notset = c("dst,bad,isnotset").unwrap();
        assert!(notset.holds("198.18.5.5".parse().unwrap()));
    }
}
