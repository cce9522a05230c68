//! fio's latency bins (fio 3.33's `FIO_IO_U_PLAT_*`): the layout of its
//! histogram logs and of the `bins` maps in `--output-format=json+`, which
//! fio's tools (`fiologparser_hist.py`, `fio_jsonplus_clat2csv`) decode by
//! these same rules. Values below 128 ns have a bin each; above, every
//! power of two is split into 64 bins, so a bin is at most 1/64 (1.6%) wide.

/// Bits of the value kept exactly within one power of two.
const BITS: u32 = 6;
/// Bins per power of two.
const PER_GROUP: usize = 1 << BITS;
/// Powers of two covered (fio 3.33: 29 groups, up to ~17 s in ns).
const GROUPS: usize = 29;
/// Bins in all: the columns of a histogram log line after `time, ddir, bs`.
pub const NR: usize = GROUPS * PER_GROUP;

/// The bin a latency in ns falls into; values beyond the last bin go to it.
#[inline]
pub fn index(ns: u64) -> usize {
    if ns < (PER_GROUP as u64) << 1 {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let dropped = msb - BITS;
    let base = ((dropped + 1) as usize) << BITS;
    let within = ((ns >> dropped) as usize) & (PER_GROUP - 1);
    (base + within).min(NR - 1)
}

/// The value fio reports for a bin: its middle (exact below 128 ns).
pub fn value(idx: usize) -> u64 {
    if idx < PER_GROUP << 1 {
        return idx as u64;
    }
    let dropped = (idx >> BITS) as u32 - 1;
    let base = 1u64 << (dropped + BITS);
    let within = (idx & (PER_GROUP - 1)) as u64;
    // base + (within + 0.5) * 2^dropped, in integers.
    base + (within << dropped) + ((1u64 << dropped) >> 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_land_in_their_bin() {
        assert_eq!(NR, 1856);
        for v in 0..128 {
            assert_eq!(value(index(v)), v);
        }
        // Every bin's value maps back to the same bin, and bins increase.
        for i in 1..NR {
            assert_eq!(index(value(i)), i, "bin {i}");
            assert!(value(i) > value(i - 1));
        }
        // A bin is at most 1/64 of its value wide.
        for v in [1000u64, 12_345, 4_000_000, 987_654_321] {
            let got = value(index(v)) as f64;
            assert!((got - v as f64).abs() / (v as f64) < 1.0 / 64.0, "{v} -> {got}");
        }
        // fio's own output: a 10.69 µs completion is reported in bin 10688.
        assert_eq!(value(index(10_690)), 10_688);
        assert_eq!(index(u64::MAX), NR - 1);
    }
}
