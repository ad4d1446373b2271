//! CPU time of this process (user + system, every thread): what getrusage's
//! `ru_utime + ru_stime` say, read through `CLOCK_PROCESS_CPUTIME_ID`
//! (nanoseconds, and a safe call).

use std::time::Duration;

/// User + system CPU time consumed by the process so far.
pub fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_advances_with_work() {
        let a = super::process_cpu_time();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(super::process_cpu_time() > a, "{x}");
    }
}
