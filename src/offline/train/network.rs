//! The network in f32: parameters, forward pass, gradient of the loss, Adam.
//!
//! (768 K -> H) x 2 -> 1 with squared clipped ReLU, K king buckets and B output buckets. Each perspective
//! (side to move, other side) sums the feature-weight rows of its active features onto the
//! feature bias; the output is the side to move's half dotted with the first H output
//! weights of the position's bucket (chosen by its piece count, `nnue::output_bucket`),
//! plus the other half with that bucket's last H, plus the bucket's bias, in logits
//! (centipawns / 400).
//!
//! The parameters are one flat vector in the quantized file's order: feature weights
//! `[768 K][H]` (feature-major), feature bias `[H]`, output weights `[B][2H]` (side to
//! move's half first), output biases `[B]`. Gradients and Adam moments use the same layout.

use rand::Rng;

use super::data::TrainingSample;

/// Inputs per perspective of a net without king buckets.
pub const INPUTS: usize = crate::nnue::FEATURES;
/// At most 32 pieces on the board, so at most 32 active features per perspective.
pub const MAX_ACTIVE_FEATURES: usize = 32;
/// Every parameter stays in [-WEIGHT_LIMIT, WEIGHT_LIMIT]: the quantized output weights
/// (x 64) must fit in an i8-sized range (|w| <= 127) and the accumulators in i16.
pub const WEIGHT_LIMIT: f32 = crate::nnue::WEIGHT_CLIP;

/// The engine's feature layout (own pieces first, Black's view flipped, king buckets),
/// shared so the two cannot drift apart.
pub use crate::nnue::{feature_index, KingBuckets};

/// Squared clipped ReLU.
#[inline]
pub fn screlu(x: f32) -> f32 {
    let c = x.clamp(0.0, 1.0);
    c * c
}

#[inline]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub hidden: usize,
    /// Output buckets (B).
    pub buckets: usize,
    /// King buckets (K sets of input weights).
    pub kings: KingBuckets,
    /// All parameters, in the file's order (see the module comment).
    pub params: Vec<f32>,
}

impl Network {
    pub fn param_count(hidden: usize, buckets: usize, kings: &KingBuckets) -> usize {
        kings.inputs() * hidden + hidden + buckets * (2 * hidden + 1)
    }

    pub fn zeros(hidden: usize, buckets: usize, kings: KingBuckets) -> Network {
        Network {
            hidden,
            buckets,
            kings,
            params: vec![0.0; Self::param_count(hidden, buckets, &kings)],
        }
    }

    /// Inputs per perspective (768 K).
    #[inline]
    pub fn inputs(&self) -> usize {
        self.kings.inputs()
    }

    /// Weights uniform in +-1/sqrt(fan-in) of their layer, biases zero.
    /// The fan-in of a feature weight is taken as 768 whatever K: a perspective sees one
    /// king bucket's rows at a time.
    pub fn random(
        hidden: usize,
        buckets: usize,
        kings: KingBuckets,
        rng: &mut impl Rng,
    ) -> Network {
        let mut net = Network::zeros(hidden, buckets, kings);
        let feature_range = 1.0 / (INPUTS as f32).sqrt();
        let output_range = 1.0 / ((2 * hidden) as f32).sqrt();
        let inputs = net.inputs();
        let (feature_weights, _, output_weights, _) = split_mut(&mut net.params, hidden, inputs);
        for w in feature_weights {
            *w = rng.random_range(-feature_range..feature_range);
        }
        for w in output_weights {
            *w = rng.random_range(-output_range..output_range);
        }
        net
    }

    pub fn feature_weights(&self) -> &[f32] {
        &self.params[..self.inputs() * self.hidden]
    }

    pub fn feature_bias(&self) -> &[f32] {
        let (h, inputs) = (self.hidden, self.inputs());
        &self.params[inputs * h..(inputs + 1) * h]
    }

    /// Every bucket's output weights, bucket by bucket.
    pub fn output_weights(&self) -> &[f32] {
        let (h, inputs) = (self.hidden, self.inputs());
        &self.params[(inputs + 1) * h..(inputs + 1) * h + self.buckets * 2 * h]
    }

    pub fn output_biases(&self) -> &[f32] {
        &self.params[self.params.len() - self.buckets..]
    }

    /// This network with `buckets` output buckets, each a copy of its single one: the start
    /// of a bucketed net trained on from a net without buckets, which it equals until
    /// training moves the buckets apart.
    pub fn with_buckets(&self, buckets: usize) -> Result<Network, String> {
        if buckets == self.buckets {
            return Ok(self.clone());
        }
        if self.buckets != 1 {
            return Err(format!(
                "a net of {} output buckets cannot become one of {buckets}",
                self.buckets
            ));
        }
        let mut params = self.params[..(self.inputs() + 1) * self.hidden].to_vec();
        for _ in 0..buckets {
            params.extend_from_slice(self.output_weights());
        }
        params.extend(std::iter::repeat_n(self.output_biases()[0], buckets));
        Ok(Network {
            hidden: self.hidden,
            buckets,
            kings: self.kings,
            params,
        })
    }

    /// This network with the king buckets `kings`, each bucket's input weights a copy of
    /// its single set: the start of a king-bucketed net trained on from one without. Without
    /// mirroring it equals the original until training moves the buckets apart; with
    /// mirroring, a king on files e-h reads the rows of the mirror-image squares, which a
    /// net trained on mirrored data nearly agrees with.
    pub fn with_king_buckets(&self, kings: KingBuckets) -> Result<Network, String> {
        if kings == self.kings {
            return Ok(self.clone());
        }
        if self.kings != KingBuckets::NONE {
            return Err(format!(
                "a net of {} king buckets cannot take another layout",
                self.kings.count()
            ));
        }
        let mut params = Vec::with_capacity(Self::param_count(self.hidden, self.buckets, &kings));
        for _ in 0..kings.count() {
            params.extend_from_slice(self.feature_weights());
        }
        params.extend_from_slice(&self.params[self.inputs() * self.hidden..]);
        Ok(Network {
            hidden: self.hidden,
            buckets: self.buckets,
            kings,
            params,
        })
    }

    /// Where one bucket's 2H weights lie within the output weights (and their gradient).
    fn bucket_weight_range(&self, bucket: usize) -> std::ops::Range<usize> {
        let width = 2 * self.hidden;
        bucket * width..(bucket + 1) * width
    }

    /// The output bucket of a sample: its feature count is its piece count.
    #[inline]
    fn bucket(&self, sample: &TrainingSample) -> usize {
        crate::nnue::output_bucket(sample.len, self.buckets)
    }

    /// Feature bias plus the rows of `features`.
    fn accumulate(&self, features: &[u16], acc: &mut [f32]) {
        let h = self.hidden;
        acc.copy_from_slice(self.feature_bias());
        let weights = self.feature_weights();
        for &f in features {
            let row = &weights[f as usize * h..(f as usize + 1) * h];
            for (a, w) in acc.iter_mut().zip(row) {
                *a += w;
            }
        }
    }

    /// Output in logits for the side to move; fills both perspectives' accumulators.
    fn forward(&self, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
        let h = self.hidden;
        let [ours, theirs] = &mut scratch.acc;
        self.accumulate(&sample.features[0][..sample.len], ours);
        self.accumulate(&sample.features[1][..sample.len], theirs);
        let bucket = self.bucket(sample);
        let w = &self.output_weights()[self.bucket_weight_range(bucket)];
        screlu_dot(ours, &w[..h]) + screlu_dot(theirs, &w[h..]) + self.output_biases()[bucket]
    }

    /// Output in logits for the side to move.
    pub fn evaluate(&self, sample: &TrainingSample) -> f32 {
        self.forward(sample, &mut Scratch::new(self.hidden))
    }

    /// (sigmoid(out) - target)^2 for one sample.
    pub fn squared_error(&self, sample: &TrainingSample, scratch: &mut Scratch) -> f32 {
        let error = sigmoid(self.forward(sample, scratch)) - sample.target;
        error * error
    }

    /// Adds `scale` times the gradient of this sample's squared error (sigmoid(out) -
    /// target)^2 to `grad` and returns the squared error. Only the feature-weight rows of
    /// the sample's active features are touched.
    pub fn add_gradient(
        &self,
        sample: &TrainingSample,
        scale: f32,
        grad: &mut [f32],
        scratch: &mut Scratch,
    ) -> f32 {
        let h = self.hidden;
        let out = self.forward(sample, scratch);
        let predicted = sigmoid(out);
        let error = predicted - sample.target;
        let d_out = scale * 2.0 * error * predicted * (1.0 - predicted);

        let bucket = self.bucket(sample);
        let range = self.bucket_weight_range(bucket);
        let output_weights = &self.output_weights()[range.clone()];
        let (g_feature_weights, g_feature_bias, g_output_weights, g_output_biases) =
            split_mut(grad, h, self.inputs());
        let g_output_weights = &mut g_output_weights[range];
        g_output_biases[bucket] += d_out;
        for side in 0..2 {
            let acc = &scratch.acc[side];
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
            for (b, d) in g_feature_bias.iter_mut().zip(d_acc.iter()) {
                *b += d;
            }
            for &f in &sample.features[side][..sample.len] {
                let row = &mut g_feature_weights[f as usize * h..(f as usize + 1) * h];
                for (g, d) in row.iter_mut().zip(d_acc.iter()) {
                    *g += d;
                }
            }
        }
        error * error
    }
}

/// Per-thread working memory for one sample at a time.
pub struct Scratch {
    acc: [Vec<f32>; 2],
    d_acc: Vec<f32>,
}

impl Scratch {
    pub fn new(hidden: usize) -> Scratch {
        Scratch {
            acc: [vec![0.0; hidden], vec![0.0; hidden]],
            d_acc: vec![0.0; hidden],
        }
    }
}

type Tensors<'a> = (&'a mut [f32], &'a mut [f32], &'a mut [f32], &'a mut [f32]);

/// The four tensors of a flat parameter (or gradient) vector: feature weights, feature
/// bias, output weights (every bucket's) and output biases.
fn split_mut(params: &mut [f32], hidden: usize, inputs: usize) -> Tensors<'_> {
    let (feature_weights, rest) = params.split_at_mut(inputs * hidden);
    let (feature_bias, rest) = rest.split_at_mut(hidden);
    let buckets = rest.len() / (2 * hidden + 1);
    let (output_weights, output_biases) = rest.split_at_mut(buckets * 2 * hidden);
    (feature_weights, feature_bias, output_weights, output_biases)
}

/// Sum of screlu(acc[i]) * w[i]. Eight running sums let the compiler vectorise what a
/// single in-order float sum would forbid.
#[inline]
fn screlu_dot(acc: &[f32], weights: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut sums = [0.0f32; LANES];
    let acc_chunks = acc.chunks_exact(LANES);
    let weight_chunks = weights.chunks_exact(LANES);
    let tail: f32 = acc_chunks
        .remainder()
        .iter()
        .zip(weight_chunks.remainder())
        .map(|(&a, &w)| screlu(a) * w)
        .sum();
    for (a, w) in acc_chunks.zip(weight_chunks) {
        for k in 0..LANES {
            sums[k] += screlu(a[k]) * w[k];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// Adam (beta1 0.9, beta2 0.999, eps 1e-8, no weight decay) over the flat parameter vector,
/// clipping every parameter to +-WEIGHT_LIMIT after each step.
#[derive(Clone, Debug, PartialEq)]
pub struct Adam {
    pub first_moment: Vec<f32>,
    pub second_moment: Vec<f32>,
    /// Steps taken so far (for the bias correction).
    pub steps: u64,
}

pub const ADAM_BETA1: f32 = 0.9;
pub const ADAM_BETA2: f32 = 0.999;
pub const ADAM_EPSILON: f32 = 1e-8;

impl Adam {
    pub fn new(param_count: usize) -> Adam {
        Adam {
            first_moment: vec![0.0; param_count],
            second_moment: vec![0.0; param_count],
            steps: 0,
        }
    }

    /// One step with the gradient `grad`, split over `threads` threads.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], learning_rate: f32, threads: usize) {
        self.steps += 1;
        let t = self.steps as i32;
        let step_size =
            learning_rate * (1.0 - ADAM_BETA2.powi(t)).sqrt() / (1.0 - ADAM_BETA1.powi(t));
        let chunk = params.len().div_ceil(threads.max(1));
        let update = |params: &mut [f32], grad: &[f32], m: &mut [f32], v: &mut [f32]| {
            for i in 0..params.len() {
                let g = grad[i];
                m[i] = ADAM_BETA1 * m[i] + (1.0 - ADAM_BETA1) * g;
                v[i] = ADAM_BETA2 * v[i] + (1.0 - ADAM_BETA2) * g * g;
                let p = params[i] - step_size * m[i] / (v[i].sqrt() + ADAM_EPSILON);
                params[i] = p.clamp(-WEIGHT_LIMIT, WEIGHT_LIMIT);
            }
        };
        if threads <= 1 {
            update(
                params,
                grad,
                &mut self.first_moment,
                &mut self.second_moment,
            );
            return;
        }
        std::thread::scope(|scope| {
            let parts = params
                .chunks_mut(chunk)
                .zip(grad.chunks(chunk))
                .zip(self.first_moment.chunks_mut(chunk))
                .zip(self.second_moment.chunks_mut(chunk));
            for (((p, g), m), v) in parts {
                scope.spawn(move || update(p, g, m, v));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::train::data::synthetic::random_records;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use shakmaty::{Color, Square};

    /// An independent f64 reference, written from the definition: every accumulator value
    /// of every sample, `[sample][side * H + i]`.
    fn reference_accumulators(
        params: &[f64],
        h: usize,
        samples: &[TrainingSample],
    ) -> Vec<Vec<f64>> {
        let bias = &params[INPUTS * h..(INPUTS + 1) * h];
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
            let out_w = &params[(INPUTS + 1) * h + bucket * 2 * h..][..2 * h];
            let out_b = params[(INPUTS + 1) * h + BUCKETS * 2 * h + bucket];
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
    fn test_network(hidden: usize, seed: u64) -> Network {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut net = Network::random(hidden, BUCKETS, KingBuckets::NONE, &mut rng);
        for p in net.params.iter_mut() {
            *p = rng.random_range(-0.3..0.3);
        }
        let h = hidden;
        for b in &mut net.params[INPUTS * h..(INPUTS + 1) * h] {
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
    fn feature_index_mirrors_for_black() {
        let white_pawn_e2 = feature_index(Color::White, Color::White.pawn(), Square::E2);
        let black_pawn_e7 = feature_index(Color::Black, Color::Black.pawn(), Square::E7);
        assert_eq!(white_pawn_e2, 12);
        assert_eq!(black_pawn_e7, 12);
        assert_eq!(
            feature_index(Color::White, Color::Black.king(), Square::H8),
            384 + 5 * 64 + 63
        );
        assert_eq!(
            feature_index(Color::Black, Color::White.queen(), Square::D1),
            384 + 4 * 64 + 59
        );
    }

    #[test]
    fn forward_matches_the_reference() {
        let hidden = 16;
        let net = test_network(hidden, 1);
        let params: Vec<f64> = net.params.iter().map(|&p| f64::from(p)).collect();
        for sample in samples(20, 2) {
            let logit = f64::from(net.evaluate(&sample));
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
        let mut grad = vec![0.0f32; net.params.len()];
        let mut scratch = Scratch::new(hidden);
        for s in &batch {
            net.add_gradient(s, 1.0 / batch.len() as f32, &mut grad, &mut scratch);
        }
        let params: Vec<f64> = net.params.iter().map(|&p| f64::from(p)).collect();

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
        let unused = (0..INPUTS).find(|f| !active.contains(f)).unwrap();
        checked.push(("feature weights", unused * h + 3));
        for i in 0..h {
            checked.push(("feature bias", INPUTS * h + i));
        }
        for i in 0..BUCKETS * 2 * h {
            checked.push(("output weights", (INPUTS + 1) * h + i));
        }
        for bucket in 0..BUCKETS {
            checked.push(("output bias", (INPUTS + 1) * h + BUCKETS * 2 * h + bucket));
        }
        let buckets_used: std::collections::BTreeSet<usize> =
            batch.iter().map(|s| net.bucket(s)).collect();
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

    #[test]
    fn adam_moves_against_the_gradient_and_clips() {
        let mut params = vec![0.0, 0.0, 1.975];
        let mut adam = Adam::new(3);
        adam.step(&mut params, &[1.0, -1.0, -1.0], 0.01, 2);
        // The first bias-corrected step is lr * sign(g).
        assert!((params[0] + 0.01).abs() < 1e-6 && (params[1] - 0.01).abs() < 1e-6);
        assert_eq!(params[2], WEIGHT_LIMIT);
        assert_eq!(adam.steps, 1);
    }
}
