//! The float network: the one definition of the net's parameters, in f32. The engine's
//! tests check the quantized forward pass against it, `basalt train` trains it (adding
//! only the gradient, Adam and checkpoints, in `offline::train`), and [`quantize`] turns it
//! into the integers the search evaluates with.
//!
//! The parameters are one flat vector in the net file's order, so that the trainer's
//! gradients and Adam moments are vectors of the same layout:
//!
//! ```text
//! feature weights  [768 K][H]  feature-major: the H weights of input 0, then input 1, ...
//! feature biases   [H]
//! output weights   [B][2H]     bucket by bucket, each side-to-move half first
//! output biases    [B]
//! ```
//!
//! [`quantize`]: FloatNetwork::quantize

use std::ops::Range;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Board, ByColor, Chess, Position as _};

use super::lanes::AlignedF32s;
use super::{
    output_bucket, KingBuckets, Network, EVAL_SCALE, MAX_FEATURE_BIAS, MAX_FEATURE_WEIGHT,
    MAX_OUTPUT_WEIGHT, QA, QB, WEIGHT_CLIP,
};

/// A network with f32 parameters in the file's layout (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNetwork {
    hidden: usize,
    output_buckets: usize,
    king_buckets: KingBuckets,
    /// Aligned so that every row of a hidden size that is a multiple of 8 is whole aligned
    /// registers (`lanes`), which the trainer's kernels rely on for speed.
    params: AlignedF32s,
}

/// The four tensors of a flat vector in the file's layout: a network's parameters, or a
/// gradient (or optimizer moment) of them.
pub struct TensorsMut<'a> {
    pub feature_weights: &'a mut [f32],
    pub feature_biases: &'a mut [f32],
    pub output_weights: &'a mut [f32],
    pub output_biases: &'a mut [f32],
}

/// The squared clipped ReLU: `clamp(x, 0, 1)²`.
#[inline]
pub fn screlu(x: f32) -> f32 {
    let clipped = x.clamp(0.0, 1.0);
    clipped * clipped
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

/// `round(w * scale)`, clamped to ±limit (the trainer clips every weight to ±WEIGHT_CLIP,
/// inside these limits, so the clamp only matters for a float network that did not come
/// from it).
fn quantized(weights: &[f32], scale: i32, limit: i16) -> Box<[i16]> {
    weights
        .iter()
        .map(|w| {
            (w * scale as f32)
                .round()
                .clamp(-f32::from(limit), f32::from(limit)) as i16
        })
        .collect()
}

/// Splits `flat` (of `FloatNetwork::param_count` values) into its four tensors.
fn split(flat: &mut [f32], hidden: usize, inputs: usize, buckets: usize) -> TensorsMut<'_> {
    let (feature_weights, rest) = flat.split_at_mut(inputs * hidden);
    let (feature_biases, rest) = rest.split_at_mut(hidden);
    let (output_weights, output_biases) = rest.split_at_mut(buckets * 2 * hidden);
    TensorsMut {
        feature_weights,
        feature_biases,
        output_weights,
        output_biases,
    }
}

impl FloatNetwork {
    /// The number of parameters of a net with `hidden` neurons, `output_buckets` output
    /// buckets and the king buckets `kings`.
    pub fn param_count(hidden: usize, output_buckets: usize, kings: &KingBuckets) -> usize {
        kings.inputs() * hidden + hidden + output_buckets * (2 * hidden + 1)
    }

    /// A network of this shape with every parameter zero.
    pub fn zeros(hidden: usize, output_buckets: usize, kings: KingBuckets) -> FloatNetwork {
        FloatNetwork {
            hidden,
            output_buckets,
            king_buckets: kings,
            params: AlignedF32s::zeros(Self::param_count(hidden, output_buckets, &kings)),
        }
    }

    /// A network of this shape with the parameters `params`, in the file's order. Checks
    /// only their number: [`FloatNetwork::quantize`] checks the shape against the format.
    pub fn from_params(
        hidden: usize,
        output_buckets: usize,
        kings: KingBuckets,
        params: Vec<f32>,
    ) -> Result<FloatNetwork, String> {
        let expected = Self::param_count(hidden, output_buckets, &kings);
        if params.len() != expected {
            return Err(format!(
                "{} parameters, but H = {hidden} with {output_buckets} output buckets and {} \
                 king buckets has {expected}",
                params.len(),
                kings.count()
            ));
        }
        Ok(FloatNetwork {
            hidden,
            output_buckets,
            king_buckets: kings,
            params: AlignedF32s::from_slice(&params),
        })
    }

    /// Random small weights within the clip bounds, for tests and benchmarks. The scales
    /// put accumulators on both sides of the clipped range [0, 1] in typical positions, so
    /// both clamps of the activation are exercised, and outputs of a few hundred centipawns.
    /// The first feature weight, bias and output weight sit at the clip bounds.
    pub fn random(hidden: usize, seed: u64) -> FloatNetwork {
        FloatNetwork::random_bucketed(hidden, 1, seed)
    }

    /// `random` with `buckets` output buckets.
    pub fn random_bucketed(hidden: usize, buckets: usize, seed: u64) -> FloatNetwork {
        FloatNetwork::random_with(hidden, buckets, KingBuckets::NONE, seed)
    }

    /// `random` with `buckets` output buckets and the king buckets `kings`.
    pub fn random_with(
        hidden: usize,
        buckets: usize,
        kings: KingBuckets,
        seed: u64,
    ) -> FloatNetwork {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut network = FloatNetwork::zeros(hidden, buckets, kings);
        let mut draw = |tensor: &mut [f32], low: f32, high: f32| {
            for value in tensor {
                *value = rng.random_range(low..high);
            }
        };
        let tensors = network.tensors_mut();
        draw(tensors.feature_weights, -0.2, 0.2);
        draw(tensors.feature_biases, -0.2, 0.6);
        draw(tensors.output_weights, -0.25, 0.25);
        draw(tensors.output_biases, -0.1, 0.1);
        tensors.feature_weights[0] = WEIGHT_CLIP;
        tensors.feature_biases[0] = -WEIGHT_CLIP;
        tensors.output_weights[0] = -WEIGHT_CLIP;
        network
    }

    /// The number of hidden neurons per perspective (H).
    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The number of output buckets (B).
    pub fn output_buckets(&self) -> usize {
        self.output_buckets
    }

    /// How the king's square picks the input weights.
    pub fn king_buckets(&self) -> &KingBuckets {
        &self.king_buckets
    }

    /// Inputs per perspective (768 K).
    #[inline]
    pub fn inputs(&self) -> usize {
        self.king_buckets.inputs()
    }

    /// Every parameter, in the file's order.
    pub fn params(&self) -> &[f32] {
        &self.params
    }

    /// Every parameter, in the file's order, to change in place (their number is fixed).
    pub fn params_mut(&mut self) -> &mut [f32] {
        &mut self.params
    }

    fn feature_weights_range(&self) -> Range<usize> {
        0..self.inputs() * self.hidden
    }

    fn feature_biases_range(&self) -> Range<usize> {
        let start = self.inputs() * self.hidden;
        start..start + self.hidden
    }

    fn output_weights_range(&self) -> Range<usize> {
        let start = (self.inputs() + 1) * self.hidden;
        start..start + self.output_buckets * 2 * self.hidden
    }

    /// `inputs()` rows of H weights, feature-major.
    #[inline]
    pub fn feature_weights(&self) -> &[f32] {
        &self.params[self.feature_weights_range()]
    }

    #[inline]
    pub fn feature_biases(&self) -> &[f32] {
        &self.params[self.feature_biases_range()]
    }

    /// Every bucket's 2H output weights, bucket by bucket, each side-to-move half first.
    #[inline]
    pub fn output_weights(&self) -> &[f32] {
        &self.params[self.output_weights_range()]
    }

    /// One per output bucket.
    #[inline]
    pub fn output_biases(&self) -> &[f32] {
        &self.params[self.params.len() - self.output_buckets..]
    }

    /// The four tensors of the parameters, to change in place.
    pub fn tensors_mut(&mut self) -> TensorsMut<'_> {
        let (hidden, inputs, buckets) = (self.hidden, self.inputs(), self.output_buckets);
        split(&mut self.params, hidden, inputs, buckets)
    }

    /// The four tensors of `flat`, a vector laid out as this network's parameters (a
    /// gradient of them, say).
    ///
    /// # Panics
    ///
    /// When `flat` does not have as many values as the network has parameters.
    pub fn tensors_of<'a>(&self, flat: &'a mut [f32]) -> TensorsMut<'a> {
        assert_eq!(flat.len(), self.params.len(), "not this network's layout");
        split(flat, self.hidden, self.inputs(), self.output_buckets)
    }

    /// This network with `buckets` output buckets, each a copy of its single one: the start
    /// of a bucketed net trained on from a net without buckets, which it equals until
    /// training moves the buckets apart.
    pub fn with_output_buckets(&self, buckets: usize) -> Result<FloatNetwork, String> {
        if buckets == self.output_buckets {
            return Ok(self.clone());
        }
        if self.output_buckets != 1 {
            return Err(format!(
                "a net of {} output buckets cannot become one of {buckets}",
                self.output_buckets
            ));
        }
        let mut params = self.params[..self.output_weights_range().start].to_vec();
        for _ in 0..buckets {
            params.extend_from_slice(self.output_weights());
        }
        params.extend(std::iter::repeat_n(self.output_biases()[0], buckets));
        FloatNetwork::from_params(self.hidden, buckets, self.king_buckets, params)
    }

    /// This network with the king buckets `kings`, each bucket's input weights a copy of
    /// its single set: the start of a king-bucketed net trained on from one without. Without
    /// mirroring it equals the original until training moves the buckets apart; with
    /// mirroring, a king on files e-h reads the rows of the mirror-image squares, which a
    /// net trained on mirrored data nearly agrees with.
    pub fn with_king_buckets(&self, kings: KingBuckets) -> Result<FloatNetwork, String> {
        if kings == self.king_buckets {
            return Ok(self.clone());
        }
        if self.king_buckets != KingBuckets::NONE {
            return Err(format!(
                "a net of {} king buckets cannot take another layout",
                self.king_buckets.count()
            ));
        }
        let mut params =
            Vec::with_capacity(Self::param_count(self.hidden, self.output_buckets, &kings));
        for _ in 0..kings.count() {
            params.extend_from_slice(self.feature_weights());
        }
        params.extend_from_slice(&self.params[self.feature_biases_range().start..]);
        FloatNetwork::from_params(self.hidden, self.output_buckets, kings, params)
    }

    /// One perspective's accumulator: the feature biases plus the weight rows of `inputs`
    /// (input indices, as `InputView::index` numbers them), added in that order.
    #[inline]
    pub fn accumulate(&self, inputs: &[u16], accumulator: &mut [f32]) {
        let h = self.hidden;
        accumulator.copy_from_slice(self.feature_biases());
        let weights = self.feature_weights();
        for &input in inputs {
            let row = &weights[usize::from(input) * h..(usize::from(input) + 1) * h];
            for (a, w) in accumulator.iter_mut().zip(row) {
                *a += w;
            }
        }
    }

    /// The output (a logit) of a position given by its active inputs, the side to move's
    /// first: both accumulators go to `accumulators` (side to move first), where the
    /// trainer's backward pass reads them. Each perspective has one input per piece, so
    /// the piece count that picks the output bucket is `inputs[0].len()`.
    #[inline]
    pub fn forward_inputs(&self, inputs: [&[u16]; 2], accumulators: &mut [Vec<f32>; 2]) -> f32 {
        let [ours, theirs] = accumulators;
        self.accumulate(inputs[0], ours);
        self.accumulate(inputs[1], theirs);
        let bucket = output_bucket(inputs[0].len(), self.output_buckets);
        self.output([ours, theirs], bucket)
    }

    /// The output layer: `screlu` of both accumulators (side to move first) dotted with
    /// output bucket `bucket`'s weights, plus its bias.
    #[inline]
    pub fn output(&self, [ours, theirs]: [&[f32]; 2], bucket: usize) -> f32 {
        let h = self.hidden;
        let width = 2 * h;
        let weights = &self.output_weights()[bucket * width..(bucket + 1) * width];
        screlu_dot(ours, &weights[..h])
            + screlu_dot(theirs, &weights[h..])
            + self.output_biases()[bucket]
    }

    /// The active inputs of `board` from each perspective, in the order its pieces are
    /// visited (from a1 up).
    pub fn inputs_of(&self, board: &Board) -> ByColor<Vec<u16>> {
        ByColor::new_with(|perspective| {
            let view = self.king_buckets.view_of(perspective, board);
            board
                .into_iter()
                .map(|(square, piece)| view.index(piece, square) as u16)
                .collect()
        })
    }

    /// The accumulators of `board`, indexed by perspective.
    pub fn accumulators(&self, board: &Board) -> ByColor<Vec<f32>> {
        let inputs = self.inputs_of(board);
        ByColor::new_with(|perspective| {
            let mut values = vec![0.0; self.hidden];
            self.accumulate(&inputs[perspective], &mut values);
            values
        })
    }

    /// The network output (a logit) for the side to move.
    pub fn forward(&self, board: &Chess) -> f32 {
        let inputs = self.inputs_of(board.board());
        let mut accumulators = [vec![0.0; self.hidden], vec![0.0; self.hidden]];
        self.forward_inputs(
            [&inputs[board.turn()], &inputs[!board.turn()]],
            &mut accumulators,
        )
    }

    /// The evaluation in centipawns for the side to move, unrounded.
    pub fn evaluate(&self, board: &Chess) -> f32 {
        self.forward(board) * EVAL_SCALE as f32
    }

    /// The quantized network (see the `nnue` module documentation for the scales): feature
    /// weights and biases times QA, output weights times QB, output biases times QA * QB,
    /// rounded. Weights beyond the clip bounds are clamped to them.
    ///
    /// # Panics
    ///
    /// When the hidden size or output bucket count is not one the file format allows.
    pub fn quantize(&self) -> Network {
        Network::from_parts(
            self.hidden,
            self.king_buckets,
            quantized(self.feature_weights(), QA, MAX_FEATURE_WEIGHT),
            quantized(self.feature_biases(), QA, MAX_FEATURE_BIAS),
            quantized(self.output_weights(), QB, MAX_OUTPUT_WEIGHT),
            self.output_biases()
                .iter()
                .map(|&b| (f64::from(b) * f64::from(QA * QB)).round() as i32)
                .collect(),
        )
        .unwrap_or_else(|e| panic!("cannot quantize this float network: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BENCH_FENS;
    use crate::nnue::FEATURES;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    /// The bench positions and every 4th position of random legal games from the start
    /// and from each bench position: a few hundred positions from openings to bare endings.
    fn test_positions() -> Vec<Chess> {
        let mut rng = StdRng::seed_from_u64(0x5eed);
        let mut starts = vec![Chess::default()];
        starts.extend(BENCH_FENS.iter().map(|fen| {
            fen.parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap()
        }));
        let mut positions = starts.clone();
        for start in starts.iter().cycle().take(60) {
            let mut board = start.clone();
            for ply in 1..=120 {
                let moves = board.legal_moves();
                if moves.is_empty() {
                    break;
                }
                board.play_unchecked(moves[rng.random_range(0..moves.len())]);
                if ply % 4 == 0 {
                    positions.push(board.clone());
                }
            }
        }
        positions
    }

    #[test]
    fn quantized_matches_its_own_float_network_to_a_centipawn() {
        // The integer pass is exact up to two truncations: sum / QA (under one unit of
        // 1 / (QA * QB) logits, 0.025 cp) and the final conversion to centipawns (under 1 cp).
        // Against the dequantized float network nothing else differs (f32 sums of a few
        // hundred terms add about 1e-4 cp), so the tolerance is 1.03 cp.
        for (hidden, buckets) in [(16, 1), (256, 1), (32, 8), (64, 2)] {
            let network = FloatNetwork::random_bucketed(hidden, buckets, 11).quantize();
            let reference = network.dequantize();
            for board in test_positions() {
                let quantized = network.evaluate_from_scratch(&board);
                let float = reference.evaluate(&board);
                assert!(
                    (quantized as f32 - float).abs() <= 1.03,
                    "H = {hidden}, B = {buckets}: {quantized} cp vs {float} cp in {}",
                    Fen::from_position(&board, shakmaty::EnPassantMode::Legal)
                );
            }
        }
    }

    #[test]
    fn quantized_follows_the_float_network_within_rounding_noise() {
        // Rounding a weight to a multiple of 1/Q leaves an error uniform in ±1/(2Q), standard
        // deviation 1/(Q * sqrt(12)). For one position the output error is then a sum of
        // independent terms: screlu(a_i) times the error of w_out[i], and w_out[i] times
        // screlu'(a_i) = 2 * clamp(a_i, 0, 1) times the accumulator error (n + 1 rounded
        // feature weights and bias). Six standard deviations of that, plus the 1.03 cp of
        // the truncations, is the tolerance.
        let float = FloatNetwork::random(256, 12);
        let network = float.quantize();
        let sigma_w = |q: i32| 1.0 / (q as f64 * 12f64.sqrt());
        let (mut worst, mut total, mut count) = (0.0f64, 0.0f64, 0);
        for board in test_positions() {
            let accumulators = float.accumulators(board.board());
            let pieces = board.board().occupied().count() as f64;
            let mut variance = 0.0;
            for (half, perspective) in [board.turn(), !board.turn()].into_iter().enumerate() {
                for (i, &a) in accumulators[perspective].iter().enumerate() {
                    let w = f64::from(float.output_weights()[half * float.hidden_size() + i]);
                    let a = f64::from(a);
                    let activation = a.clamp(0.0, 1.0).powi(2);
                    let slope = 2.0 * a.clamp(0.0, 1.0);
                    variance += (activation * sigma_w(QB)).powi(2)
                        + (w * slope).powi(2) * (pieces + 1.0) * sigma_w(QA).powi(2);
                }
            }
            let tolerance = 6.0 * variance.sqrt() * f64::from(EVAL_SCALE) + 1.03;
            let error = f64::from(network.evaluate_from_scratch(&board))
                - f64::from(float.evaluate(&board));
            assert!(
                error.abs() <= tolerance,
                "error {error:.2} cp, tolerance {tolerance:.2} cp in {}",
                Fen::from_position(&board, shakmaty::EnPassantMode::Legal)
            );
            worst = worst.max(error.abs());
            total += error.abs();
            count += 1;
        }
        println!(
            "{count} positions: mean |error| {:.2} cp, worst {worst:.2} cp",
            total / count as f64
        );
    }

    /// Each bucket's weights are used for its piece counts alone: a net whose buckets
    /// differ only in their biases shifts each position's evaluation by its bucket's bias.
    #[test]
    fn each_bucket_evaluates_its_own_piece_counts() {
        let mut float = FloatNetwork::random_bucketed(32, 8, 13);
        let first = float.output_weights()[..64].to_vec();
        let tensors = float.tensors_mut();
        for bucket in 1..8 {
            tensors.output_weights[bucket * 64..(bucket + 1) * 64].copy_from_slice(&first);
        }
        // The same net with one bucket, the first, and a zero bias.
        let mut params = float.params()[..(FEATURES + 1) * 32].to_vec();
        params.extend_from_slice(&first);
        params.push(0.0);
        let single = FloatNetwork::from_params(32, 1, KingBuckets::NONE, params).unwrap();
        for (bucket, bias) in float.tensors_mut().output_biases.iter_mut().enumerate() {
            *bias = bucket as f32 * 0.125;
        }
        let (bucketed, single) = (float.quantize(), single.quantize());
        let mut seen = [false; 8];
        for board in test_positions() {
            let bucket = output_bucket(board.board().occupied().count(), 8);
            seen[bucket] = true;
            let shift =
                bucketed.evaluate_from_scratch(&board) - single.evaluate_from_scratch(&board);
            let expected = bucket as i32 * EVAL_SCALE / 8;
            assert!(
                (shift - expected).abs() <= 1,
                "bucket {bucket}: shifted by {shift}"
            );
        }
        assert!(
            seen.iter().all(|&s| s),
            "positions cover every bucket: {seen:?}"
        );
    }

    #[test]
    fn random_networks_give_varied_evaluations() {
        let network = FloatNetwork::random(256, 3).quantize();
        let scores: Vec<i32> = test_positions()
            .iter()
            .map(|b| network.evaluate_from_scratch(b))
            .collect();
        let spread = scores.iter().max().unwrap() - scores.iter().min().unwrap();
        assert!(spread > 200, "scores span only {spread} cp");
        assert!(scores.iter().all(|s| s.abs() < 10_000));
    }

    #[test]
    fn quantize_rounds_and_clamps() {
        let mut float = FloatNetwork::random(16, 5);
        let tensors = float.tensors_mut();
        tensors.output_weights[1] = 0.5 / QB as f32 * 3.0; // 1.5 -> 2
        tensors.output_weights[2] = 3.0;
        tensors.feature_weights[1] = -7.0;
        let network = float.quantize();
        let back = network.dequantize();
        assert_eq!(
            back.output_weights()[0],
            -f32::from(MAX_OUTPUT_WEIGHT) / QB as f32
        );
        assert_eq!(back.output_weights()[1], 2.0 / QB as f32);
        assert_eq!(
            back.output_weights()[2],
            f32::from(MAX_OUTPUT_WEIGHT) / QB as f32
        );
        assert_eq!(
            back.feature_weights()[1],
            -f32::from(MAX_FEATURE_WEIGHT) / QA as f32
        );
        // Quantizing the dequantized network gives the same integers back.
        assert_eq!(back.quantize(), network);
    }

    #[test]
    fn a_dequantized_net_quantizes_to_the_same_file() {
        let net = crate::nnue::embedded();
        let float = net.dequantize();
        assert_eq!(
            float.params().len(),
            FloatNetwork::param_count(net.hidden_size(), net.output_buckets(), net.king_buckets())
        );
        assert_eq!(float.quantize().to_bytes(), net.to_bytes());
        let bucketed = FloatNetwork::random_bucketed(32, 8, 4).quantize();
        assert_eq!(
            bucketed.dequantize().quantize().to_bytes(),
            bucketed.to_bytes()
        );
    }
}
