//! Times as the store writes them (Unix seconds) and as people read them, without a time crate.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Milliseconds since the Unix epoch (review decisions and labels keep their time so).
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
pub(super) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A civil date to days since 1970-01-01 (the inverse of [`civil_from_days`]).
pub(super) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A moment as a user types it for `--since`: a date (`2026-12-01`, UTC midnight), a date
/// and time (`2026-12-01 14:30`, UTC), or a span back from `now` (`90m`, `12h`, `7d`, `2w`).
pub fn parse_since(s: &str, now: i64) -> std::result::Result<i64, String> {
    let s = s.trim();
    let bad = || {
        format!(
            "{s:?} is not a date (2026-12-01, 2026-12-01 14:30) or a span back (90m, 12h, 7d, 2w)"
        )
    };
    if let Some(unit) = s.chars().last().filter(|c| "mhdw".contains(*c))
        && let Ok(n) = s[..s.len() - 1].parse::<u32>()
    {
        let secs = match unit {
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => 7 * 86_400,
        };
        return Ok(now - i64::from(n) * secs);
    }
    let (date, time) = s.split_once([' ', 'T']).unwrap_or((s, ""));
    let mut ymd = date.splitn(3, '-').map(str::parse::<u32>);
    let (Some(Ok(y)), Some(Ok(m)), Some(Ok(d))) = (ymd.next(), ymd.next(), ymd.next()) else {
        return Err(bad());
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let secs = if time.is_empty() {
        0
    } else {
        let (h, min) = time.split_once(':').ok_or_else(bad)?;
        let (h, min) = (
            h.parse::<u32>().map_err(|_| bad())?,
            min.parse::<u32>().map_err(|_| bad())?,
        );
        if h > 23 || min > 59 {
            return Err(bad());
        }
        i64::from(h * 3600 + min * 60)
    };
    Ok(days_from_civil(i64::from(y), m, d) * 86_400 + secs)
}

/// `YYYY-MM-DD HH:MM UTC` for a Unix time.
pub fn format_time(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// `YYYYMMDD-HHMMSS` for a Unix time (run ids).
pub(super) fn compact_time(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_time(1_796_000_000), "2026-11-30 00:53 UTC");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(compact_time(1_796_000_000), "20261130-005320");
    }

    #[test]
    fn since_reads_dates_times_and_spans() {
        let now = 1_764_777_600; // 2025-12-03 16:00 UTC
        assert_eq!(
            format_time(parse_since("2025-12-01", now).unwrap()),
            "2025-12-01 00:00 UTC"
        );
        assert_eq!(
            format_time(parse_since("2025-12-01 14:30", now).unwrap()),
            "2025-12-01 14:30 UTC"
        );
        assert_eq!(parse_since("7d", now).unwrap(), now - 7 * 86_400);
        assert_eq!(parse_since("90m", now).unwrap(), now - 90 * 60);
        assert_eq!(parse_since("2w", now).unwrap(), now - 14 * 86_400);
        for bad in ["yesterday", "2025-13-01", "2025-12-01 25:00", "7y", ""] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
        for days in [-1000, 0, 20_000, 60_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }
}
