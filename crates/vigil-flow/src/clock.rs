//! The capture clock flows time out by. It follows packet time, but one
//! packet alone cannot move it: a frame stamped hours ahead (a broken
//! capture, a hostile sender in front of a live sensor) would otherwise end
//! every flow at once. The clock takes a new time only once two packets in
//! a row are at or past it (the later of "this packet" and "the one
//! before", whichever is earlier), so a lone outlier is ignored and a real
//! jump (the next file of a directory, a capture resumed) is taken one
//! packet late. It never goes back. A packet's own flow still uses the
//! packet's own time (see [`crate::FlowTable::update`]), as in Suricata.

use vigil_types::Timestamp;

#[derive(Debug, Clone, Copy, Default)]
pub struct CaptureClock {
    now: Option<Timestamp>,
    last: Option<Timestamp>,
    /// The time so far comes from one packet only (the first one seen).
    unconfirmed: bool,
}

impl CaptureClock {
    /// Takes a packet's time into account; returns the clock.
    pub fn observe(&mut self, ts: Timestamp) -> Timestamp {
        let now = match (self.now, self.last) {
            (None, _) | (_, None) => {
                self.unconfirmed = true;
                ts
            }
            // The first packet's time was never confirmed: the second may move it back.
            (Some(_), Some(last)) if self.unconfirmed => {
                self.unconfirmed = false;
                last.min(ts)
            }
            (Some(now), Some(last)) => now.max(last.min(ts)),
        };
        self.now = Some(now);
        self.last = Some(ts);
        now
    }

    /// The clock (the epoch before any packet).
    pub fn now(&self) -> Timestamp {
        self.now.unwrap_or_default()
    }

    /// The capture's end, when no packet follows: the clock, or the last
    /// packet's time when later (what a flow ended by the end is stamped
    /// with, as it would be while that packet was in hand).
    pub fn end(&self) -> Timestamp {
        self.now().max(self.last.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_micros(s, 0)
    }

    #[test]
    fn one_outlier_does_not_move_the_clock_two_in_a_row_do() {
        let mut c = CaptureClock::default();
        let seen: Vec<i64> =
            [100, 101, 18_100, 102, 103, 20_000, 20_001, 20_002].into_iter().map(|s| c.observe(t(s)).secs()).collect();
        assert_eq!(seen, [100, 100, 101, 102, 102, 103, 20_000, 20_001]);
    }

    #[test]
    fn an_outlier_first_is_corrected_by_the_second_packet() {
        let mut c = CaptureClock::default();
        assert_eq!(c.observe(t(18_000)).secs(), 18_000);
        assert_eq!(c.observe(t(100)).secs(), 100);
        assert_eq!(c.observe(t(101)).secs(), 100);
        assert_eq!(c.observe(t(50)).secs(), 100, "never back");
    }
}
