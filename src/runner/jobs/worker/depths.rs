//! fio's queue-depth distributions, counted per worker and merged per job.

/// fio's queue-depth distributions (`iodepth_level`, `iodepth_submit`,
/// `iodepth_complete`) as counts: I/Os by the depth they were issued at
/// (1, 2, 4, 8, 16, 32, >=64), and submit and reap calls by how many I/Os
/// they carried (0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depths {
    pub level: [u64; 7],
    pub submit: [u64; 7],
    pub complete: [u64; 7],
}

impl Depths {
    #[inline]
    pub(super) fn level_bucket(depth: usize) -> usize {
        match depth {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        }
    }
    #[inline]
    pub(super) fn batch_bucket(n: usize) -> usize {
        match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        }
    }
    pub fn merge(&mut self, o: &Depths) {
        for (a, b) in [(&mut self.level, &o.level), (&mut self.submit, &o.submit), (&mut self.complete, &o.complete)] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}
