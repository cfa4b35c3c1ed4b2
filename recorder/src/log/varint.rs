//! LEB128 varints and zigzag signed integers of the binary encoding.

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The data ends inside the varint.
    Eof,
    /// The varint does not fit in 64 bits.
    Overflow,
}

/// Appends `v` as an unsigned LEB128 varint (7 bits per byte, low bits first, high bit set on
/// every byte but the last).
#[inline]
pub fn put(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*pos`, advancing `*pos` past it: for fields that are
/// usually one byte (symbol ids, small differences), checked first.
#[inline(always)]
pub fn get(data: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    if let Some(&b) = data.get(*pos)
        && b < 0x80
    {
        *pos += 1;
        return Ok(u64::from(b));
    }
    get_wide(data, pos)
}

/// Reads an unsigned LEB128 varint at `*pos`, advancing `*pos` past it: for fields of varying
/// width (time deltas).
///
/// When 4 bytes are available, varints of up to 4 bytes (values below 2²⁸) are decoded from
/// one little-endian word without a branch on their length.
#[inline(always)]
pub fn get_wide(data: &[u8], pos: &mut usize) -> Result<u64, VarintError> {
    if let Some(bytes) = data.get(*pos..).and_then(|s| s.first_chunk::<4>()) {
        let word = u32::from_le_bytes(*bytes);
        let stops = !word & 0x8080_8080;
        if stops != 0 {
            let len = stops.trailing_zeros() / 8 + 1;
            let x = word & (u32::MAX >> (32 - 8 * len));
            let x = (x & 0x007f_007f) | ((x & 0x7f00_7f00) >> 1);
            let x = (x & 0x0000_3fff) | ((x & 0x3fff_0000) >> 2);
            *pos += len as usize;
            return Ok(u64::from(x));
        }
    }
    let (v, at) = get_long(data, *pos)?;
    *pos = at;
    Ok(v)
}

/// The byte-at-a-time path: the value and the position after it. Out of line, and `pos` is
/// passed by value so that the callers' positions can stay in registers.
#[inline(never)]
fn get_long(data: &[u8], pos: usize) -> Result<(u64, usize), VarintError> {
    let mut result = 0u64;
    let mut shift = 0u32;
    let mut at = pos;
    loop {
        let Some(&b) = data.get(at) else {
            return Err(VarintError::Eof);
        };
        at += 1;
        if shift == 63 && b > 1 {
            return Err(VarintError::Overflow);
        }
        result |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok((result, at));
        }
        shift += 7;
    }
}

/// Zigzag-encodes a signed difference so that small magnitudes give small varints.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        let mut values = vec![
            0,
            1,
            127,
            128,
            255,
            300,
            16383,
            16384,
            u64::MAX,
            u64::MAX - 1,
        ];
        values.extend((0..64).map(|s| 1u64 << s));
        values.extend((1..64).map(|s| (1u64 << s) - 1));
        for v in values {
            let mut buf = Vec::new();
            put(&mut buf, v);
            assert!(buf.len() <= 10);
            for read in [get, get_wide] {
                let mut pos = 0;
                assert_eq!(read(&buf, &mut pos), Ok(v));
                assert_eq!(pos, buf.len());
                for cut in 0..buf.len() {
                    let mut pos = 0;
                    assert_eq!(read(&buf[..cut], &mut pos), Err(VarintError::Eof));
                    assert_eq!(pos, 0);
                }
            }
        }
    }

    #[test]
    fn the_word_path_agrees_with_the_byte_path() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) | 0x55] {
                let mut buf = Vec::new();
                put(&mut buf, v);
                let n = buf.len();
                buf.extend_from_slice(&[0xff; 12]);
                for read in [get, get_wide] {
                    let mut pos = 0;
                    assert_eq!(read(&buf, &mut pos), Ok(v));
                    assert_eq!(pos, n);
                }
                assert_eq!(get_long(&buf, 0), Ok((v, n)));
            }
        }
    }

    #[test]
    fn overlong_varints_overflow() {
        let mut pos = 0;
        assert_eq!(get(&[0xff; 10], &mut pos), Err(VarintError::Overflow));
        let mut bytes = vec![0xff; 9];
        bytes.push(0x02);
        assert_eq!(get(&bytes, &mut pos), Err(VarintError::Overflow));
        assert_eq!(pos, 0);
    }

    #[test]
    fn zigzag_round_trips() {
        for v in [0, 1, -1, 2, -2, i64::MAX, i64::MIN, 12345, -12345] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(0), 0);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
