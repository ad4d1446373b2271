/// A packet's capture time: nanoseconds since the Unix epoch.
///
/// Nanoseconds cover pcap's nanosecond variant without loss; an `i64` of
/// nanoseconds reaches the year 2262, past anything a capture file can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(i64);

impl Timestamp {
    pub const fn from_nanos(nanos: i64) -> Self {
        Timestamp(nanos)
    }

    pub const fn from_micros(secs: i64, micros: u32) -> Self {
        Timestamp(secs * 1_000_000_000 + micros as i64 * 1_000)
    }

    pub const fn from_secs_nanos(secs: i64, nanos: u32) -> Self {
        Timestamp(secs * 1_000_000_000 + nanos as i64)
    }

    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    pub const fn secs(self) -> i64 {
        self.0.div_euclid(1_000_000_000)
    }

    pub const fn subsec_nanos(self) -> u32 {
        self.0.rem_euclid(1_000_000_000) as u32
    }

    pub const fn subsec_micros(self) -> u32 {
        self.subsec_nanos() / 1_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_times_split_towards_the_past() {
        let t = Timestamp::from_nanos(-1);
        assert_eq!(t.secs(), -1);
        assert_eq!(t.subsec_nanos(), 999_999_999);
    }
}
