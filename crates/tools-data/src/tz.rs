//! The time zone a utility shows times in: the script's `TZ` when it sets one,
//! else the system's.

/// The zone named by `tz`, the value of `TZ` (IANA name or POSIX rule), or the
/// system zone.
pub fn local(tz: Option<&String>) -> jiff::tz::TimeZone {
    match tz.map(|s| s.trim_start_matches(':')) {
        Some(name) if !name.is_empty() => jiff::tz::TimeZone::get(name)
            .or_else(|_| jiff::tz::TimeZone::posix(name))
            .unwrap_or(jiff::tz::TimeZone::UTC),
        _ => jiff::tz::TimeZone::system(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn tz_from_env() {
        let env = BTreeMap::from([("TZ".to_string(), "Asia/Tokyo".to_string())]);
        let t = jiff::Timestamp::UNIX_EPOCH.to_zoned(local(env.get("TZ")));
        assert_eq!(t.strftime("%H %z").to_string(), "09 +0900");
        let env = BTreeMap::from([("TZ".to_string(), "UTC0".to_string())]);
        let t = jiff::Timestamp::UNIX_EPOCH.to_zoned(local(env.get("TZ")));
        assert_eq!(t.strftime("%H %z").to_string(), "00 +0000");
    }
}
