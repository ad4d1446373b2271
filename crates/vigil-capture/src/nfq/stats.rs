//! Counters: ours, and the kernel's per-queue line of
//! `/proc/net/netfilter/nfnetlink_queue`.

/// What one [`super::NfQueue`] has seen, plus the kernel's view of its queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NfqStats {
    /// Packets handed out by [`super::NfQueue::next`].
    pub packets: u64,
    /// `Verdict::Accept` given (whatever the mode turns it into).
    pub accepted: u64,
    /// `Verdict::Drop` given.
    pub dropped: u64,
    /// Verdict messages sent to the kernel; smaller than `accepted + dropped`
    /// when batching.
    pub verdict_msgs: u64,
    /// Times the socket's receive buffer overran (ENOBUFS). Each loses at
    /// least one packet; `kernel.user_dropped` has the exact count.
    pub enobufs: u64,
    /// Error replies from the kernel to our messages after setup (for
    /// example a verdict for a packet the kernel no longer holds).
    pub netlink_errors: u64,
    /// Packets received without a payload attribute (handed out empty).
    pub no_payload: u64,
    /// The socket receive buffer the kernel granted, in bytes.
    pub rcvbuf: u32,
    /// The kernel's counters for this queue, read when `stats()` was called;
    /// `None` when `/proc` could not be read or had no line for the queue.
    pub kernel: Option<NfqKernelStats>,
}

/// One line of `/proc/net/netfilter/nfnetlink_queue`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NfqKernelStats {
    /// The netlink port id of the socket bound to the queue.
    pub peer_portid: u32,
    /// Packets queued right now, waiting for a verdict.
    pub queue_total: u32,
    /// Packets dropped because the queue was full. With fail-open the kernel
    /// accepts them instead and counts them nowhere.
    pub queue_dropped: u64,
    /// Packets dropped because the netlink socket's receive buffer was full
    /// (not counted with fail-open, where they are accepted unseen).
    pub user_dropped: u64,
    /// The id given to the last packet queued.
    pub id_sequence: u32,
}

/// Finds `queue`'s line in the text of `/proc/net/netfilter/nfnetlink_queue`:
/// `queue_num peer_portid queue_total copy_mode copy_range queue_dropped
/// user_dropped id_sequence 1`.
pub(super) fn parse_proc(text: &str, queue: u16) -> Option<NfqKernelStats> {
    text.lines().find_map(|line| {
        let f: Vec<u64> = line.split_whitespace().map(|w| w.parse().ok()).collect::<Option<_>>()?;
        if f.len() < 8 || f[0] != u64::from(queue) {
            return None;
        }
        Some(NfqKernelStats {
            peer_portid: f[1] as u32,
            queue_total: f[2] as u32,
            queue_dropped: f[5],
            user_dropped: f[6],
            id_sequence: f[7] as u32,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_queue_line() {
        // Format string of the kernel: "%5u %6u %5u %1u %5u %5u %5u %8u %2d\n".
        let text = "    0 123456     0 2 65535     0     0        0  1\n\
                    \x20   7 -4011     3 2 65535    17     2      440  1\n\
                    \x20  42   9999     1 2 65535     5     6       77  1\n";
        let s = parse_proc(text, 42).unwrap();
        assert_eq!(
            s,
            NfqKernelStats { peer_portid: 9999, queue_total: 1, queue_dropped: 5, user_dropped: 6, id_sequence: 77 }
        );
        assert_eq!(parse_proc(text, 0).unwrap().peer_portid, 123456);
        assert_eq!(parse_proc(text, 7), None, "a line that does not parse is skipped");
        assert_eq!(parse_proc(text, 1), None);
        assert_eq!(parse_proc("", 1), None);
    }
}
