//! CPU affinity (`threading.set-cpu-affinity` and the `cpu-affinity` sets):
//! which CPU each thread is pinned to. Workers take the CPUs of
//! `worker-cpu-set` in turn; the reader takes `receive-cpu-set` (else
//! `management-cpu-set`). A CPU the machine does not have (or this process
//! may not use) is an error at start-up, naming the set.

use crate::error::EngineError;
use vigil_config::{CpuSet, Threading};

/// The CPUs chosen, in the order threads take them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affinity {
    pub reader: Vec<usize>,
    pub workers: Vec<usize>,
}

impl Affinity {
    /// `None` when pinning is off. `available`: the CPUs this process may run on.
    pub(crate) fn plan(threading: &Threading, available: &[usize]) -> Result<Option<Affinity>, EngineError> {
        if !threading.set_cpu_affinity {
            return Ok(None);
        }
        let set = |name: &str| threading.cpu_affinity.iter().find(|s| s.name == name);
        let cpus = |s: Option<&CpuSet>| -> Result<Vec<usize>, EngineError> {
            match s {
                Some(s) => cpu_list(s, available),
                None => Ok(Vec::new()),
            }
        };
        let workers = cpus(set("worker-cpu-set"))?;
        let mut reader = cpus(set("receive-cpu-set"))?;
        if reader.is_empty() {
            reader = cpus(set("management-cpu-set"))?;
        }
        if workers.is_empty() {
            return Err(EngineError::Config(vec![
                "threading.set-cpu-affinity is on but threading.cpu-affinity has no worker-cpu-set with CPUs".into(),
            ]));
        }
        Ok(Some(Affinity { reader, workers }))
    }

    /// The CPU of worker `i`.
    pub(crate) fn worker(&self, i: usize) -> usize {
        self.workers[i % self.workers.len()]
    }

    /// Pins the calling thread; false when the system refused.
    pub(crate) fn pin(cpu: usize) -> bool {
        core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
    }

    /// The CPUs this process may run on.
    pub(crate) fn available() -> Vec<usize> {
        core_affinity::get_core_ids().map(|v| v.into_iter().map(|c| c.id).collect()).unwrap_or_default()
    }
}

/// A set's `cpu` list: numbers, `a-b` ranges, `all`.
fn cpu_list(set: &CpuSet, available: &[usize]) -> Result<Vec<usize>, EngineError> {
    let err = |why: String| {
        let have = match (available.first(), available.last()) {
            (Some(a), Some(b)) if available.len() == b - a + 1 => format!("{a}-{b}"),
            _ => format!("{available:?}"),
        };
        EngineError::Config(vec![format!(
            "threading.cpu-affinity.{}.cpu: {why} (this process may use CPUs {have})",
            set.name
        )])
    };
    let mut out = Vec::new();
    for item in &set.cpu {
        let item = item.trim();
        if item.eq_ignore_ascii_case("all") {
            out.extend_from_slice(available);
            continue;
        }
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => (item.parse::<usize>(), item.parse::<usize>()),
        };
        let (Ok(lo), Ok(hi)) = (lo, hi) else {
            return Err(err(format!("{item:?} is not a CPU number, range or `all`")));
        };
        if lo > hi {
            return Err(err(format!("{item:?} is an empty range")));
        }
        for cpu in lo..=hi {
            if !available.contains(&cpu) {
                return Err(err(format!("CPU {cpu} does not exist")));
            }
            out.push(cpu);
        }
    }
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threading(sets: &[(&str, &[&str])]) -> Threading {
        let mut t = vigil_config::Config::default().runtime.threading;
        t.set_cpu_affinity = true;
        t.cpu_affinity = sets
            .iter()
            .map(|(n, c)| CpuSet {
                name: n.to_string(),
                cpu: c.iter().map(|s| s.to_string()).collect(),
                ..CpuSet::default()
            })
            .collect();
        t
    }

    #[test]
    fn sets_ranges_and_missing_cpus() {
        let four = [0, 1, 2, 3];
        let a = Affinity::plan(&threading(&[("management-cpu-set", &["0"]), ("worker-cpu-set", &["1-3"])]), &four)
            .unwrap()
            .unwrap();
        assert_eq!((a.reader.clone(), a.workers.clone()), (vec![0], vec![1, 2, 3]));
        assert_eq!((a.worker(0), a.worker(3)), (1, 1), "workers take the set's CPUs in turn");
        let all = Affinity::plan(&threading(&[("worker-cpu-set", &["all"])]), &four).unwrap().unwrap();
        assert_eq!(all.workers, four);
        let e = Affinity::plan(&threading(&[("worker-cpu-set", &["0", "7"])]), &four).unwrap_err().to_string();
        assert!(e.contains("worker-cpu-set") && e.contains("CPU 7 does not exist") && e.contains("0-3"), "{e}");
        assert!(Affinity::plan(&threading(&[("worker-cpu-set", &["x"])]), &four).is_err());
        assert!(Affinity::plan(&threading(&[("receive-cpu-set", &["0"])]), &four).is_err(), "no worker set");
        let mut off = threading(&[("worker-cpu-set", &["99"])]);
        off.set_cpu_affinity = false;
        assert_eq!(Affinity::plan(&off, &four).unwrap(), None, "off: the sets are not even checked");
    }
}
