use super::harness::{fixture, same, same_in, util};
use safesh_utils::testing::run_util;

macro_rules! cases {
    ($($name:ident: [$($arg:expr),+];)*) => { $( #[test] fn $name() { same(&[$($arg),+]); } )* };
}

cases! {
    date_epoch: ["date", "-d", "@1700000000"];
    date_epoch_utc: ["date", "-u", "-d", "@0"];
    date_format_all: ["date", "-d", "@1700000000", "+%Y %m %d %H %M %S %s %j %a %A %b %B %e %F %T %D %z %Z %:z %u %w %y %p %I %%"];
    date_format_more: ["date", "-d", "@1709251199", "+%C %g %G %h %k %l %n %t %P %q %r %R %U %V %W %x %X %c"];
    date_flags: ["date", "-d", "@1700000000", "+%-d|%_m|%^a|%#Z|%10Y|%-H|%05e|%3N"];
    date_nanos: ["date", "-d", "@1700000000.123456789", "+%N %s"];
    date_iso_date: ["date", "-d", "2024-01-15"];
    date_iso_time: ["date", "-d", "2024-01-15 10:30:00", "+%F %T %s"];
    date_iso_t: ["date", "-d", "2024-01-15T10:30", "+%s"];
    date_iso_zone: ["date", "-d", "2024-01-15 10:30:00 +0200", "+%s"];
    date_iso_utc_z: ["date", "-u", "-d", "2024-01-15T10:30:00Z", "+%s"];
    date_relative: ["date", "-d", "2024-01-15 +3 days", "+%F"];
    date_ago: ["date", "-d", "2024-03-01 2 days ago", "+%F"];
    date_weeks: ["date", "-d", "2024-01-31 1 week", "+%F"];
    date_month: ["date", "-d", "2024-01-31 +1 month", "+%F"];
    date_hours: ["date", "-d", "2024-01-15 10:00 5 hours ago", "+%F %T"];
    date_iso8601: ["date", "-d", "@1700000000", "-I"];
    date_iso8601_seconds: ["date", "-d", "@1700000000", "-Iseconds"];
    date_iso8601_ns: ["date", "-d", "@1700000000", "--iso-8601=ns"];
    date_iso8601_hours: ["date", "-u", "-d", "@1700000000", "-Ihours"];
    date_rfc: ["date", "-R", "-d", "@1700000000"];
    date_rfc3339: ["date", "--rfc-3339=seconds", "-d", "@1700000000"];
    date_reference: ["date", "-r", "a"];
    date_reference_fmt: ["date", "-r", "b.txt", "+%s"];
    date_invalid: ["date", "-d", "not a date"];
    date_missing_ref: ["date", "-r", "nope"];
    date_extra: ["date", "+%Y", "+%m"];
    date_us: ["date", "-d", "01/15/2024", "+%F"];
    date_month_name: ["date", "-d", "Jan 15 2024", "+%F"];
    sleep_zero: ["sleep", "0"];
    sleep_units: ["sleep", "0s", "0m", "0.01", "0h", "0d"];
    sleep_invalid: ["sleep", "x"];
    sleep_missing: ["sleep"];
    sleep_bad_suffix: ["sleep", "1q"];
    sleep_negative: ["sleep", "-1"];
}

/// Relative words depend on "now": compare the date part only.
#[test]
fn date_now_words() {
    let t = fixture();
    for w in [
        "now",
        "today",
        "yesterday",
        "tomorrow",
        "3 days ago",
        "+2 days",
        "next week",
        "last year",
    ] {
        same_in(&["date", "-d", w, "+%F"], b"", t.path());
    }
    same_in(&["date", "+%Y"], b"", t.path());
    for w in [
        "monday",
        "next monday",
        "last monday",
        "sunday",
        "next sunday",
        "last sun",
        "fri",
        "tuesday 10:00",
    ] {
        same_in(&["date", "-d", w, "+%a %F %T"], b"", t.path());
    }
    for w in [
        "3pm",
        "10:30 am",
        "12am",
        "12pm",
        "2024-01-15 9pm",
        "11:59:59 PM",
    ] {
        same_in(&["date", "-d", w, "+%F %T"], b"", t.path());
    }
}

#[test]
fn date_default_now_shape() {
    let t = fixture();
    let o = run_util(util("date"), &["date"], b"", t.path(), &[]);
    let r = safesh_utils::testing::run_real(&["date"], b"", t.path());
    assert_eq!(o.status, 0);
    // Same length and same fields except possibly the seconds.
    assert_eq!(o.stdout.len(), r.stdout.len(), "{} vs {}", o.out(), r.out());
    assert_eq!(o.out().get(..11), r.out().get(..11));
}

#[test]
fn date_tz_from_env() {
    use safesh_utils::{Host, UtilCtx};
    let t = fixture();
    let host = safesh_utils::testing::TestHost {
        table: vec![],
        env: std::collections::BTreeMap::from([("TZ".to_string(), "America/New_York".to_string())]),
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut input: &[u8] = b"";
    let mut ctx = UtilCtx {
        argv: vec!["date".into(), "-d".into(), "@1700000000".into()],
        cwd: t.path().to_path_buf(),
        env: safesh_utils::Env::new(&host.env, &host),
        stdin: &mut input,
        stdout: &mut out,
        stderr: &mut err,
        host: &host as &dyn Host,
    };
    let st = util("date")(&mut ctx).expect("run");
    assert_eq!(st, 0);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "Tue Nov 14 17:13:20 EST 2023\n"
    );
}

#[test]
fn sleep_takes_time() {
    let t = fixture();
    let start = std::time::Instant::now();
    let o = run_util(util("sleep"), &["sleep", "0.2"], b"", t.path(), &[]);
    assert_eq!(o.status, 0);
    assert!(start.elapsed() >= std::time::Duration::from_millis(190));
}

#[test]
fn date_more_forms() {
    let t = fixture();
    for d in [
        "2024-01-15 10:30:00 UTC",
        "2024-01-15T10:30:00+05:30",
        "2024-01-15T10:30:00.250Z",
        "2024-01-15 -1 day",
        "2024-01-15 +1 week",
        "2024-03-31 last month",
        "2024-02-29 next year",
        "2024-01-15 2 weeks ago",
        "2024-01-15 10:30 +2 hours",
        "2024-01-15 1 hour ago",
        "2024-01-15 90 minutes",
        "2024-01-15 30 seconds ago",
        "@1700000000 +1 day",
        "20240115",
        "2024-1-5",
        "15 Jan 2024",
        "January 15, 2024",
        "Jan 15",
        "2024-01-15 00:00:00 -0800",
        "1970-01-01 00:00:00 UTC",
        "",
        "2024-13-01",
        "2024-02-30",
        "25:00",
    ] {
        same_in(&["date", "-d", d, "+%F %T %z"], b"", t.path());
    }
}

#[test]
fn date_file() {
    let t = super::harness::setup("printf '2024-01-15\\n@0\\nbogus\\n2020-02-29 12:00\\n' > dates");
    same_in(&["date", "-f", "dates", "+%F %T"], b"", t.path());
    same_in(&["date", "-u", "-f", "dates"], b"", t.path());
    same_in(&["date", "-f", "nope"], b"", t.path());
}
