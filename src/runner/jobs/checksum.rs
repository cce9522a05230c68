//! The checksums of fio's `verify=` methods. The CRCs and xxhash are small
//! table or arithmetic functions written here; MD5, SHA-1, SHA-2 and SHA-3
//! come from the RustCrypto crates.

use crate::model::verify::VerifyMethod;
use md5::Digest;

/// Largest checksum of any method (SHA-512, SHA3-512).
pub const MAX_LEN: usize = 64;

/// The table of a reflected CRC of up to 64 bits (a narrower one's entries
/// fit its width: reflected CRCs only shift right).
const fn reflected_table(poly: u64) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

const fn reflected_table32(poly: u32) -> [u32; 256] {
    let wide = reflected_table(poly as u64);
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = wide[i] as u32;
        i += 1;
    }
    t
}

/// CRC-7 (x^7 + x^3 + 1, MMC/SD), kept in the top 7 bits of a byte.
const fn crc7_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x80 != 0 { (c << 1) ^ 0x12 } else { c << 1 };
            k += 1;
        }
        t[i] = c >> 1;
        i += 1;
    }
    t
}

static CRC32C: [u32; 256] = reflected_table32(0x82F6_3B78);
static CRC32: [u32; 256] = reflected_table32(0xEDB8_8320);
static CRC16: [u32; 256] = reflected_table32(0xA001);
/// fio's crc64: reflected Jones polynomial, initial value 0.
static CRC64: [u64; 256] = reflected_table(0x95AC_9329_AC4B_C9B5);
static CRC7: [u8; 256] = crc7_table();

fn crc32_with(table: &[u32; 256], init: u32, data: &[u8]) -> u32 {
    data.iter().fold(init, |c, &b| table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

/// CRC-32C (Castagnoli), with the SSE4.2 instruction where the CPU has it.
pub fn crc32c(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE4.2, checked just above.
            return !unsafe { crc32c_sse42(!0, data) };
        }
    }
    !crc32_with(&CRC32C, !0, data)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn crc32c_sse42(mut c: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut chunks = data.chunks_exact(8);
    let mut c64 = c as u64;
    for ch in &mut chunks {
        c64 = _mm_crc32_u64(c64, u64::from_le_bytes(ch.try_into().expect("8 bytes")));
    }
    c = c64 as u32;
    for &b in chunks.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    c
}

pub fn crc32(data: &[u8]) -> u32 {
    !crc32_with(&CRC32, !0, data)
}

pub fn crc16(data: &[u8]) -> u16 {
    crc32_with(&CRC16, 0, data) as u16
}

pub fn crc64(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |c, &b| CRC64[((c ^ b as u64) & 0xff) as usize] ^ (c >> 8))
}

pub fn crc7(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |c, &b| CRC7[((c << 1) ^ b) as usize])
}

/// XXH32 (fio seeds it with 1).
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    const P1: u32 = 0x9E37_79B1;
    const P2: u32 = 0x85EB_CA77;
    const P3: u32 = 0xC2B2_AE3D;
    const P4: u32 = 0x27D4_EB2F;
    const P5: u32 = 0x1656_67B1;
    let word = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let round = |acc: u32, x: u32| acc.wrapping_add(x.wrapping_mul(P2)).rotate_left(13).wrapping_mul(P1);
    let mut rest = data;
    let mut h = if data.len() >= 16 {
        let mut v = [seed.wrapping_add(P1).wrapping_add(P2), seed.wrapping_add(P2), seed, seed.wrapping_sub(P1)];
        let mut stripes = data.chunks_exact(16);
        for s in &mut stripes {
            for (i, v) in v.iter_mut().enumerate() {
                *v = round(*v, word(&s[i * 4..i * 4 + 4]));
            }
        }
        rest = stripes.remainder();
        v[0].rotate_left(1).wrapping_add(v[1].rotate_left(7)).wrapping_add(v[2].rotate_left(12)).wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    let mut words = rest.chunks_exact(4);
    for w in &mut words {
        h = h.wrapping_add(word(w).wrapping_mul(P3)).rotate_left(17).wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h.wrapping_add((b as u32).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

/// The checksum of `data` by `method` into `out[..method.checksum_len()]`
/// (little-endian for the CRCs and xxhash). Methods without a checksum
/// write nothing.
pub fn digest(method: VerifyMethod, data: &[u8], out: &mut [u8]) {
    use VerifyMethod::*;
    match method {
        Md5 => out[..16].copy_from_slice(&md5::Md5::digest(data)),
        Crc64 => out[..8].copy_from_slice(&crc64(data).to_le_bytes()),
        Crc32c | Crc32cIntel => out[..4].copy_from_slice(&crc32c(data).to_le_bytes()),
        Crc32 => out[..4].copy_from_slice(&crc32(data).to_le_bytes()),
        Crc16 => out[..2].copy_from_slice(&crc16(data).to_le_bytes()),
        Crc7 => out[0] = crc7(data),
        Sha1 => out[..20].copy_from_slice(&sha1::Sha1::digest(data)),
        Sha256 => out[..32].copy_from_slice(&sha2::Sha256::digest(data)),
        Sha512 => out[..64].copy_from_slice(&sha2::Sha512::digest(data)),
        Sha3_224 => out[..28].copy_from_slice(&sha3::Sha3_224::digest(data)),
        Sha3_256 => out[..32].copy_from_slice(&sha3::Sha3_256::digest(data)),
        Sha3_384 => out[..48].copy_from_slice(&sha3::Sha3_384::digest(data)),
        Sha3_512 => out[..64].copy_from_slice(&sha3::Sha3_512::digest(data)),
        Xxhash => out[..4].copy_from_slice(&xxh32(data, 1).to_le_bytes()),
        Meta | Pattern | Null => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::verify::METHODS;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn of(m: VerifyMethod, data: &[u8]) -> String {
        let mut out = [0u8; MAX_LEN];
        digest(m, data, &mut out);
        hex(&out[..m.checksum_len() as usize])
    }

    #[test]
    fn crcs_match_their_check_values() {
        let check = b"123456789";
        assert_eq!(crc32c(check), 0xE306_9283);
        assert_eq!(!crc32_with(&CRC32C, !0, check), 0xE306_9283, "table path");
        assert_eq!(crc32(check), 0xCBF4_3926);
        assert_eq!(crc16(check), 0xBB3D, "CRC-16/ARC");
        assert_eq!(crc7(check), 0x75, "CRC-7/MMC");
        // fio's table starts 0, 0x7ad870c830358979 and has the polynomial at 128.
        assert_eq!(CRC64[1], 0x7ad8_70c8_3035_8979);
        assert_eq!(CRC64[128], 0x95AC_9329_AC4B_C9B5);
        assert_eq!(CRC7[1], 0x09);
    }

    #[test]
    fn hashes_match_published_vectors() {
        use VerifyMethod::*;
        assert_eq!(of(Md5, b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(of(Sha1, b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(of(Sha256, b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(of(Sha3_256, b"abc"), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
        // Longer than one 16-byte stripe, with words and bytes left over.
        assert_eq!(xxh32(b"Nobody inspects the spammish repetition", 0), 0xE229_3B2F);
    }

    #[test]
    fn every_method_notices_one_flipped_bit() {
        let mut data = vec![0u8; 4096];
        crate::runner::rng::Rng::new(7).fill(&mut data);
        for (_, m) in METHODS {
            if m.checksum_len() == 0 {
                continue;
            }
            let a = of(*m, &data);
            data[1000] ^= 4;
            assert_ne!(a, of(*m, &data), "{}", m.name());
            data[1000] ^= 4;
        }
    }
}
