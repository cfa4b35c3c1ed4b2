//! Totals that do not fit in 64 bits of nanoseconds are exact, never wrapped: `p × wall`
//! reaches 2^84 ns (p up to 2^20, a window up to 2^64 − 1 ns). The expected figures are
//! worked out by hand in each test; every row is checked for its invariants (total =
//! p × wall, categories sum to total, sub-categories to their parent) in exact integers.

use pp::log::LogReader;
use pp::profile::{Profile, profile_log};

fn profile(text: &str) -> Profile {
    let mut reader = LogReader::from_bytes("wide.log", text.as_bytes().to_vec()).unwrap();
    profile_log(&mut reader, None, None)
        .whole("wide.log")
        .unwrap()
}

/// A field of a datafile row in nanoseconds, read exactly from its `S.NNNNNNNNN` seconds.
fn ns(row: &str, key: &str) -> u128 {
    let value = row
        .split_whitespace()
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {key} in {row}"));
    let (s, frac) = value.split_once('.').unwrap();
    assert_eq!(frac.len(), 9, "{key}={value}");
    s.parse::<u128>().unwrap() * 1_000_000_000 + frac.parse::<u128>().unwrap()
}

/// The row's arithmetic: total = p × wall, the categories sum to the total, rc.cpu and
/// rc.comm to rc.
fn check_row(row: &str) {
    let p: u128 = row
        .split_whitespace()
        .find_map(|f| f.strip_prefix("p="))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(ns(row, "total"), p * ns(row, "wall"), "{row}");
    let categories: u128 = ["li", "ip", "sl", "cl", "rc", "pc"]
        .iter()
        .map(|k| ns(row, k))
        .sum();
    assert_eq!(categories, ns(row, "total"), "{row}");
    assert_eq!(
        ns(row, "rc.cpu") + ns(row, "rc.comm"),
        ns(row, "rc"),
        "{row}"
    );
}

#[test]
fn a_million_threads_for_five_hours_sum_exactly() {
    // 2^20 threads; thread 0 runs 18,000 s and the others never start: every thread is idle
    // outside any region over the whole window (ip). total = 1,048,576 × 18,000 s =
    // 18,874,368,000 s = 1.8874368e19 ns, past 2^64 ns (about 1.8447e19): it used to wrap to
    // 427,623,926.290448384 s.
    let p = profile("pplog 1 p=1048576\n0 0 start\n18000000000000 0 stop\n");
    let row = p.datafile_row();
    check_row(&row);
    assert!(row.contains(" wall=18000.000000000 "), "{row}");
    assert!(row.contains(" total=18874368000.000000000 "), "{row}");
    assert!(row.contains(" ip=18874368000.000000000 "), "{row}");
    assert_eq!(p.total_ns(), 18_874_368_000_000_000_000);
    assert!(
        p.figure1().contains("18874368000.000000000 s"),
        "{}",
        p.figure1()
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn a_window_of_two_to_the_63_ns_at_p_2_is_not_zero() {
    // Two threads idle for 2^63 ns = 9,223,372,036.854775808 s: total = 2^64 ns =
    // 18,446,744,073.709551616 s, which wrapped to 0 in 64 bits.
    let p = profile(
        "pplog 1 p=2\n0 0 start\n0 1 start\n\
         9223372036854775808 0 stop\n9223372036854775808 1 stop\n",
    );
    let row = p.datafile_row();
    check_row(&row);
    assert!(row.contains(" wall=9223372036.854775808 "), "{row}");
    assert!(row.contains(" total=18446744073.709551616 "), "{row}");
    assert!(row.contains(" ip=18446744073.709551616 "), "{row}");
    assert_eq!(p.by_thread[0].sum(), 1 << 63);
}

#[test]
fn the_largest_window_at_the_most_threads_fits() {
    // The extreme: 2^20 threads over 2^64 − 1 ns, the first half of it work on thread 0 in
    // a region of every thread. total = (2^64 − 1) × 2^20 = 19,342,813,113,834,066,794,250,240 ns.
    let max = u64::MAX;
    let half = max / 2;
    let p = profile(&format!(
        "pplog 1 p=1048576\n0 0 start\n0 0 region_begin 1 r\n0 0 work_begin\n\
         {half} 0 work_end\n{half} 0 region_end 1\n{max} 0 stop\n"
    ));
    let row = p.datafile_row();
    check_row(&row);
    assert_eq!(p.total_ns(), 19_342_813_113_834_066_794_250_240);
    assert!(row.contains(" total=19342813113834066.794250240 "), "{row}");
    // Thread 0 worked half the window (pc); the 2^20 − 1 others were idle in the region while
    // it worked (li), then idle outside it (ip); thread 0 idle outside it after (ip).
    assert_eq!(ns(&row, "pc"), u128::from(half));
    assert_eq!(ns(&row, "li"), u128::from(half) * ((1 << 20) - 1));
    assert_eq!(ns(&row, "ip"), u128::from(max - half) * (1 << 20));
}
