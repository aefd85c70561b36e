//! The trainer's two innermost loops, the ones that cost time: a block of an accumulator
//! summed over a sample's feature rows, and a block of the accumulator's gradient added to
//! each of those rows. Each is written twice: portably, and in AVX2 intrinsics that keep
//! the block in registers and load and store whole aligned registers (auto-vectorized, the
//! x86-64-v2 build splits each 32-byte access in two halves, which costs about a third of
//! the speed). The gradient module's generic bodies call them through [`Kernels`] and are
//! compiled once per level. Both levels add the same f32 in the same order, so they give
//! the same bits (a test checks it).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256, _mm256_add_ps, _mm256_load_ps, _mm256_setzero_ps, _mm256_store_ps,
};

use crate::nnue::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::nnue::lanes::LANES;

/// The inner loops at one instruction-set level.
pub trait Kernels: Copy {
    /// `start` plus the rows `weights[input * stride + block]` for each of `inputs`, added
    /// in order.
    fn accumulate<const B: usize>(
        self,
        start: &Lanes<B>,
        weights: &[Lanes<B>],
        inputs: &[u16],
        rows: (usize, usize),
    ) -> Lanes<B>;

    /// Adds `delta` to the rows `grads[input * stride + block]` for each of `inputs`, in
    /// order (an input may come twice).
    fn add_to_rows<const B: usize>(
        self,
        delta: &Lanes<B>,
        grads: &mut [Lanes<B>],
        inputs: &[u16],
        rows: (usize, usize),
    );
}

/// Plain loops, vectorized as the build's target allows.
#[derive(Clone, Copy, Debug)]
pub struct Portable;

impl Kernels for Portable {
    #[inline(always)]
    fn accumulate<const B: usize>(
        self,
        start: &Lanes<B>,
        weights: &[Lanes<B>],
        inputs: &[u16],
        (stride, block): (usize, usize),
    ) -> Lanes<B> {
        let mut sum = *start;
        for &input in inputs {
            let row = &weights[usize::from(input) * stride + block];
            for k in 0..B {
                sum.0[k] += row.0[k];
            }
        }
        sum
    }

    #[inline(always)]
    fn add_to_rows<const B: usize>(
        self,
        delta: &Lanes<B>,
        grads: &mut [Lanes<B>],
        inputs: &[u16],
        (stride, block): (usize, usize),
    ) {
        for &input in inputs {
            let row = &mut grads[usize::from(input) * stride + block];
            for k in 0..B {
                row.0[k] += delta.0[k];
            }
        }
    }
}

/// AVX2 intrinsics; only `Simd::Avx2`, which exists only where the CPU has AVX2, leads here.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2(pub crate::nnue::Avx2);

/// The most registers a block takes: 64 f32.
#[cfg(target_arch = "x86_64")]
const MAX_REGISTERS: usize = 8;

#[cfg(target_arch = "x86_64")]
impl Kernels for Avx2 {
    #[inline(always)]
    fn accumulate<const B: usize>(
        self,
        start: &Lanes<B>,
        weights: &[Lanes<B>],
        inputs: &[u16],
        rows: (usize, usize),
    ) -> Lanes<B> {
        // SAFETY: an `Avx2` holds the token only a CPU with AVX2 yields.
        unsafe { accumulate_avx2(start, weights, inputs, rows) }
    }

    #[inline(always)]
    fn add_to_rows<const B: usize>(
        self,
        delta: &Lanes<B>,
        grads: &mut [Lanes<B>],
        inputs: &[u16],
        rows: (usize, usize),
    ) {
        // SAFETY: as in `accumulate`.
        unsafe { add_to_rows_avx2(delta, grads, inputs, rows) }
    }
}

/// Register `r` of a block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn load<const B: usize>(lanes: &Lanes<B>, r: usize) -> __m256 {
    assert!(r < B / LANES);
    // SAFETY: `Lanes` is aligned to 32 bytes and `r * LANES + 8 <= B` (asserted), so the 32
    // bytes read are inside `lanes` and start on a 32-byte boundary, as the aligned load needs.
    unsafe { _mm256_load_ps(lanes.0.as_ptr().add(r * LANES)) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn store<const B: usize>(lanes: &mut Lanes<B>, r: usize, value: __m256) {
    assert!(r < B / LANES);
    // SAFETY: as in `load`, into memory borrowed exclusively.
    unsafe { _mm256_store_ps(lanes.0.as_mut_ptr().add(r * LANES), value) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn accumulate_avx2<const B: usize>(
    start: &Lanes<B>,
    weights: &[Lanes<B>],
    inputs: &[u16],
    (stride, block): (usize, usize),
) -> Lanes<B> {
    let registers = B / LANES;
    assert!(registers <= MAX_REGISTERS);
    let mut sum = [_mm256_setzero_ps(); MAX_REGISTERS];
    for (r, value) in sum.iter_mut().enumerate().take(registers) {
        *value = load(start, r);
    }
    for &input in inputs {
        let row = &weights[usize::from(input) * stride + block];
        for (r, value) in sum.iter_mut().enumerate().take(registers) {
            *value = _mm256_add_ps(*value, load(row, r));
        }
    }
    let mut out = Lanes::<B>::default();
    for (r, &value) in sum.iter().enumerate().take(registers) {
        store(&mut out, r, value);
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn add_to_rows_avx2<const B: usize>(
    delta: &Lanes<B>,
    grads: &mut [Lanes<B>],
    inputs: &[u16],
    (stride, block): (usize, usize),
) {
    let registers = B / LANES;
    assert!(registers <= MAX_REGISTERS);
    let mut d = [_mm256_setzero_ps(); MAX_REGISTERS];
    for (r, value) in d.iter_mut().enumerate().take(registers) {
        *value = load(delta, r);
    }
    for &input in inputs {
        let row = &mut grads[usize::from(input) * stride + block];
        for (r, &value) in d.iter().enumerate().take(registers) {
            let updated = _mm256_add_ps(load(row, r), value);
            store(row, r, updated);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn random_lanes<const B: usize>(count: usize, rng: &mut StdRng) -> Vec<Lanes<B>> {
        (0..count)
            .map(|_| Lanes(std::array::from_fn(|_| rng.random_range(-1.0..1.0))))
            .collect()
    }

    /// Every level this CPU runs gives the portable loops' bits, for each block width,
    /// with an input repeated.
    fn levels_agree<const B: usize>() {
        let mut rng = StdRng::seed_from_u64(B as u64);
        let stride = 3;
        let weights = random_lanes::<B>(40 * stride, &mut rng);
        let start = random_lanes::<B>(1, &mut rng)[0];
        let inputs: Vec<u16> = vec![0, 7, 39, 7, 12, 30];
        for block in 0..stride {
            let portable = Portable.accumulate(&start, &weights, &inputs, (stride, block));
            let mut grads = weights.clone();
            Portable.add_to_rows(&start, &mut grads, &inputs, (stride, block));
            assert_ne!(grads, weights);
            #[cfg(target_arch = "x86_64")]
            for level in crate::nnue::Simd::available() {
                let crate::nnue::Simd::Avx2(token) = level else {
                    continue;
                };
                let avx2 = Avx2(token);
                let sum = avx2.accumulate(&start, &weights, &inputs, (stride, block));
                assert_eq!(sum, portable);
                let mut avx2_grads = weights.clone();
                avx2.add_to_rows(&start, &mut avx2_grads, &inputs, (stride, block));
                assert_eq!(avx2_grads, grads);
            }
        }
    }

    #[test]
    fn levels_give_the_same_bits() {
        levels_agree::<8>();
        levels_agree::<16>();
        levels_agree::<32>();
        levels_agree::<64>();
    }
}
