//! File names made from model names (chart files of a report): safe characters only, bounded
//! in length, and distinct — two names that read alike once made safe get different files,
//! the same ones every time.

/// Longest stem made from one name, in characters (the chart files add `-NN.svg`).
pub const MAX_STEM_CHARS: usize = 64;

/// A file stem for `name`: its ASCII letters, digits and `-`, every other character as `_`,
/// at most [`MAX_STEM_CHARS`] characters. A name that had to change (a replaced character, a
/// cut) gets a short hash of the whole name, so names that differ give different stems.
pub fn stem(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == name && !safe.is_empty() && safe.len() <= MAX_STEM_CHARS {
        return safe;
    }
    let hash = format!("{:08x}", fnv1a(name.as_bytes()) as u32);
    let keep = MAX_STEM_CHARS - hash.len() - 1;
    let cut: String = safe.chars().take(keep).collect();
    format!("{cut}-{hash}")
}

/// The stems of `names`, in order, made distinct: a stem met again (the same name twice, or a
/// safe name that happens to equal another's hashed stem) gets `-2`, `-3`, ...
pub fn distinct_stems<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut stems: Vec<String> = Vec::new();
    for name in names {
        let first = stem(name);
        let mut candidate = first.clone();
        let mut n = 1;
        while stems.contains(&candidate) {
            n += 1;
            candidate = format!("{first}-{n}");
        }
        stems.push(candidate);
    }
    stems
}

/// 64-bit FNV-1a: a fixed hash (the same on every machine and run).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names_are_kept_and_others_get_a_hash() {
        assert_eq!(stem("dp"), "dp");
        assert_eq!(stem("tp-2"), "tp-2");
        let a = stem("a b");
        let b = stem("a_b");
        assert_eq!(b, "a_b");
        assert!(a.starts_with("a_b-") && a.len() == 12, "{a}");
        assert_ne!(stem("dp/x y"), stem("dp_x y"));
        assert_eq!(stem("a b"), a, "the same name gives the same stem");
        assert!(stem("").starts_with('-'));
    }

    #[test]
    fn long_names_are_cut_and_stay_distinct() {
        let long_a = "x".repeat(300);
        let long_b = format!("{}y", "x".repeat(299));
        let (a, b) = (stem(&long_a), stem(&long_b));
        assert_eq!(a.chars().count(), MAX_STEM_CHARS);
        assert_eq!(b.chars().count(), MAX_STEM_CHARS);
        assert_ne!(a, b);
        let unicode = "é".repeat(300);
        assert!(stem(&unicode).len() <= MAX_STEM_CHARS);
    }

    #[test]
    fn repeated_names_are_numbered() {
        assert_eq!(
            distinct_stems(["dp", "tp", "dp", "dp"]),
            ["dp", "tp", "dp-2", "dp-3"]
        );
        let [a, b] = &distinct_stems(["a b", "a_b"])[..] else {
            panic!("two stems")
        };
        assert_ne!(a, b);
    }
}
