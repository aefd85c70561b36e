//! The quantized net file that the engine's inference reads, little-endian:
//!
//! ```text
//! 0..8      magic b"BSLTNNUE"
//! u32       format version (1)
//! u32       H
//! u32 x 3   QA (255), QB (64), EVAL_SCALE (400)
//! i16[768H] feature weights, round(w * QA), feature-major
//! i16[H]    feature biases, round(b * QA)
//! i16[2H]   output weights, round(w * QB), side to move's half first
//! i32       output bias, round(b * QA * QB)
//! u64       FNV-1a 64 of every byte before it
//! ```
//!
//! With the accumulator in units of QA and the output weights in units of QB, the integer
//! output `sum(clamp(acc, 0, QA)^2 * w) / QA + bias` is in units of QA * QB, and
//! centipawns are that times EVAL_SCALE / (QA * QB).

use std::fs;
use std::io;
use std::path::Path;

use super::network::{Network, INPUTS};

pub const MAGIC: &[u8; 8] = b"BSLTNNUE";
pub const FORMAT_VERSION: u32 = 1;
pub const QA: i32 = 255;
pub const QB: i32 = 64;
pub const EVAL_SCALE: i32 = 400;

/// Size in bytes of the file for `hidden` accumulator neurons.
pub fn file_size(hidden: usize) -> usize {
    8 + 5 * 4 + 2 * (INPUTS * hidden + hidden + 2 * hidden) + 4 + 8
}

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn to_i16(x: f32, scale: i32) -> i16 {
    (x * scale as f32)
        .round()
        .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
}

/// The file's bytes for `net`.
pub fn quantized_bytes(net: &Network) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(file_size(net.hidden));
    bytes.extend_from_slice(MAGIC);
    for field in [
        FORMAT_VERSION,
        net.hidden as u32,
        QA as u32,
        QB as u32,
        EVAL_SCALE as u32,
    ] {
        bytes.extend_from_slice(&field.to_le_bytes());
    }
    for &w in net.feature_weights().iter().chain(net.feature_bias()) {
        bytes.extend_from_slice(&to_i16(w, QA).to_le_bytes());
    }
    for &w in net.output_weights() {
        bytes.extend_from_slice(&to_i16(w, QB).to_le_bytes());
    }
    let bias = (f64::from(net.output_bias()) * f64::from(QA * QB)).round() as i32;
    bytes.extend_from_slice(&bias.to_le_bytes());
    let hash = fnv1a64(&bytes);
    bytes.extend_from_slice(&hash.to_le_bytes());
    bytes
}

/// Writes the quantized net to `path` through a temporary file and a rename, so that a
/// reader (or a run killed mid-write) never sees half a net.
pub fn write(path: &Path, net: &Network) -> io::Result<()> {
    write_atomically(path, &quantized_bytes(net))
}

pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    fs::write(&temporary, bytes)?;
    fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::data::synthetic::random_records;
    use crate::train::data::{decode, Sample};
    use crate::train::network::feature_index;
    use crate::train::Trainer;

    /// A reader written from the format alone, as the engine's will be.
    struct QuantizedNet {
        hidden: usize,
        feature_weights: Vec<i16>,
        feature_bias: Vec<i16>,
        output_weights: Vec<i16>,
        output_bias: i32,
    }

    fn read(bytes: &[u8]) -> QuantizedNet {
        assert_eq!(&bytes[0..8], MAGIC);
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let hidden = u32_at(12) as usize;
        assert_eq!(
            [u32_at(8), u32_at(16), u32_at(20), u32_at(24)],
            [1, 255, 64, 400]
        );
        assert_eq!(bytes.len(), file_size(hidden));
        let (body, hash) = bytes.split_at(bytes.len() - 8);
        assert_eq!(u64::from_le_bytes(hash.try_into().unwrap()), fnv1a64(body));
        let mut i16s = body[28..body.len() - 4]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]));
        let mut take = |n: usize| i16s.by_ref().take(n).collect::<Vec<i16>>();
        let feature_weights = take(INPUTS * hidden);
        let feature_bias = take(hidden);
        let output_weights = take(2 * hidden);
        assert_eq!(output_weights.len(), 2 * hidden);
        let output_bias = i32::from_le_bytes(body[body.len() - 4..].try_into().unwrap());
        QuantizedNet {
            hidden,
            feature_weights,
            feature_bias,
            output_weights,
            output_bias,
        }
    }

    impl QuantizedNet {
        /// The integer forward pass of the format, in centipawns for the side to move.
        fn evaluate(&self, features: [&[usize]; 2]) -> i64 {
            let h = self.hidden;
            let mut sum: i64 = 0;
            for (side, active) in features.into_iter().enumerate() {
                let mut acc: Vec<i32> = self.feature_bias.iter().map(|&b| i32::from(b)).collect();
                for &f in active {
                    for (a, &w) in acc
                        .iter_mut()
                        .zip(&self.feature_weights[f * h..(f + 1) * h])
                    {
                        *a += i32::from(w);
                    }
                }
                for (i, &a) in acc.iter().enumerate() {
                    let v = i64::from(a.clamp(0, QA));
                    sum += v * i64::from(self.output_weights[side * h + i]) * v;
                }
            }
            let out = sum / i64::from(QA) + i64::from(self.output_bias);
            out * i64::from(EVAL_SCALE) / i64::from(QA * QB)
        }
    }

    #[test]
    fn fnv1a64_matches_published_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    /// Trains a small net briefly, writes it, reads it back and compares the integer
    /// forward pass with the float one. Against the float net on the quantization grid the
    /// integer pass may only lose its truncations (<= 2 cp). Against the unrounded float
    /// net the rounding of the weights adds more: an output weight moves by up to 1/128
    /// (QB = 64), which over 2H neurons comes to a few cp on average and some tens at worst;
    /// that is the format's resolution, not the writer's error.
    #[test]
    fn quantized_file_round_trips() {
        let hidden = 32;
        let records = random_records(3000, 11);
        let mut trainer = Trainer::new(hidden, 1, 1);
        let order: Vec<u32> = (0..records.len() as u32).collect();
        for batch in order.chunks(256).cycle().take(40) {
            trainer.train_batch(&records, batch, 0.01, 0.25);
        }
        let net = trainer.network().clone();

        let path =
            std::env::temp_dir().join(format!("basalt-quantize-{}.nnue", std::process::id()));
        write(&path, &net).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bytes, quantized_bytes(&net));
        let quantized = read(&bytes);
        assert_eq!(quantized.hidden, hidden);
        assert!(quantized.output_weights.iter().all(|w| w.abs() <= 127));

        let mut on_grid = net.clone();
        let hq = INPUTS * hidden + hidden;
        for (i, p) in on_grid.params.iter_mut().enumerate() {
            let scale = match i {
                i if i < hq => QA,
                i if i < hq + 2 * hidden => QB,
                _ => QA * QB,
            } as f32;
            *p = (*p * scale).round() / scale;
        }

        let (mut worst_grid, mut worst_float, mut total_float) = (0, 0, 0);
        let positions = random_records(200, 12);
        for record in &positions {
            let position = decode(record).unwrap();
            let us = position.turn;
            let features = [us, !us].map(|perspective| {
                position
                    .pieces()
                    .iter()
                    .map(|&(square, piece)| feature_index(perspective, piece, square))
                    .collect::<Vec<_>>()
            });
            let integer = quantized.evaluate([&features[0], &features[1]]);
            let sample = Sample::new(&position, 0.0);
            let cp = |n: &Network| (n.evaluate(&sample) * EVAL_SCALE as f32).round() as i64;
            worst_grid = worst_grid.max((integer - cp(&on_grid)).abs());
            worst_float = worst_float.max((integer - cp(&net)).abs());
            total_float += (integer - cp(&net)).abs();
        }
        let mean_float = total_float as f64 / positions.len() as f64;
        eprintln!(
            "integer vs float: on the grid worst {worst_grid} cp; unrounded worst {worst_float} \
             cp, mean {mean_float:.2} cp"
        );
        assert!(
            worst_grid <= 2,
            "integer vs float on the grid: {worst_grid} cp"
        );
        assert!(
            worst_float <= 40 && mean_float <= 8.0,
            "integer vs float: worst {worst_float} cp, mean {mean_float:.2} cp"
        );
    }
}
