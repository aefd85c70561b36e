//! The inner loops of inference: adding and subtracting feature rows (accumulator updates
//! and refreshes) and the output layer's SCReLU dot product, in a portable form and, on
//! x86-64, an AVX2 form chosen at run time, so one binary built for x86-64-v2 runs on any
//! x86-64 CPU and uses 256-bit registers where the CPU has them.
//!
//! # Dispatch
//!
//! A [`Network`](super::Network) asks the CPU once, when it is built, which [`Simd`] level
//! to use. The kernels are the methods of [`Kernels`], implemented by [`Portable`] and
//! [`Avx2`]; the code that calls them (an accumulator update, a refresh, the output layer,
//! a whole `AccumulatorStack::evaluate`) is generic over `Kernels` and `#[inline(always)]`.
//! Each public entry point matches once on the network's level and, for AVX2, calls a
//! `#[target_feature(enable = "avx2")]` wrapper around the generic body: the whole update
//! or evaluation is compiled with AVX2 enabled and the kernels inline into it, so the hot
//! path pays one well-predicted branch per evaluation, not a call per row.
//!
//! # Blocks
//!
//! The network's rows and the accumulators are stored as [`Block`]s of [`HIDDEN_STEP`]
//! lanes aligned to 32 bytes, so every AVX2 load and store is aligned. It matters: tuned
//! for x86-64-v2, the compiler splits a 32-byte access it cannot prove aligned into two
//! 16-byte halves, and AVX2 updates written that way ran no faster than SSE2 ones.
//!
//! Every kernel is exact integer arithmetic (i16 adds and subtracts that wrap, as the
//! accumulator module explains, and dot products summed without overflow), so all levels
//! give the same numbers bit for bit, which the tests below check.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128i, __m256i, _mm256_add_epi16, _mm256_add_epi32, _mm256_load_si256, _mm256_madd_epi16,
    _mm256_max_epi16, _mm256_min_epi16, _mm256_mullo_epi16, _mm256_set1_epi16,
    _mm256_setzero_si256, _mm256_store_si256, _mm256_storeu_si256, _mm256_sub_epi16, _mm_add_epi32,
    _mm_loadu_si128, _mm_madd_epi16, _mm_max_epi16, _mm_min_epi16, _mm_mullo_epi16, _mm_set1_epi16,
    _mm_setzero_si128, _mm_storeu_si128,
};

use super::{HIDDEN_STEP, QA};

/// [`HIDDEN_STEP`] i16 lanes aligned to 32 bytes: one AVX2 register, two SSE2 ones. Hidden
/// sizes are multiples of `HIDDEN_STEP`, so every row and accumulator is whole blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Block(pub [i16; HIDDEN_STEP]);

// A block is exactly one 32-byte register of lanes, with no padding: the AVX2 loads and
// stores below read and write all 32 bytes of a block.
const _: () = assert!(size_of::<Block>() == 32 && size_of::<[i16; HIDDEN_STEP]>() == 32);

/// `values`, whose length is a multiple of [`HIDDEN_STEP`], as blocks.
pub(super) fn to_blocks(values: &[i16]) -> Box<[Block]> {
    let (blocks, tail) = values.as_chunks::<HIDDEN_STEP>();
    assert!(
        tail.is_empty(),
        "{} values are not whole blocks",
        values.len()
    );
    blocks.iter().map(|&lanes| Block(lanes)).collect()
}

/// The lanes of `blocks`, in order.
pub(super) fn lanes(blocks: &[Block]) -> impl Iterator<Item = i16> + '_ {
    blocks.iter().flat_map(|block| block.0)
}

/// Blocks of this many output terms are summed in i32: each term is at most
/// QA * MAX_OUTPUT_WEIGHT * QA = 8,258,175, and 256 of them stay below i32::MAX.
const I32_SAFE_TERMS: usize = 256;
const I32_SAFE_BLOCKS: usize = I32_SAFE_TERMS / HIDDEN_STEP;

/// The kernels a network runs, decided when it is built ([`Simd::detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// Code for the build's target: on x86-64 the dot product in SSE2 intrinsics and the
    /// row operations auto-vectorized for the target (SSE2 with today's x86-64-v2 build).
    Portable,
    /// 256-bit AVX2 intrinsics; only a CPU that has AVX2 yields this level.
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
}

impl Simd {
    /// The fastest level this CPU runs.
    pub fn detect() -> Simd {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = Avx2::detect() {
            return Simd::Avx2(avx2);
        }
        Simd::Portable
    }

    /// Every level this CPU runs, portable first, for the tests that compare them: where
    /// the CPU has no AVX2 they print `SKIPPED` (through this), as the AVX2 kernels go
    /// untested there.
    pub fn available() -> Vec<Simd> {
        let mut levels = vec![Simd::Portable];
        if Simd::detect() != Simd::Portable {
            levels.push(Simd::detect());
        }
        #[cfg(target_arch = "x86_64")]
        if levels.len() == 1 {
            println!("SKIPPED: this CPU has no AVX2, so only the portable kernels are tested");
        }
        levels
    }
}

/// The row operations and the dot product of inference. Implementations give exactly the
/// same results; they differ in speed only. An implementation gives the work on one block
/// (one AVX2 register); the loops over whole rows are written once, here.
pub(super) trait Kernels: Copy {
    /// `start + Σ adds[..][i] - Σ subs[..][i]`, lane by lane (wrapping): block `i` of an
    /// update. Every row holds more than `i` blocks.
    fn add_sub_block<const ADDS: usize, const SUBS: usize>(
        self,
        start: Block,
        adds: &[&[Block]; ADDS],
        subs: &[&[Block]; SUBS],
        i: usize,
    ) -> Block;

    /// `screlu_dot` of at most `I32_SAFE_TERMS` terms, so that they can be summed in i32
    /// lanes.
    fn screlu_dot_block(self, accumulator: &[Block], weights: &[Block]) -> i64;

    /// `out = parent + Σ adds - Σ subs`, lane by lane (wrapping). Every slice holds at
    /// least `out.len()` blocks.
    #[inline(always)]
    fn add_sub_rows<const ADDS: usize, const SUBS: usize>(
        self,
        out: &mut [Block],
        parent: &[Block],
        adds: [&[Block]; ADDS],
        subs: [&[Block]; SUBS],
    ) {
        assert!(parent.len() >= out.len());
        let (adds, subs) = (cut_rows(adds, out.len()), cut_rows(subs, out.len()));
        for (i, (out, &parent)) in out.iter_mut().zip(parent).enumerate() {
            *out = self.add_sub_block(parent, &adds, &subs, i);
        }
    }

    /// `values += Σ adds - Σ subs`, lane by lane (wrapping), as `add_sub_rows` in place.
    #[inline(always)]
    fn add_sub_assign<const ADDS: usize, const SUBS: usize>(
        self,
        values: &mut [Block],
        adds: [&[Block]; ADDS],
        subs: [&[Block]; SUBS],
    ) {
        let (adds, subs) = (cut_rows(adds, values.len()), cut_rows(subs, values.len()));
        for (i, value) in values.iter_mut().enumerate() {
            *value = self.add_sub_block(*value, &adds, &subs, i);
        }
    }

    /// Σ screlu(a) * w over one perspective in units QA * QA * QB, with
    /// a = clamp(acc, 0, QA): (a * w) is formed in i16 (|a * w| <= 255 * 127) and multiplied
    /// by a again in i32. Blocks of `I32_SAFE_TERMS` terms are summed in i32, then into the
    /// i64 total. The two slices have the same length.
    #[inline(always)]
    fn screlu_dot(self, accumulator: &[Block], weights: &[Block]) -> i64 {
        debug_assert_eq!(accumulator.len(), weights.len());
        let mut total = 0;
        for (accumulator, weights) in accumulator
            .chunks(I32_SAFE_BLOCKS)
            .zip(weights.chunks(I32_SAFE_BLOCKS))
        {
            total += self.screlu_dot_block(accumulator, weights);
        }
        total
    }
}

/// Each of `rows` cut to `len` blocks, so that a loop over `0..len` indexes them without
/// bounds checks. Not a `target_feature` function, so that `map` and its closure inline into
/// it and it into the AVX2 kernels (a closure written inside a `target_feature` function
/// does not inline into `map`, which leaves a bounds check on every load).
#[inline(always)]
fn cut_rows<const N: usize>(rows: [&[Block]; N], len: usize) -> [&[Block]; N] {
    rows.map(|row| &row[..len])
}

/// The kernels every CPU of the build's target runs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Portable;

impl Kernels for Portable {
    /// A fixed 16 lanes and no tail: the compiler vectorizes it for the build's target.
    #[inline(always)]
    fn add_sub_block<const ADDS: usize, const SUBS: usize>(
        self,
        start: Block,
        adds: &[&[Block]; ADDS],
        subs: &[&[Block]; SUBS],
        i: usize,
    ) -> Block {
        let mut lanes = start.0;
        for row in adds {
            for (lane, weight) in lanes.iter_mut().zip(&row[i].0) {
                *lane = lane.wrapping_add(*weight);
            }
        }
        for row in subs {
            for (lane, weight) in lanes.iter_mut().zip(&row[i].0) {
                *lane = lane.wrapping_sub(*weight);
            }
        }
        Block(lanes)
    }

    #[inline(always)]
    fn screlu_dot_block(self, accumulator: &[Block], weights: &[Block]) -> i64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `screlu_dot_block_sse2` needs only SSE2, which every x86-64 CPU has (it
            // is part of the x86_64 target's baseline, so this build already assumes it).
            unsafe { screlu_dot_block_sse2(accumulator, weights) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        screlu_dot_block_scalar(accumulator, weights)
    }
}

/// `screlu_dot_block` term by term: the reference the vector forms are tested against, and
/// the kernel of targets other than x86-64.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn screlu_dot_block_scalar(accumulator: &[Block], weights: &[Block]) -> i64 {
    let sum: i32 = lanes(accumulator)
        .zip(lanes(weights))
        .map(|(a, w)| {
            let a = a.clamp(0, QA as i16);
            i32::from(a * w) * i32::from(a)
        })
        .sum();
    i64::from(sum)
}

/// `screlu_dot_block` with SSE2 intrinsics (SSE2 is in every x86-64 CPU: no run-time
/// check): eight terms a step, the i16 product a * w (`pmullw`) times a again with the
/// 16-bit multiply-add (`pmaddwd`: two i16 x i16 products summed into each i32 lane). The
/// compiler does not find `pmaddwd` in the scalar form (knowing a >= 0, it widens a
/// unsigned) and emits 4-lane code at about 3 instructions a term. Each of the four i32
/// lanes takes 2 terms a step, so it sums at most `I32_SAFE_TERMS` / 4 terms: within the
/// bound that makes blocks of `I32_SAFE_TERMS` safe.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn screlu_dot_block_sse2(accumulator: &[Block], weights: &[Block]) -> i64 {
    const LANES: usize = 8;
    let zero = _mm_setzero_si128();
    let ceiling = _mm_set1_epi16(QA as i16);
    let mut sums = zero;
    for (a, w) in accumulator.iter().zip(weights) {
        for (a, w) in
            a.0.as_chunks::<LANES>()
                .0
                .iter()
                .zip(w.0.as_chunks::<LANES>().0)
        {
            // SAFETY: `a` and `w` are arrays of eight i16, 16 readable bytes each, and
            // `_mm_loadu_si128` reads 16 bytes with no alignment requirement.
            let (a, w) = unsafe {
                (
                    _mm_loadu_si128(a.as_ptr().cast::<__m128i>()),
                    _mm_loadu_si128(w.as_ptr().cast::<__m128i>()),
                )
            };
            let a = _mm_min_epi16(_mm_max_epi16(a, zero), ceiling);
            sums = _mm_add_epi32(sums, _mm_madd_epi16(_mm_mullo_epi16(a, w), a));
        }
    }
    let mut lanes = [0i32; 4];
    // SAFETY: `lanes` is 16 writable bytes; `_mm_storeu_si128` has no alignment need.
    unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast::<__m128i>(), sums) };
    lanes.iter().map(|&lane| i64::from(lane)).sum()
}

/// Proof that the CPU has AVX2: the only way to get one is [`Avx2::detect`], which asks
/// the CPU. Its kernels call `#[target_feature(enable = "avx2")]` functions, which is
/// sound because a value of this type exists.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` when this CPU runs AVX2 instructions (and the operating system saves the
    /// 256-bit registers, which `is_x86_feature_detected!` checks too).
    pub fn detect() -> Option<Avx2> {
        is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Kernels for Avx2 {
    #[inline(always)]
    fn add_sub_block<const ADDS: usize, const SUBS: usize>(
        self,
        start: Block,
        adds: &[&[Block]; ADDS],
        subs: &[&[Block]; SUBS],
        i: usize,
    ) -> Block {
        // SAFETY: `self` is an `Avx2`, so the CPU has AVX2 (see `Avx2::detect`).
        unsafe { add_sub_block_avx2(start, adds, subs, i) }
    }

    #[inline(always)]
    fn screlu_dot_block(self, accumulator: &[Block], weights: &[Block]) -> i64 {
        // SAFETY: `self` is an `Avx2`, so the CPU has AVX2 (see `Avx2::detect`).
        unsafe { screlu_dot_block_avx2(accumulator, weights) }
    }
}

/// One block in a register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn load(block: &Block) -> __m256i {
    // SAFETY: a `Block` is 32 readable bytes aligned to 32 (`repr(align(32))`), which is
    // what the aligned load `_mm256_load_si256` reads and requires.
    unsafe { _mm256_load_si256((block as *const Block).cast::<__m256i>()) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn store(block: &mut Block, value: __m256i) {
    // SAFETY: a `Block` is 32 bytes aligned to 32, here borrowed exclusively, which is what
    // the aligned store `_mm256_store_si256` writes and requires.
    unsafe { _mm256_store_si256((block as *mut Block).cast::<__m256i>(), value) }
}

/// [`Kernels::add_sub_block`] in one register: the parent's block loaded once, each row's
/// block added or subtracted straight from memory, stored once.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn add_sub_block_avx2<const ADDS: usize, const SUBS: usize>(
    start: Block,
    adds: &[&[Block]; ADDS],
    subs: &[&[Block]; SUBS],
    i: usize,
) -> Block {
    let mut value = load(&start);
    for row in adds {
        value = _mm256_add_epi16(value, load(&row[i]));
    }
    for row in subs {
        value = _mm256_sub_epi16(value, load(&row[i]));
    }
    let mut block = Block::default();
    store(&mut block, value);
    block
}

/// [`Kernels::screlu_dot_block`] 16 terms a step, as `screlu_dot_block_sse2` with registers
/// twice as wide: each of the eight i32 lanes takes 2 terms a step, so it sums at most
/// `I32_SAFE_TERMS` / 8 terms, within the bound.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn screlu_dot_block_avx2(accumulator: &[Block], weights: &[Block]) -> i64 {
    let zero = _mm256_setzero_si256();
    let ceiling = _mm256_set1_epi16(QA as i16);
    let mut sums = zero;
    for (a, w) in accumulator.iter().zip(weights) {
        let a = _mm256_min_epi16(_mm256_max_epi16(load(a), zero), ceiling);
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(_mm256_mullo_epi16(a, load(w)), a));
    }
    let mut lanes = [0i32; 8];
    // SAFETY: `lanes` is 32 writable bytes, which is what `_mm256_storeu_si256` writes; it
    // needs no alignment.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), sums) };
    lanes.iter().map(|&lane| i64::from(lane)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::MAX_OUTPUT_WEIGHT;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Hidden sizes of every shape: one register, one dot-product block, several blocks, a
    /// partial last block, the largest.
    const SIZES: [usize; 7] = [16, 32, 256, 272, 512, 1024, 2048];

    /// Runs `check` once per level this CPU has, with that level's kernels. A CPU without
    /// AVX2 tests the portable kernels only, and says so.
    macro_rules! for_each_level {
        ($check:ident) => {
            for level in Simd::available() {
                match level {
                    Simd::Portable => $check(Portable),
                    #[cfg(target_arch = "x86_64")]
                    Simd::Avx2(avx2) => $check(avx2),
                }
            }
        };
    }

    fn random_row(rng: &mut StdRng, n: usize, range: std::ops::RangeInclusive<i16>) -> Vec<i16> {
        (0..n).map(|_| rng.random_range(range.clone())).collect()
    }

    /// The dot product equals the scalar form exactly, for activations below 0, inside
    /// 0..=QA and above it, at every hidden size shape and at the extreme values the bounds
    /// allow (every activation saturated, every weight at ±MAX_OUTPUT_WEIGHT, which takes
    /// the sum past an i32 from H = 130 on).
    #[test]
    fn screlu_dot_equals_the_scalar_form() {
        fn check(kernels: impl Kernels) {
            let mut rng = StdRng::seed_from_u64(3);
            for hidden in SIZES {
                for _ in 0..50 {
                    let accumulator = random_row(&mut rng, hidden, -400..=700);
                    let weights =
                        random_row(&mut rng, hidden, -MAX_OUTPUT_WEIGHT..=MAX_OUTPUT_WEIGHT);
                    assert_eq!(
                        dot(kernels, &accumulator, &weights),
                        screlu_dot_scalar(&accumulator, &weights)
                    );
                }
                // The whole i16 range of activations, and the weight bounds.
                let accumulator = random_row(&mut rng, hidden, i16::MIN..=i16::MAX);
                let weights = random_row(&mut rng, hidden, -MAX_OUTPUT_WEIGHT..=MAX_OUTPUT_WEIGHT);
                assert_eq!(
                    dot(kernels, &accumulator, &weights),
                    screlu_dot_scalar(&accumulator, &weights)
                );
                for activation in [QA as i16, i16::MAX] {
                    let saturated = vec![activation; hidden];
                    for weight in [MAX_OUTPUT_WEIGHT, -MAX_OUTPUT_WEIGHT] {
                        let weights = vec![weight; hidden];
                        let expected =
                            hidden as i64 * i64::from(QA) * i64::from(QA) * i64::from(weight);
                        assert_eq!(dot(kernels, &saturated, &weights), expected);
                        assert_eq!(screlu_dot_scalar(&saturated, &weights), expected);
                    }
                }
                let floor = vec![i16::MIN; hidden];
                assert_eq!(dot(kernels, &floor, &vec![MAX_OUTPUT_WEIGHT; hidden]), 0);
            }
        }
        for_each_level!(check);
    }

    fn dot(kernels: impl Kernels, accumulator: &[i16], weights: &[i16]) -> i64 {
        kernels.screlu_dot(&to_blocks(accumulator), &to_blocks(weights))
    }

    /// `screlu_dot` term by term, in i32 sums of `I32_SAFE_TERMS` terms.
    fn screlu_dot_scalar(accumulator: &[i16], weights: &[i16]) -> i64 {
        accumulator
            .chunks(I32_SAFE_TERMS)
            .zip(weights.chunks(I32_SAFE_TERMS))
            .map(|(accumulator, weights)| {
                screlu_dot_block_scalar(&to_blocks(accumulator), &to_blocks(weights))
            })
            .sum()
    }

    /// `parent + Σ adds - Σ subs` lane by lane, the obvious way.
    fn reference(parent: &[i16], adds: &[&[i16]], subs: &[&[i16]]) -> Vec<i16> {
        (0..parent.len())
            .map(|i| {
                let added = adds.iter().fold(parent[i], |v, row| v.wrapping_add(row[i]));
                subs.iter().fold(added, |v, row| v.wrapping_sub(row[i]))
            })
            .collect()
    }

    /// Both row operations equal the reference for every count of rows the accumulators
    /// use, at every hidden size, with rows longer than the output (as feature rows are
    /// cut from one long array) and with values spanning the whole i16 range, so that lanes
    /// wrap both ways.
    #[test]
    fn row_operations_equal_the_reference() {
        fn check(kernels: impl Kernels) {
            let mut rng = StdRng::seed_from_u64(5);
            for hidden in SIZES {
                for full_range in [false, true] {
                    let range = if full_range {
                        i16::MIN..=i16::MAX
                    } else {
                        -505..=505
                    };
                    let parent = random_row(&mut rng, hidden, range.clone());
                    let rows: Vec<Vec<i16>> = (0..4)
                        .map(|_| random_row(&mut rng, hidden + 32, range.clone()))
                        .collect();
                    let blocks: Vec<Box<[Block]>> = rows.iter().map(|r| to_blocks(r)).collect();
                    let [a, b, c, d] = [0, 1, 2, 3].map(|i| (&rows[i][..], &blocks[i][..]));
                    let parent_blocks = to_blocks(&parent);
                    let mut out = vec![Block::default(); hidden / HIDDEN_STEP];
                    let mut in_place = parent_blocks.clone();
                    macro_rules! agree {
                        ([$($add:expr),*], [$($sub:expr),*]) => {
                            let expected = reference(&parent, &[$($add.0),*], &[$($sub.0),*]);
                            kernels.add_sub_rows(
                                &mut out,
                                &parent_blocks,
                                [$($add.1),*],
                                [$($sub.1),*],
                            );
                            assert_eq!(lanes(&out).collect::<Vec<_>>(), expected, "{hidden}");
                            in_place.copy_from_slice(&parent_blocks);
                            kernels.add_sub_assign(&mut in_place, [$($add.1),*], [$($sub.1),*]);
                            let in_place = lanes(&in_place).collect::<Vec<_>>();
                            assert_eq!(in_place, expected, "{hidden}, in place");
                        };
                    }
                    agree!([], []);
                    agree!([a], []);
                    agree!([], [a]);
                    agree!([a], [b]);
                    agree!([a], [b, c]);
                    agree!([a, b], [c, d]);
                }
            }
        }
        for_each_level!(check);
    }
}
