//! The loss and its gradient: what training adds to `nnue::FloatNetwork`'s forward pass.
//!
//! For one sample the loss is `(sigmoid(out * gain) - target)^2`, `out` the network's output
//! in logits (centipawns / EVAL_SCALE) and `gain` the sample's (1.0 unless the target is on
//! another scale: `data::Target`). The gradient is a flat vector in the parameters'
//! layout (`FloatNetwork::tensors_of` splits it); only the feature-weight rows of a
//! sample's active inputs get anything from it.
//!
//! # Speed
//!
//! Both passes walk the hidden layer in blocks of up to 64 neurons (`BLOCK`): a block of
//! the accumulator (forward) or of its gradient (backward) stays in registers while every
//! active feature's row adds to it or takes from it, so each row costs one load (forward)
//! or one load and one store (backward) per lane instead of two and one. The same generic
//! body is compiled twice, plainly and inside an AVX2 `target_feature` function, and the
//! level is chosen at run time ([`Simd`], as the engine's net does), so the binary stays
//! portable and uses 256-bit registers where the CPU has them. Per gradient element the
//! summation order is that of the plain loop (samples, sides, features in order), so the
//! level changes the speed, not the result of the backward pass.

use crate::nnue::lanes::{as_lanes, as_lanes_mut, AlignedF32s, Lanes};
use crate::nnue::{output_bucket, screlu, FloatNetwork, Simd, HIDDEN_STEP};

use super::data::TrainingSample;
#[cfg(target_arch = "x86_64")]
use super::kernels::Avx2;
use super::kernels::{Kernels, Portable};

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The widest block of hidden neurons the kernels keep in registers: 64 f32 lanes are
/// eight AVX2 registers (sixteen SSE ones), with registers to spare for the row loaded.
const BLOCK: usize = 64;

/// Per-thread working memory for one sample at a time.
pub struct Scratch {
    /// The accumulators of the last sample, side to move first.
    accumulators: [AlignedF32s; 2],
    simd: Simd,
}

impl Scratch {
    /// Scratch for a net of `hidden` neurons, with the fastest kernels this CPU runs.
    pub fn new(hidden: usize) -> Scratch {
        Scratch::with_simd(hidden, Simd::detect())
    }

    /// Scratch that runs the kernels of `simd` (tests compare the levels).
    pub fn with_simd(hidden: usize, simd: Simd) -> Scratch {
        Scratch {
            accumulators: [AlignedF32s::zeros(hidden), AlignedF32s::zeros(hidden)],
            simd,
        }
    }
}

/// The output in logits for the sample's side to move.
pub fn logit(net: &FloatNetwork, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
    match scratch.simd {
        Simd::Portable => forward(Portable, net, sample, &mut scratch.accumulators),
        // SAFETY: a `Simd::Avx2` holds an `Avx2`, which exists only on a CPU with AVX2,
        // the one feature the callee is compiled for.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2(token) => unsafe {
            forward_avx2(Avx2(token), net, sample, &mut scratch.accumulators)
        },
    }
}

/// (sigmoid(out) - target)^2 for one sample.
pub fn squared_error(net: &FloatNetwork, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
    let error = sigmoid(logit(net, sample, scratch) * sample.gain) - sample.target;
    error * error
}

/// Adds `scale` times the gradient of this sample's squared error (sigmoid(out) -
/// target)^2 to `grad` and returns the squared error. Only the feature-weight rows of
/// the sample's active features are touched.
pub fn add_gradient(
    net: &FloatNetwork,
    sample: &TrainingSample,
    scale: f32,
    grad: &mut AlignedF32s,
    scratch: &mut Scratch,
) -> f32 {
    match scratch.simd {
        Simd::Portable => forward_backward(
            Portable,
            net,
            sample,
            scale,
            grad,
            &mut scratch.accumulators,
        ),
        // SAFETY: as in `logit`.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2(token) => unsafe {
            forward_backward_avx2(
                Avx2(token),
                net,
                sample,
                scale,
                grad,
                &mut scratch.accumulators,
            )
        },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn forward_avx2(
    kernels: Avx2,
    net: &FloatNetwork,
    sample: &TrainingSample,
    acc: &mut [AlignedF32s; 2],
) -> f32 {
    forward(kernels, net, sample, acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn forward_backward_avx2(
    kernels: Avx2,
    net: &FloatNetwork,
    sample: &TrainingSample,
    scale: f32,
    grad: &mut [f32],
    acc: &mut [AlignedF32s; 2],
) -> f32 {
    forward_backward(kernels, net, sample, scale, grad, acc)
}

#[inline(always)]
fn forward_backward(
    kernels: impl Kernels,
    net: &FloatNetwork,
    sample: &TrainingSample,
    scale: f32,
    grad: &mut [f32],
    acc: &mut [AlignedF32s; 2],
) -> f32 {
    let out = forward(kernels, net, sample, acc);
    let predicted = sigmoid(out * sample.gain);
    let error = predicted - sample.target;
    let d_out = scale * 2.0 * error * predicted * (1.0 - predicted) * sample.gain;
    backward(kernels, net, sample, d_out, grad, acc);
    error * error
}

/// Calls `body` with the widest block that divides the hidden size. Every hidden size is
/// a multiple of `HIDDEN_STEP`, so one always does.
macro_rules! with_block {
    ($h:expr, $body:ident ( $($arg:expr),* )) => {
        if $h % BLOCK == 0 {
            $body::<BLOCK>($($arg),*)
        } else if $h % (2 * HIDDEN_STEP) == 0 {
            $body::<{ 2 * HIDDEN_STEP }>($($arg),*)
        } else {
            $body::<HIDDEN_STEP>($($arg),*)
        }
    };
}

/// A tensor of the network or of a gradient as aligned blocks of `B`: every tensor but the
/// output biases starts at a multiple of H values from the start of an aligned vector, and
/// `B` divides H.
fn blocks<const B: usize>(values: &[f32]) -> &[Lanes<B>] {
    as_lanes(values).expect("tensors of aligned vectors are whole aligned blocks")
}

fn blocks_mut<const B: usize>(values: &mut [f32]) -> &mut [Lanes<B>] {
    as_lanes_mut(values).expect("tensors of aligned vectors are whole aligned blocks")
}

/// Fills both accumulators and returns the output in logits.
#[inline(always)]
fn forward(
    kernels: impl Kernels,
    net: &FloatNetwork,
    sample: &TrainingSample,
    acc: &mut [AlignedF32s; 2],
) -> f32 {
    let h = net.hidden_size();
    with_block!(h, forward_blocks(kernels, net, sample, acc))
}

/// `forward` a block of `B` neurons at a time.
#[inline(always)]
fn forward_blocks<const B: usize>(
    kernels: impl Kernels,
    net: &FloatNetwork,
    sample: &TrainingSample,
    acc: &mut [AlignedF32s; 2],
) -> f32 {
    let row_blocks = net.hidden_size() / B;
    let bucket = output_bucket(sample.len, net.output_buckets());
    let output_weights = &blocks::<B>(net.output_weights())[bucket * 2 * row_blocks..];
    let weights = blocks::<B>(net.feature_weights());
    let biases = blocks::<B>(net.feature_biases());
    let mut sums = [0.0f32; B];
    for side in 0..2 {
        let inputs = &sample.features[side][..sample.len];
        let accumulator = blocks_mut::<B>(&mut acc[side]);
        let side_weights = &output_weights[side * row_blocks..][..row_blocks];
        for (j, out) in accumulator.iter_mut().enumerate() {
            let block = kernels.accumulate(&biases[j], weights, inputs, (row_blocks, j));
            *out = block;
            let w = &side_weights[j];
            for ((sum, &x), &w) in sums.iter_mut().zip(&block.0).zip(&w.0) {
                *sum += screlu(x) * w;
            }
        }
    }
    sums.iter().sum::<f32>() + net.output_biases()[bucket]
}

/// Adds the gradient of a sample whose output has derivative `d_out` (the loss's, scaled)
/// to `grad`, from the accumulators `forward` left.
#[inline(always)]
fn backward(
    kernels: impl Kernels,
    net: &FloatNetwork,
    sample: &TrainingSample,
    d_out: f32,
    grad: &mut [f32],
    acc: &[AlignedF32s; 2],
) {
    let h = net.hidden_size();
    with_block!(h, backward_blocks(kernels, net, sample, d_out, grad, acc))
}

/// `backward` a block of `B` neurons at a time.
#[inline(always)]
fn backward_blocks<const B: usize>(
    kernels: impl Kernels,
    net: &FloatNetwork,
    sample: &TrainingSample,
    d_out: f32,
    grad: &mut [f32],
    acc: &[AlignedF32s; 2],
) {
    let row_blocks = net.hidden_size() / B;
    let bucket = output_bucket(sample.len, net.output_buckets());
    let output_weights = &blocks::<B>(net.output_weights())[bucket * 2 * row_blocks..];
    let grads = net.tensors_of(grad);
    grads.output_biases[bucket] += d_out;
    let g_output_weights = &mut blocks_mut::<B>(grads.output_weights)[bucket * 2 * row_blocks..];
    let g_biases = blocks_mut::<B>(grads.feature_biases);
    let g_weights = blocks_mut::<B>(grads.feature_weights);
    for side in 0..2 {
        let inputs = &sample.features[side][..sample.len];
        let accumulator = blocks::<B>(&acc[side]);
        for (j, a) in accumulator.iter().enumerate() {
            let w = &output_weights[side * row_blocks + j];
            let g_w = &mut g_output_weights[side * row_blocks + j];
            let g_bias = &mut g_biases[j];
            let mut d_acc = Lanes::<B>::default();
            for k in 0..B {
                let x = a.0[k];
                g_w.0[k] += d_out * screlu(x);
                // screlu'(x) = 2x inside (0, 1), 0 outside.
                let slope = if x > 0.0 && x < 1.0 { 2.0 * x } else { 0.0 };
                d_acc.0[k] = d_out * w.0[k] * slope;
                g_bias.0[k] += d_acc.0[k];
            }
            kernels.add_to_rows(&d_acc, g_weights, inputs, (row_blocks, j));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::{KingBuckets, FEATURES};
    use crate::offline::train::data::synthetic::random_records;
    use crate::offline::train::data::Target;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// An independent f64 reference, written from the definition: every accumulator value
    /// of every sample, `[sample][side * H + i]`.
    fn reference_accumulators(
        params: &[f64],
        h: usize,
        samples: &[TrainingSample],
    ) -> Vec<Vec<f64>> {
        let bias = &params[FEATURES * h..(FEATURES + 1) * h];
        samples
            .iter()
            .map(|s| {
                (0..2 * h)
                    .map(|k| {
                        let (side, i) = (k / h, k % h);
                        bias[i]
                            + s.features[side][..s.len]
                                .iter()
                                .map(|&f| params[f as usize * h + i])
                                .sum::<f64>()
                    })
                    .collect()
            })
            .collect()
    }

    /// Output buckets of the nets these tests check: several, so that each sample must
    /// find its own bucket's weights.
    const BUCKETS: usize = 4;

    /// The reference loss: mean over the samples of (sigmoid(out * gain) - target)^2, with the
    /// bucket of a sample of n pieces (n - 2) * BUCKETS / 32 (at most the last).
    fn reference_loss(params: &[f64], h: usize, samples: &[TrainingSample]) -> f64 {
        let accumulators = reference_accumulators(params, h, samples);
        let mut total = 0.0;
        for (s, acc) in samples.iter().zip(accumulators) {
            let bucket = ((s.len - 2) * BUCKETS / 32).min(BUCKETS - 1);
            let out_w = &params[(FEATURES + 1) * h + bucket * 2 * h..][..2 * h];
            let out_b = params[(FEATURES + 1) * h + BUCKETS * 2 * h + bucket];
            let out = out_b
                + acc
                    .iter()
                    .zip(out_w)
                    .map(|(a, w)| a.clamp(0.0, 1.0).powi(2) * w)
                    .sum::<f64>();
            let p = 1.0 / (1.0 + (-out * f64::from(s.gain)).exp());
            total += (p - f64::from(s.target)).powi(2);
        }
        total / samples.len() as f64
    }

    /// Parameters with larger values than the initialisation, so that many accumulators
    /// sit inside (0, 1) where every path of the gradient is live.
    fn test_network(hidden: usize, seed: u64) -> FloatNetwork {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut net = FloatNetwork::zeros(hidden, BUCKETS, KingBuckets::NONE);
        for p in net.params_mut() {
            *p = rng.random_range(-0.3..0.3);
        }
        for b in net.tensors_mut().feature_biases {
            *b = rng.random_range(0.2..0.6);
        }
        net
    }

    /// Samples of a blended target, every other one on a scale other than the net's own.
    fn samples(count: usize, seed: u64) -> Vec<TrainingSample> {
        let targets = [
            Target::blend(0.25),
            Target {
                wdl: 0.25,
                scale: 250.0,
            },
        ];
        random_records(count, seed)
            .iter()
            .enumerate()
            .map(|(i, r)| {
                TrainingSample::from_record(r, targets[i % 2], &KingBuckets::NONE).unwrap()
            })
            .collect()
    }

    #[test]
    fn forward_matches_the_reference() {
        let hidden = 16;
        let net = test_network(hidden, 1);
        let params: Vec<f64> = net.params().iter().map(|&p| f64::from(p)).collect();
        for sample in samples(20, 2) {
            let logit = f64::from(logit(&net, &sample, &mut Scratch::new(hidden)));
            let p = 1.0 / (1.0 + (-logit * f64::from(sample.gain)).exp());
            let loss = (p - f64::from(sample.target)).powi(2);
            let reference = reference_loss(&params, hidden, std::slice::from_ref(&sample));
            assert!((loss - reference).abs() < 1e-6, "{loss} vs {reference}");
        }
    }

    /// Central differences of the f64 reference loss against the analytic f32 gradient,
    /// for a sample of parameters in each of the four tensors. Tolerance: relative error
    /// below 1e-3; gradients under TINY_GRADIENT (where f32 accumulation noise makes a
    /// relative error meaningless) must agree to 1e-3 * TINY_GRADIENT. A parameter whose step
    /// moves an accumulator across a kink of screlu (0 or 1) is skipped: the difference
    /// quotient is not a derivative there.
    #[test]
    fn gradient_matches_finite_differences() {
        let hidden = 16;
        let h = hidden;
        let net = test_network(hidden, 3);
        let batch = samples(8, 4);
        let mut grad = AlignedF32s::zeros(net.params().len());
        let mut scratch = Scratch::new(hidden);
        for s in &batch {
            add_gradient(&net, s, 1.0 / batch.len() as f32, &mut grad, &mut scratch);
        }
        let params: Vec<f64> = net.params().iter().map(|&p| f64::from(p)).collect();

        let mut active: Vec<usize> = batch
            .iter()
            .flat_map(|s| s.features[0][..s.len].iter().chain(&s.features[1][..s.len]))
            .map(|&f| f as usize)
            .collect();
        active.sort_unstable();
        active.dedup();
        let mut rng = StdRng::seed_from_u64(5);
        let mut checked: Vec<(&str, usize)> = Vec::new();
        for _ in 0..40 {
            let f = active[rng.random_range(0..active.len())];
            checked.push(("feature weights", f * h + rng.random_range(0..h)));
        }
        // A row no sample uses must have exactly zero gradient.
        let unused = (0..FEATURES).find(|f| !active.contains(f)).unwrap();
        checked.push(("feature weights", unused * h + 3));
        for i in 0..h {
            checked.push(("feature bias", FEATURES * h + i));
        }
        for i in 0..BUCKETS * 2 * h {
            checked.push(("output weights", (FEATURES + 1) * h + i));
        }
        for bucket in 0..BUCKETS {
            checked.push(("output bias", (FEATURES + 1) * h + BUCKETS * 2 * h + bucket));
        }
        let buckets_used: std::collections::BTreeSet<usize> = batch
            .iter()
            .map(|s| output_bucket(s.len, BUCKETS))
            .collect();
        assert!(
            buckets_used.len() >= 2,
            "the batch uses buckets {buckets_used:?}"
        );

        const TINY_GRADIENT: f64 = 1e-6;
        let step = 1e-5;
        let (mut compared, mut skipped, mut live, mut worst) = (0, 0, 0, 0.0f64);
        for (tensor, index) in checked {
            let mut plus = params.clone();
            plus[index] += step;
            let mut minus = params.clone();
            minus[index] -= step;
            let (plus_loss, minus_loss) = (
                reference_loss(&plus, hidden, &batch),
                reference_loss(&minus, hidden, &batch),
            );
            let numeric = (plus_loss - minus_loss) / (2.0 * step);
            let crosses_kink = reference_accumulators(&plus, hidden, &batch)
                .iter()
                .flatten()
                .zip(
                    reference_accumulators(&minus, hidden, &batch)
                        .iter()
                        .flatten(),
                )
                .any(|(a, b)| (*a > 0.0) != (*b > 0.0) || (*a < 1.0) != (*b < 1.0));
            if crosses_kink {
                skipped += 1;
                continue;
            }
            let analytic = f64::from(grad[index]);
            let difference = (analytic - numeric).abs();
            let magnitude = analytic.abs().max(numeric.abs());
            compared += 1;
            if magnitude < TINY_GRADIENT {
                assert!(
                    difference < 1e-3 * TINY_GRADIENT,
                    "{tensor}[{index}]: analytic {analytic:e}, numeric {numeric:e}"
                );
                continue;
            }
            let relative = difference / magnitude;
            assert!(
                relative < 1e-3,
                "{tensor}[{index}]: analytic {analytic:e}, numeric {numeric:e}"
            );
            worst = worst.max(relative);
            live += 1;
        }
        let summary = format!(
            "{compared} compared ({live} with |gradient| >= {TINY_GRADIENT:e}, worst relative \
             error {worst:.1e}), {skipped} skipped at a kink"
        );
        eprintln!("{summary}");
        assert!(compared > 80 && live > 60 && skipped < 5, "{summary}");
    }
}
