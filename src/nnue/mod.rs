//! NNUE evaluation: a (768 K -> H) x 2 -> 1 network with a squared clipped ReLU, optional
//! king buckets (K) and output buckets, its file format, the float network (the one
//! definition of the parameters: the reference forward pass, and what `basalt train`
//! trains) with its quantization, and the quantized integer forward pass the search uses,
//! with accumulators kept up to date incrementally along the search path.
//!
//! # Architecture
//!
//! Each side's view ("perspective" `p`) of the board is 768 binary features, one per
//! (colour, role, square):
//!
//! ```text
//! index = (colour == p ? 0 : 384) + role * 64 + (p == White ? square : square ^ 56)
//! ```
//!
//! with role 0 = pawn .. 5 = king and square a1 = 0 .. h8 = 63. Black sees the board flipped
//! top to bottom and, like White, its own pieces first, so a position and its colour-flipped
//! mirror give the same two accumulators with their perspectives swapped.
//!
//! The accumulator of perspective `p` is `feature_bias + Σ feature_weights[f]` over the
//! active features `f` of `p`: a vector of H numbers. The output, for the side to move `stm`:
//!
//! ```text
//! out = Σ_i screlu(acc[stm][i]) * w_out[i] + Σ_i screlu(acc[!stm][i]) * w_out[H + i] + b_out
//! screlu(x) = clamp(x, 0, 1)²
//! ```
//!
//! `out` is a logit (win probability ≈ sigmoid(out)); the evaluation is `out * EVAL_SCALE`
//! centipawns for the side to move.
//!
//! A net may have B output buckets (1, 2, 4 or 8): B sets of output weights and biases, of
//! which the board's piece count chooses one ([`output_bucket`]), so the last layer can
//! weigh the hidden features differently in the opening, the middlegame and the ending at
//! no cost to the accumulators.
//!
//! A net may also have K king buckets ([`KingBuckets`]): K sets of the 768 feature rows, of
//! which each perspective's own king square chooses one, optionally with the board mirrored
//! left to right so that the king always stands on files a-d. Input `k * 768 + f` is feature
//! `f` in set `k`, with the square mirrored first when the king stands on files e-h. A king
//! move into another set (or across the mirror line) refreshes that perspective.
//!
//! # Quantization
//!
//! Feature weights and biases are stored as `round(w * QA)` (i16), output weights as
//! `round(w * QB)` (i16) and the output bias as `round(b * QA * QB)` (i32). The trainer clips
//! every weight to ±1.98 ([`WEIGHT_CLIP`]), which gives two bounds the integer pass relies on
//! and the loader checks:
//!
//! - |output weight| <= 127, so for an activation `v = clamp(acc, 0, QA)` <= 255 the product
//!   `v * w` (at most 32,385) fits an i16 lane; it is then multiplied by `v` again and summed
//!   in i32 (units QA * QA * QB). 256 such terms (at most 8,258,175 each) still fit an i32, so
//!   the sum is taken in i32 over blocks of 256 and in i64 across blocks.
//! - |feature weight| <= 505, so an accumulator (bias plus at most 32 rows for a legal
//!   position) cannot overflow i16 while |bias| <= 32,767 - 32 * 505 = 16,607.
//!
//! Then `out_q = sum / QA + b_out_q` (units QA * QB) and the evaluation is
//! `out_q * EVAL_SCALE / (QA * QB)` centipawns, both divisions truncating toward zero.
//!
//! # File format (little-endian)
//!
//! ```text
//! bytes 0..8    magic b"BSLTNNUE"
//! u32           format version: 1 (B = 1, no king buckets), 2 (no king buckets) or 3
//! u32           H (hidden size, a multiple of 16, 16..=2048)
//! u32           QA (must be 255), u32 QB (must be 64), u32 EVAL_SCALE (must be 400)
//! u32           B, output buckets (1, 2, 4 or 8): versions 2 and 3
//! u32           K, king buckets (1..=32): version 3 only
//! u32           mirroring (0 or 1): version 3 only
//! u8[64]        the king bucket of each square as the perspective sees it: version 3 only
//! i16[768K * H] feature weights, feature-major: the H weights of input 0, then input 1, ...
//! i16[H]        feature biases
//! i16[B * 2H]   output weights, bucket by bucket, each side-to-move half first
//! i32[B]        output biases
//! u64           FNV-1a 64 hash of all preceding bytes (detects truncated/corrupt files)
//! ```
//!
//! A net is written in the oldest version that holds it: one output bucket and no king
//! buckets is version 1, byte for byte the format before buckets.
//!
//! docs/training.md describes the same format from the trainer's side.
//!
//! # Use in the search
//!
//! [`AccumulatorStack`] holds one accumulator per search ply, each tagged with the Zobrist
//! key of the board it describes. [`AccumulatorStack::reset`] at the start of a search, then
//! [`AccumulatorStack::evaluate`] wherever the search would call the static evaluation.

mod accumulator;
mod float;
pub mod lanes;
mod network;
mod simd;

pub use accumulator::{Accumulator, AccumulatorStack};
pub use float::{screlu, FloatNetwork, TensorsMut};
pub use network::{fnv1a64, Network, FORMAT_VERSION, MAGIC, MAX_FILE_BYTES};
#[cfg(target_arch = "x86_64")]
pub use simd::Avx2;
pub use simd::Simd;

/// Output bucket counts a file may declare: the divisors of 32 up to 8, so the buckets
/// split the piece counts 2..=32 into equal ranges.
pub const OUTPUT_BUCKET_COUNTS: [usize; 4] = [1, 2, 4, 8];

/// The output bucket of a board with `pieces` pieces (kings included) in a net of
/// `buckets` buckets: piece counts 2, 3, ... in runs of 32 / `buckets`, the last bucket
/// also taking 32 itself.
#[inline]
pub fn output_bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) / (32 / buckets)).min(buckets - 1)
}

use std::sync::{Arc, OnceLock};

use shakmaty::{Color, Piece, Square};

/// The net built into the binary: nets/basalt.nnue (`nets/README.md` says how it was
/// trained), or the file `make EVALFILE=<path>` names (build.rs chooses and checks it).
const EMBEDDED_NET: &[u8] = include_bytes!(env!("BASALT_NET"));

/// The built-in network, decoded once per process.
pub fn embedded() -> Arc<Network> {
    static NETWORK: OnceLock<Arc<Network>> = OnceLock::new();
    NETWORK
        .get_or_init(|| {
            Arc::new(Network::from_bytes(EMBEDDED_NET).expect("the embedded net is well formed"))
        })
        .clone()
}

/// Inputs per perspective: 2 colours x 6 roles x 64 squares.
pub const FEATURES: usize = 768;
/// Accumulator quantization: feature weights and biases are stored times QA.
pub const QA: i32 = 255;
/// Output weight quantization: output weights are stored times QB.
pub const QB: i32 = 64;
/// Centipawns per logit of network output.
pub const EVAL_SCALE: i32 = 400;
/// The trainer clips every float weight to ±WEIGHT_CLIP; the quantized bounds below follow.
pub const WEIGHT_CLIP: f32 = 1.98;
/// round(WEIGHT_CLIP * QB): keeps `v * w` within an i16 for v <= QA (255 * 127 = 32,385).
pub const MAX_OUTPUT_WEIGHT: i16 = 127;
/// round(WEIGHT_CLIP * QA).
pub const MAX_FEATURE_WEIGHT: i16 = 505;
/// A legal position has at most 32 pieces, so an accumulator stays within an i16 when the
/// bias leaves room for 32 rows of the largest feature weight.
pub const MAX_FEATURE_BIAS: i16 = i16::MAX - 32 * MAX_FEATURE_WEIGHT;
/// Hidden sizes a file may declare (and a multiple of [`HIDDEN_STEP`]).
pub const MIN_HIDDEN: usize = 16;
pub const MAX_HIDDEN: usize = 2048;
pub const HIDDEN_STEP: usize = 16;
/// Evaluations are clamped to ±EVAL_LIMIT so that no static evaluation, however odd the
/// network, reaches the search's tablebase-win and mate scores (above 31,000).
pub const EVAL_LIMIT: i32 = 20_000;

/// The input index of `piece` on `square` as seen from `perspective`, in a net without
/// king buckets (or within one bucket of a net with them, before any mirroring).
#[inline]
pub fn feature_index(perspective: Color, piece: Piece, square: Square) -> usize {
    InputView::plain(perspective).index(piece, square)
}

/// How a perspective's own king chooses the input weights it uses: `count` sets of
/// [`FEATURES`] rows, one picked per king square by `table`, and with `mirrored` a king on
/// files e-h sees the board mirrored left to right, so its pieces use the rows of the
/// mirror-image squares. Squares are as the perspective sees them (Black's flipped top
/// to bottom). A net without king buckets is [`KingBuckets::NONE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KingBuckets {
    table: [u8; 64],
    count: u8,
    mirrored: bool,
}

/// Layouts `basalt train --king-buckets` knows by name, with what they are.
pub const KING_BUCKET_LAYOUTS: [(&str, &str); 3] = [
    (
        "none",
        "one set of weights, no mirroring (the format before king buckets)",
    ),
    (
        "mirror",
        "one set of weights, the board mirrored when the king stands on files e-h",
    ),
    (
        "m4",
        "mirrored; four sets: king on a1/b1, on c1/d1, on the second rank, further up",
    ),
];

impl KingBuckets {
    pub const NONE: KingBuckets = KingBuckets {
        table: [0; 64],
        count: 1,
        mirrored: false,
    };

    /// Checks a layout read from a file: 1 to 32 buckets, every table entry below the count.
    pub fn new(table: [u8; 64], count: usize, mirrored: bool) -> Result<KingBuckets, String> {
        if !(1..=MAX_KING_BUCKETS).contains(&count) {
            return Err(format!(
                "{count} king buckets: a net has 1 to {MAX_KING_BUCKETS}"
            ));
        }
        if let Some(square) = table.iter().position(|&b| usize::from(b) >= count) {
            return Err(format!(
                "king square {square} maps to bucket {}, but there are {count}",
                table[square]
            ));
        }
        Ok(KingBuckets {
            table,
            count: count as u8,
            mirrored,
        })
    }

    /// The layout called `name` in [`KING_BUCKET_LAYOUTS`].
    pub fn named(name: &str) -> Option<KingBuckets> {
        let mut table = [0u8; 64];
        match name {
            "none" => Some(KingBuckets::NONE),
            "mirror" => KingBuckets::new(table, 1, true).ok(),
            "m4" => {
                for (square, bucket) in table.iter_mut().enumerate() {
                    let (file, rank) = (square % 8, square / 8);
                    let file = file.min(7 - file);
                    *bucket = match rank {
                        0 if file < 2 => 0,
                        0 => 1,
                        1 => 2,
                        _ => 3,
                    };
                }
                KingBuckets::new(table, 4, true).ok()
            }
            _ => None,
        }
    }

    /// The number of weight sets (buckets).
    #[inline]
    pub fn count(&self) -> usize {
        usize::from(self.count)
    }

    #[inline]
    pub fn mirrored(&self) -> bool {
        self.mirrored
    }

    /// The bucket of each king square, as the perspective sees it.
    pub fn table(&self) -> &[u8; 64] {
        &self.table
    }

    /// Whether the king's square matters at all (false for [`KingBuckets::NONE`]).
    #[inline]
    pub fn uses_king(&self) -> bool {
        self.count > 1 || self.mirrored
    }

    /// Bytes in [`KingBuckets::to_bytes`]: u32 count, u32 mirroring (0 or 1), the table.
    pub const BYTES: usize = 4 + 4 + 64;

    /// The layout as stored in net files (version 3) and trainer checkpoints.
    pub fn to_bytes(&self) -> [u8; KingBuckets::BYTES] {
        let mut bytes = [0u8; KingBuckets::BYTES];
        bytes[..4].copy_from_slice(&u32::from(self.count).to_le_bytes());
        bytes[4..8].copy_from_slice(&u32::from(self.mirrored).to_le_bytes());
        bytes[8..].copy_from_slice(&self.table);
        bytes
    }

    /// Reads [`KingBuckets::to_bytes`]' layout from the first `BYTES` of `bytes`, checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<KingBuckets, String> {
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let mirrored = match u32_at(4) {
            0 => false,
            1 => true,
            other => return Err(format!("king mirroring flag is {other}, not 0 or 1")),
        };
        let table = bytes[8..KingBuckets::BYTES]
            .try_into()
            .expect("64 table bytes");
        KingBuckets::new(table, u32_at(0) as usize, mirrored)
    }

    /// Inputs per perspective: `count` x [`FEATURES`].
    #[inline]
    pub fn inputs(&self) -> usize {
        self.count() * FEATURES
    }

    /// How `perspective`, whose king stands on `king`, numbers its inputs.
    #[inline]
    pub fn view(&self, perspective: Color, king: Square) -> InputView {
        let mut view = InputView::plain(perspective);
        let king = usize::from(king) ^ usize::from(view.square_flip);
        if self.mirrored && king % 8 >= 4 {
            view.square_flip ^= 7;
        }
        view.offset = usize::from(self.table[king]) * FEATURES;
        view
    }

    /// The view of `perspective` on `board`: by its king's square (a1 for a board without
    /// that king, which legal positions never are).
    #[inline]
    pub fn view_of(&self, perspective: Color, board: &shakmaty::Board) -> InputView {
        // Without king buckets the king is never looked up: the nets of today stay as fast
        // as before king buckets existed.
        if !self.uses_king() {
            return InputView::plain(perspective);
        }
        let king = board.king_of(perspective).unwrap_or(Square::A1);
        self.view(perspective, king)
    }
}

/// The most king buckets a net may have.
pub const MAX_KING_BUCKETS: usize = 32;

/// One perspective's numbering of the inputs: `offset` (its king bucket's first row) plus
/// the [`FEATURES`]-layout index of a piece with its square XORed by `square_flip` (56 flips
/// top to bottom for Black, 7 mirrors left to right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputView {
    perspective: Color,
    square_flip: u8,
    offset: usize,
}

impl InputView {
    /// No king bucket: Black's view flipped top to bottom, nothing else.
    #[inline]
    pub fn plain(perspective: Color) -> InputView {
        InputView {
            perspective,
            square_flip: match perspective {
                Color::White => 0,
                Color::Black => 56,
            },
            offset: 0,
        }
    }

    /// The input index of `piece` on `square`.
    #[inline]
    pub fn index(self, piece: Piece, square: Square) -> usize {
        let side = if piece.color == self.perspective {
            0
        } else {
            384
        };
        let role = usize::from(piece.role) - 1;
        self.offset + side + role * 64 + (usize::from(square) ^ usize::from(self.square_flip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Role;

    #[test]
    fn feature_index_follows_the_contract() {
        let white_pawn_e2 = (Piece::from_char('P').unwrap(), Square::E2);
        assert_eq!(
            feature_index(Color::White, white_pawn_e2.0, white_pawn_e2.1),
            12
        );
        // Black sees the white pawn as an enemy pawn on e7.
        assert_eq!(
            feature_index(Color::Black, white_pawn_e2.0, white_pawn_e2.1),
            384 + 52
        );
        let black_king_h8 = Piece {
            color: Color::Black,
            role: Role::King,
        };
        assert_eq!(
            feature_index(Color::Black, black_king_h8, Square::H8),
            5 * 64 + 7
        );
        assert_eq!(
            feature_index(Color::White, black_king_h8, Square::H8),
            384 + 5 * 64 + 63
        );
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
    fn output_buckets_split_the_piece_counts_evenly() {
        assert!((2..=32).all(|pieces| output_bucket(pieces, 1) == 0));
        let eight: Vec<usize> = (2..=32).map(|pieces| output_bucket(pieces, 8)).collect();
        for bucket in 0..8 {
            let size = eight.iter().filter(|&&b| b == bucket).count();
            assert_eq!(size, if bucket == 7 { 3 } else { 4 }, "bucket {bucket}");
        }
        assert!(eight.windows(2).all(|pair| pair[0] <= pair[1]));
        assert_eq!(output_bucket(32, 2), 1);
        assert_eq!(output_bucket(17, 2), 0);
        assert_eq!(output_bucket(18, 2), 1);
    }

    #[test]
    fn embedded_net_loads_and_evaluates_the_start_position_near_equal() {
        let network = embedded();
        let score = network.evaluate_from_scratch(&shakmaty::Chess::default());
        assert!(score.abs() < 100, "start position: {score} cp");
    }

    #[test]
    fn quantized_bounds_match_the_clip() {
        assert_eq!((WEIGHT_CLIP * QB as f32).round() as i16, MAX_OUTPUT_WEIGHT);
        assert_eq!((WEIGHT_CLIP * QA as f32).round() as i16, MAX_FEATURE_WEIGHT);
        assert!(i32::from(MAX_OUTPUT_WEIGHT) * QA <= i32::from(i16::MAX));
        assert!(256 * i64::from(MAX_OUTPUT_WEIGHT) * i64::from(QA * QA) <= i64::from(i32::MAX));
    }
}
