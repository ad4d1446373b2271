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

    /// EVE's form, `2016-09-27T02:25:59.446587+0000`: always UTC, so a
    /// record does not change with the sensor's time zone.
    pub fn iso8601(self) -> String {
        let (y, m, d, hh, mm, ss) = self.civil();
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{:06}+0000", self.subsec_micros())
    }

    /// fast.log's form, `09/27/2016-02:25:59.446587`, in UTC too.
    pub fn legacy(self) -> String {
        let (y, m, d, hh, mm, ss) = self.civil();
        format!("{m:02}/{d:02}/{y:04}-{hh:02}:{mm:02}:{ss:02}.{:06}", self.subsec_micros())
    }

    fn civil(self) -> (i64, u32, u32, i64, i64, i64) {
        let secs = self.secs();
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        (y, m, d, rem / 3600, (rem / 60) % 60, rem % 60)
    }
}

/// Days from 1970-01-01 to day `d` of month `m` of year `y` (proleptic
/// Gregorian; Howard Hinnant's algorithm): the inverse of [`civil_from_days`].
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
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

    #[test]
    fn days_and_dates_round_trip() {
        for days in [-719_468, -1, 0, 59, 60, 10_957, 17_863, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn both_text_forms() {
        let t = Timestamp::from_micros(1_464_332_171, 701_229);
        assert_eq!(t.iso8601(), "2016-05-27T06:56:11.701229+0000");
        assert_eq!(t.legacy(), "05/27/2016-06:56:11.701229");
    }
}
