//! Byte mutation: a seed of the target, changed one to eight times by flipping, replacing,
//! deleting, inserting, repeating or splicing bytes, by tokens of the target's dictionary, and
//! by numbers at the edges of what the readers accept.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::target::Target;

/// Numbers that sit on the limits of integer, float and duration arithmetic.
const NUMBERS: [&str; 24] = [
    "0",
    "-1",
    "1",
    "2",
    "-0",
    "1e300",
    "-1e300",
    "nan",
    "inf",
    "1e-320",
    "0.5",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "4294967295",
    "4294967296",
    "1048576",
    "1048577",
    "2147483648",
    "99999999999999999999999",
    "1e19",
    "3.0e9",
    "0x10",
];

/// The mutant of case `case` of a run with seed `seed`: the same on every machine and run, so
/// a case is reproduced from its number.
pub fn case(seed: u64, case: u64, target: Target, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut data = seeds[rng.random_range(0..seeds.len())].clone();
    let rounds = 1 << rng.random_range(0..4);
    for _ in 0..rounds {
        mutate_once(&mut rng, &mut data, target, seeds);
    }
    data.truncate(target.max_len());
    data
}

fn span(rng: &mut StdRng, len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    let start = rng.random_range(0..len);
    let most = if rng.random_bool(0.8) { 16 } else { len };
    let n = rng.random_range(1..=most.min(len - start));
    (start, start + n)
}

/// The digit runs of `data` (start, end): where a number can be replaced.
fn numbers(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        if data[i].is_ascii_digit() {
            let start = i;
            while i < data.len() && (data[i].is_ascii_digit() || data[i] == b'.') {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn line_starts(data: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(
            data.iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .filter(|&i| i < data.len())
        .collect()
}

fn mutate_once(rng: &mut StdRng, data: &mut Vec<u8>, target: Target, seeds: &[Vec<u8>]) {
    let at = |rng: &mut StdRng, data: &Vec<u8>| rng.random_range(0..=data.len());
    match rng.random_range(0..12) {
        0 if !data.is_empty() => {
            let i = rng.random_range(0..data.len());
            data[i] ^= 1 << rng.random_range(0..8);
        }
        1 if !data.is_empty() => {
            let i = rng.random_range(0..data.len());
            data[i] = *[
                0u8, 0xff, 0x80, b'\n', b' ', b'#', b'=', b'-', b'.', b'"', b'{', b'0',
            ]
            .get(rng.random_range(0..13))
            .unwrap_or(&rng.random());
        }
        2 => {
            let (a, b) = span(rng, data.len());
            data.drain(a..b);
        }
        3 => {
            let i = at(rng, data);
            let n = rng.random_range(1..=8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            data.splice(i..i, bytes);
        }
        4 => {
            // Repeat a chunk: long lines, deep nesting, many definitions.
            let (a, b) = span(rng, data.len());
            let chunk = data[a..b].to_vec();
            let times = if rng.random_bool(0.9) {
                1
            } else {
                rng.random_range(2..5000)
            };
            let i = at(rng, data);
            data.splice(
                i..i,
                // No more than the mutant keeps (it is cut to the target's maximum length).
                chunk
                    .iter()
                    .copied()
                    .cycle()
                    .take((chunk.len() * times).min(target.max_len())),
            );
        }
        5 => {
            let other = &seeds[rng.random_range(0..seeds.len())];
            let (a, b) = span(rng, other.len());
            let i = at(rng, data);
            data.splice(i..i, other[a..b].iter().copied());
        }
        6 => {
            let words = target.dictionary();
            let word = words[rng.random_range(0..words.len())].as_bytes();
            let i = at(rng, data);
            data.splice(i..i, word.iter().copied());
        }
        7 => {
            let found = numbers(data);
            if !found.is_empty() {
                let (a, b) = found[rng.random_range(0..found.len())];
                let n = NUMBERS[rng.random_range(0..NUMBERS.len())].as_bytes();
                data.splice(a..b, n.iter().copied());
            }
        }
        8 if !data.is_empty() => {
            let n = rng.random_range(0..data.len());
            data.truncate(n);
        }
        9 => {
            // Duplicate or move a line: repeated and out-of-order events.
            let starts = line_starts(data);
            if !starts.is_empty() {
                let s = starts[rng.random_range(0..starts.len())];
                let e = data[s..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(data.len(), |p| s + p + 1);
                let line = data[s..e].to_vec();
                if rng.random_bool(0.5) {
                    data.drain(s..e);
                }
                let t = starts[rng.random_range(0..starts.len())].min(data.len());
                data.splice(t..t, line);
            }
        }
        10 if data.len() >= 4 => {
            // A little-endian integer written over the bytes (binary lengths, counts, times).
            let i = rng.random_range(0..data.len() - 3);
            let v: u32 = match rng.random_range(0..4) {
                0 => u32::MAX,
                1 => 0x8000_0000,
                2 => rng.random_range(0..256),
                _ => rng.random(),
            };
            data[i..i + 4].copy_from_slice(&v.to_le_bytes());
        }
        _ => {
            // A run of continuation bytes: the longest varints and invalid UTF-8.
            let i = at(rng, data);
            let n = rng.random_range(1..=12);
            data.splice(i..i, std::iter::repeat_n(0xff, n));
        }
    }
}
