//! MT19937-64 (Matsumoto and Nishimura's 64-bit Mersenne Twister, the
//! standard reference algorithm with `init_by_array64`), and the record
//! order IOzone's random tests visit: a Fisher–Yates shuffle of 0..N-1
//! driven by it, seeded with IOzone's fixed key.

const NN: usize = 312;
const MM: usize = 156;
const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
/// The most significant 33 bits.
const UM: u64 = 0xFFFF_FFFF_8000_0000;
/// The least significant 31 bits.
const LM: u64 = 0x7FFF_FFFF;

/// The key IOzone seeds its random tests with, every time.
pub(crate) const IOZONE_KEY: [u64; 4] = [0x12345, 0x23456, 0x34567, 0x45678];

pub(crate) struct Mt64 {
    mt: [u64; NN],
    mti: usize,
}

impl Mt64 {
    /// `init_genrand64(seed)`.
    pub(crate) fn new(seed: u64) -> Mt64 {
        let mut mt = [0u64; NN];
        mt[0] = seed;
        for i in 1..NN {
            mt[i] = 6364136223846793005u64.wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 62)).wrapping_add(i as u64);
        }
        Mt64 { mt, mti: NN }
    }

    /// `init_by_array64(key)`.
    pub(crate) fn by_array(key: &[u64]) -> Mt64 {
        let mut g = Mt64::new(19650218);
        let mt = &mut g.mt;
        let (mut i, mut j) = (1usize, 0usize);
        let len = key.len().max(1);
        for _ in 0..NN.max(len) {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 62);
            let k = key.get(j).copied().unwrap_or(0);
            mt[i] = (mt[i] ^ prev.wrapping_mul(3935559000370003845)).wrapping_add(k).wrapping_add(j as u64);
            i += 1;
            j += 1;
            if i >= NN {
                mt[0] = mt[NN - 1];
                i = 1;
            }
            if j >= len {
                j = 0;
            }
        }
        for _ in 0..NN - 1 {
            let prev = mt[i - 1] ^ (mt[i - 1] >> 62);
            mt[i] = (mt[i] ^ prev.wrapping_mul(2862933555777941757)).wrapping_sub(i as u64);
            i += 1;
            if i >= NN {
                mt[0] = mt[NN - 1];
                i = 1;
            }
        }
        // The MSB is 1, assuring a non-zero initial array.
        mt[0] = 1 << 63;
        g
    }

    fn twist(&mut self) {
        let mag = |x: u64| if x & 1 == 1 { MATRIX_A } else { 0 };
        let mt = &mut self.mt;
        for i in 0..NN {
            let x = (mt[i] & UM) | (mt[(i + 1) % NN] & LM);
            mt[i] = mt[(i + MM) % NN] ^ (x >> 1) ^ mag(x);
        }
        self.mti = 0;
    }

    /// `genrand64_int64()`: uniform on [0, 2^64).
    pub(crate) fn next_u64(&mut self) -> u64 {
        if self.mti >= NN {
            self.twist();
        }
        let mut x = self.mt[self.mti];
        self.mti += 1;
        x ^= (x >> 29) & 0x5555_5555_5555_5555;
        x ^= (x << 17) & 0x71D6_7FFF_EDA6_0000;
        x ^= (x << 37) & 0xFFF7_EEE0_0000_0000;
        x ^= x >> 43;
        x
    }
}

/// 0..n-1 in the order a random pass visits them: re-seeded with IOzone's
/// key on every call, so the random read and the random write that follows
/// see the same order. Fisher–Yates from the top: slot i swaps with slot
/// `next % (i + 1)`. (IOzone documents the generator, the key and the
/// shuffle; how it maps a draw to a slot is not documented, so its exact
/// permutation may differ from this one.)
pub(crate) fn permutation(n: u64) -> Vec<u64> {
    let mut g = Mt64::by_array(&IOZONE_KEY);
    let mut v: Vec<u64> = (0..n).collect();
    for i in (1..v.len()).rev() {
        let j = (g.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}
