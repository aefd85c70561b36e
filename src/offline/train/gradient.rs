//! The loss and its gradient: what training adds to `nnue::FloatNetwork`'s forward pass.
//!
//! For one sample the loss is `(sigmoid(out) - target)^2`, `out` the network's output in
//! logits (centipawns / EVAL_SCALE). The gradient is a flat vector in the parameters'
//! layout (`FloatNetwork::tensors_of` splits it); only the feature-weight rows of a
//! sample's active inputs get anything from it.

use crate::nnue::{output_bucket, screlu, FloatNetwork};

use super::data::TrainingSample;

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Per-thread working memory for one sample at a time.
pub struct Scratch {
    /// The accumulators of the last sample, side to move first.
    accumulators: [Vec<f32>; 2],
    d_acc: Vec<f32>,
}

impl Scratch {
    pub fn new(hidden: usize) -> Scratch {
        Scratch {
            accumulators: [vec![0.0; hidden], vec![0.0; hidden]],
            d_acc: vec![0.0; hidden],
        }
    }
}

/// The output in logits for the sample's side to move.
pub fn logit(net: &FloatNetwork, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
    net.forward_inputs(sample.inputs(), &mut scratch.accumulators)
}

/// (sigmoid(out) - target)^2 for one sample.
pub fn squared_error(net: &FloatNetwork, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
    let error = sigmoid(logit(net, sample, scratch)) - sample.target;
    error * error
}

/// Adds `scale` times the gradient of this sample's squared error (sigmoid(out) -
/// target)^2 to `grad` and returns the squared error. Only the feature-weight rows of
/// the sample's active features are touched.
pub fn add_gradient(
    net: &FloatNetwork,
    sample: &TrainingSample,
    scale: f32,
    grad: &mut [f32],
    scratch: &mut Scratch,
) -> f32 {
    let h = net.hidden_size();
    let out = logit(net, sample, scratch);
    let predicted = sigmoid(out);
    let error = predicted - sample.target;
    let d_out = scale * 2.0 * error * predicted * (1.0 - predicted);

    let bucket = output_bucket(sample.len, net.output_buckets());
    let range = bucket * 2 * h..(bucket + 1) * 2 * h;
    let output_weights = &net.output_weights()[range.clone()];
    let grads = net.tensors_of(grad);
    let g_output_weights = &mut grads.output_weights[range];
    grads.output_biases[bucket] += d_out;
    for side in 0..2 {
        let acc = &scratch.accumulators[side];
        let w = &output_weights[side * h..(side + 1) * h];
        let g_w = &mut g_output_weights[side * h..(side + 1) * h];
        let d_acc = &mut scratch.d_acc;
        for i in 0..h {
            g_w[i] += d_out * screlu(acc[i]);
            // screlu'(x) = 2x inside (0, 1), 0 outside.
            let slope = if acc[i] > 0.0 && acc[i] < 1.0 {
                2.0 * acc[i]
            } else {
                0.0
            };
            d_acc[i] = d_out * w[i] * slope;
        }
        for (b, d) in grads.feature_biases.iter_mut().zip(d_acc.iter()) {
            *b += d;
        }
        for &f in &sample.features[side][..sample.len] {
            let row = &mut grads.feature_weights[f as usize * h..(f as usize + 1) * h];
            for (g, d) in row.iter_mut().zip(d_acc.iter()) {
                *g += d;
            }
        }
    }
    error * error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::{KingBuckets, FEATURES};
    use crate::offline::train::data::synthetic::random_records;
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

    /// The reference loss: mean over the samples of (sigmoid(out) - target)^2, with the
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
            let p = 1.0 / (1.0 + (-out).exp());
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

    fn samples(count: usize, seed: u64) -> Vec<TrainingSample> {
        random_records(count, seed)
            .iter()
            .map(|r| TrainingSample::from_record(r, 0.25, &KingBuckets::NONE).unwrap())
            .collect()
    }

    #[test]
    fn forward_matches_the_reference() {
        let hidden = 16;
        let net = test_network(hidden, 1);
        let params: Vec<f64> = net.params().iter().map(|&p| f64::from(p)).collect();
        for sample in samples(20, 2) {
            let logit = f64::from(logit(&net, &sample, &mut Scratch::new(hidden)));
            let p = 1.0 / (1.0 + (-logit).exp());
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
        let mut grad = vec![0.0f32; net.params().len()];
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
