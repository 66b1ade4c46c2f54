//! Random choices for the generators.

use meshrun_compiler::splitmix::SplitMix64;

pub(super) struct Rng(pub(super) SplitMix64);

impl Rng {
    pub(super) fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
    pub(super) fn chance(&mut self, p: f64) -> bool {
        self.0.next_f64() < p
    }
    pub(super) fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    pub(super) fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}
