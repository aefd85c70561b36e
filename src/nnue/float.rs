//! The float network: the reference forward pass the quantized one is checked against, and
//! the quantization itself.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::{Board, ByColor, Chess, Color, Position as _};

use super::{
    output_bucket, KingBuckets, Network, EVAL_SCALE, FEATURES, MAX_FEATURE_BIAS,
    MAX_FEATURE_WEIGHT, MAX_OUTPUT_WEIGHT, QA, QB, WEIGHT_CLIP,
};

/// A network with f32 weights in the same layout as the file.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNetwork {
    pub hidden: usize,
    pub king_buckets: KingBuckets,
    /// `king_buckets.inputs()` rows of `hidden` weights, feature-major.
    pub feature_weights: Vec<f32>,
    pub feature_biases: Vec<f32>,
    /// Per output bucket: the side-to-move half, then the other side's half.
    pub output_weights: Vec<f32>,
    /// One per output bucket.
    pub output_biases: Vec<f32>,
}

fn screlu(x: f32) -> f32 {
    let clipped = x.clamp(0.0, 1.0);
    clipped * clipped
}

/// `round(w * scale)`, clamped to ±limit (the trainer clips first, so the clamp only
/// matters for a float network that did not come from it).
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

impl FloatNetwork {
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
        let mut uniform = |n: usize, low: f32, high: f32| -> Vec<f32> {
            (0..n).map(|_| rng.random_range(low..high)).collect()
        };
        let mut network = FloatNetwork {
            hidden,
            king_buckets: kings,
            feature_weights: uniform(kings.count() * FEATURES * hidden, -0.2, 0.2),
            feature_biases: uniform(hidden, -0.2, 0.6),
            output_weights: uniform(buckets * 2 * hidden, -0.25, 0.25),
            output_biases: uniform(buckets, -0.1, 0.1),
        };
        network.feature_weights[0] = WEIGHT_CLIP;
        network.feature_biases[0] = -WEIGHT_CLIP;
        network.output_weights[0] = -WEIGHT_CLIP;
        network
    }

    /// The accumulators of `board`, indexed by perspective.
    pub fn accumulators(&self, board: &Board) -> ByColor<Vec<f32>> {
        ByColor::new_with(|perspective| {
            let mut values = self.feature_biases.clone();
            let view = self.king_buckets.view_of(perspective, board);
            for (square, piece) in board {
                let row = view.index(piece, square) * self.hidden;
                for (value, weight) in values
                    .iter_mut()
                    .zip(&self.feature_weights[row..row + self.hidden])
                {
                    *value += weight;
                }
            }
            values
        })
    }

    /// The network output (a logit) for the side to move.
    pub fn forward(&self, board: &Chess) -> f32 {
        let accumulators = self.accumulators(board.board());
        let buckets = self.output_biases.len();
        let bucket = output_bucket(board.board().occupied().count(), buckets);
        let width = 2 * self.hidden;
        let weights = &self.output_weights[bucket * width..(bucket + 1) * width];
        let (ours, theirs) = weights.split_at(self.hidden);
        let dot = |perspective: Color, weights: &[f32]| -> f32 {
            accumulators[perspective]
                .iter()
                .zip(weights)
                .map(|(&a, &w)| screlu(a) * w)
                .sum()
        };
        dot(board.turn(), ours) + dot(!board.turn(), theirs) + self.output_biases[bucket]
    }

    /// The evaluation in centipawns for the side to move, unrounded.
    pub fn evaluate(&self, board: &Chess) -> f32 {
        self.forward(board) * EVAL_SCALE as f32
    }

    /// The quantized network (see the module documentation for the scales). Weights beyond
    /// the clip bounds are clamped to them.
    ///
    /// # Panics
    ///
    /// When the hidden size is not one the file format allows or the arrays do not match it.
    pub fn quantize(&self) -> Network {
        Network::from_parts(
            self.hidden,
            self.king_buckets,
            quantized(&self.feature_weights, QA, MAX_FEATURE_WEIGHT),
            quantized(&self.feature_biases, QA, MAX_FEATURE_BIAS),
            quantized(&self.output_weights, QB, MAX_OUTPUT_WEIGHT),
            self.output_biases
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
                    let w = f64::from(float.output_weights[half * float.hidden + i]);
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
        let first = float.output_weights[..64].to_vec();
        for bucket in 1..8 {
            float.output_weights[bucket * 64..(bucket + 1) * 64].copy_from_slice(&first);
        }
        let mut single = float.clone();
        single.output_weights.truncate(64);
        single.output_biases = vec![0.0];
        float.output_biases = (0..8).map(|b| b as f32 * 0.125).collect();
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
        float.output_weights[1] = 0.5 / QB as f32 * 3.0; // 1.5 -> 2
        float.output_weights[2] = 3.0;
        float.feature_weights[1] = -7.0;
        let network = float.quantize();
        let back = network.dequantize();
        assert_eq!(
            back.output_weights[0],
            -f32::from(MAX_OUTPUT_WEIGHT) / QB as f32
        );
        assert_eq!(back.output_weights[1], 2.0 / QB as f32);
        assert_eq!(
            back.output_weights[2],
            f32::from(MAX_OUTPUT_WEIGHT) / QB as f32
        );
        assert_eq!(
            back.feature_weights[1],
            -f32::from(MAX_FEATURE_WEIGHT) / QA as f32
        );
        // Quantizing the dequantized network gives the same integers back.
        assert_eq!(back.quantize(), network);
    }
}
