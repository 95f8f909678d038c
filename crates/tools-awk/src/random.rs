//! `rand()`/`srand()` as mawk 1.3.4 (Debian build) computes them: glibc's
//! `random()` (the TYPE_3 additive feedback generator `srandom` sets up)
//! divided by `RAND_MAX`. Agents write `srand(42); ... rand()` to sample
//! reproducibly, so the sequence for a given seed must be glibc's.

/// glibc's `random_r` state for the default 128-byte table (degree 31,
/// separation 3).
#[derive(Clone, Debug)]
pub struct Random {
    r: [u32; 31],
    /// Front and rear indices into `r` (glibc's `fptr`/`rptr`).
    f: usize,
    b: usize,
}

impl Random {
    /// `srandom(seed)`: a seed of 0 is taken as 1, as glibc does.
    pub fn new(seed: u32) -> Random {
        let mut r = [0u32; 31];
        let mut word: i32 = if seed == 0 { 1 } else { seed as i32 };
        r[0] = word as u32;
        for slot in r.iter_mut().skip(1) {
            // Park–Miller "minimal standard" step, computed without overflow
            // as glibc does (Schrage's method).
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807i32
                .wrapping_mul(lo)
                .wrapping_sub(2_836i32.wrapping_mul(hi));
            if word < 0 {
                word = word.wrapping_add(i32::MAX);
            }
            *slot = word as u32;
        }
        let mut g = Random { r, f: 3, b: 0 };
        // glibc discards the first 310 outputs (10 * degree).
        for _ in 0..310 {
            g.next_raw();
        }
        g
    }

    /// The next `random()` value, in `0..=RAND_MAX`.
    fn next_raw(&mut self) -> u32 {
        let v = self.r[self.f].wrapping_add(self.r[self.b]);
        self.r[self.f] = v;
        self.f = (self.f + 1) % 31;
        self.b = (self.b + 1) % 31;
        v >> 1
    }

    /// mawk's `rand()`: `random() / RAND_MAX`.
    pub fn next_f64(&mut self) -> f64 {
        self.next_raw() as f64 / i32::MAX as f64
    }
}

#[cfg(test)]
mod tests {
    use super::Random;

    #[test]
    fn glibc_sequence_for_seed_1() {
        let mut g = Random::new(1);
        let want = [1_804_289_383u32, 846_930_886, 1_681_692_777, 1_714_636_915];
        for w in want {
            assert_eq!(g.next_raw(), w);
        }
    }
}
