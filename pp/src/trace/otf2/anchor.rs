//! The anchor file checked before the OTF2 library reads it, for the one damage that library
//! does not survive: a property count of 2³¹ or more makes OTF2 3.0's anchor reader allocate
//! `2 × count` pointers in 32 bits (which wraps to almost nothing) and write past them
//! (docs/otf2.md#damaged-traces). The layout read here is the anchor's, up to that count:
//! a two-byte buffer header (a kind byte and the byte order), `OTF2\0`, the anchor format,
//! the trace format, three version bytes, two 8-byte chunk sizes, the substrate and
//! compression bytes, two 8-byte counts, then three NUL-terminated strings (machine,
//! creator, description) and, from anchor format 2 on, a 4-byte property count followed by
//! that many name and value strings. Anything else is left to the library to judge.

/// The byte-order marks of OTF2's buffer header.
const LITTLE: u8 = 0x42;
const BIG: u8 = 0x23;

/// `Err` (one line) when the anchor file's bytes declare more properties than they could
/// hold; `Ok` for every other file, damaged or not.
pub fn check(bytes: &[u8]) -> Result<(), String> {
    let Some(rest) = bytes.get(2..).and_then(|b| b.strip_prefix(b"OTF2\0")) else {
        return Ok(());
    };
    let little = match bytes[1] {
        LITTLE => true,
        BIG => false,
        _ => return Ok(()),
    };
    // anchor format, trace format, 3 version bytes, 2 chunk sizes, substrate, compression,
    // locations, global definitions.
    const FIXED: usize = 1 + 1 + 3 + 8 + 8 + 1 + 1 + 8 + 8;
    let Some(format) = rest.first().copied() else {
        return Ok(());
    };
    let Some(mut rest) = rest.get(FIXED..) else {
        return Ok(());
    };
    for _ in 0..3 {
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Ok(());
        };
        rest = &rest[nul + 1..];
    }
    if format < 2 {
        return Ok(());
    }
    let Some(count) = rest.get(..4) else {
        return Ok(());
    };
    let count = <[u8; 4]>::try_from(count).expect("four bytes");
    let count = if little {
        u32::from_le_bytes(count)
    } else {
        u32::from_be_bytes(count)
    };
    // Each property is two strings of at least their NUL.
    let room = rest.len() - 4;
    if 2 * u64::from(count) > room as u64 {
        return Err(format!(
            "a damaged anchor file: it declares {count} properties in {room} bytes"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An anchor file as OTF2 3.0 writes it (little-endian), with `properties` declared and
    /// `strings` bytes after the count.
    fn anchor(properties: u32, strings: &[u8]) -> Vec<u8> {
        let mut b = vec![0x03, LITTLE];
        b.extend_from_slice(b"OTF2\0");
        b.extend_from_slice(&[3, 2, 3, 0, 2]);
        b.extend_from_slice(&(1u64 << 20).to_le_bytes());
        b.extend_from_slice(&(4u64 << 20).to_le_bytes());
        b.extend_from_slice(&[1, 1]);
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(&26u64.to_le_bytes());
        b.extend_from_slice(b"\0\0\0");
        b.extend_from_slice(&properties.to_le_bytes());
        b.extend_from_slice(strings);
        b
    }

    #[test]
    fn a_count_the_file_cannot_hold_is_refused() {
        // The fuzz harness's case: 2³¹ properties (OTF2's 32-bit 2 × count is 0).
        let tail = [0u8; 17];
        let e = check(&anchor(1 << 31, &tail)).unwrap_err();
        assert_eq!(
            e,
            "a damaged anchor file: it declares 2147483648 properties in 17 bytes"
        );
        assert!(check(&anchor(9, &tail)).is_err());
    }

    #[test]
    fn anchors_that_can_hold_their_properties_pass() {
        // No property: trace id, snapshots, thumbnails, end of file (OTF2's own layout).
        assert_eq!(check(&anchor(0, &[0u8; 17])), Ok(()));
        assert_eq!(check(&anchor(2, b"a\0b\0c\0d\0")), Ok(()));
        // Not an anchor this reads, or cut short: the library judges.
        assert_eq!(check(b""), Ok(()));
        assert_eq!(check(b"\x03\x42OTF2\0\x03"), Ok(()));
        assert_eq!(check(&[0x03, 0x99, b'O', b'T', b'F', b'2', 0]), Ok(()));
    }

    #[test]
    fn the_bundled_anchors_pass() {
        for trace in ["mpi-late-sender", "mpi-openmp", "openmp-lock"] {
            let path = format!(
                "{}/../fuzz/otf2/{trace}/traces.otf2",
                env!("CARGO_MANIFEST_DIR")
            );
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(check(&bytes), Ok(()), "{path}");
        }
    }
}
