use vigil_types::Timestamp;

/// Formats a packet time as EVE does: `2016-09-27T02:25:59.446587+0000`.
///
/// Always UTC: a record must not change with the sensor's time zone, and
/// tests compare records across machines.
pub fn format_timestamp(ts: Timestamp) -> String {
    let secs = ts.secs();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}+0000",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        ts.subsec_micros()
    )
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
    fn known_instants() {
        assert_eq!(format_timestamp(Timestamp::from_micros(0, 0)), "1970-01-01T00:00:00.000000+0000");
        assert_eq!(format_timestamp(Timestamp::from_micros(1_474_943_159, 446_587)), "2016-09-27T02:25:59.446587+0000");
        // 2000-02-29 is a leap day; 2100-03-01 follows a non-leap February.
        assert_eq!(&format_timestamp(Timestamp::from_micros(951_782_400, 0))[..10], "2000-02-29");
        assert_eq!(&format_timestamp(Timestamp::from_micros(4_107_542_400, 0))[..10], "2100-03-01");
    }
}
