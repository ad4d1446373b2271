use vigil_types::Timestamp;

/// Formats a packet time as EVE does: `2016-09-27T02:25:59.446587+0000`.
pub fn format_timestamp(ts: Timestamp) -> String {
    ts.iso8601()
}

pub use vigil_types::civil_from_days;

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
