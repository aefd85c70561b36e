//! The quantized net file that the engine's inference reads (its layout is documented
//! in `nnue`'s module comment and docs/training.md): the trainer rounds its float
//! parameters to the file's integers, feature weights and biases times QA, output weights
//! times QB, output biases times QA * QB, and the engine's own writer lays them out, so
//! the two sides cannot disagree on the format.
//!
//! With the accumulator in units of QA and the output weights in units of QB, the integer
//! output `sum(clamp(acc, 0, QA)^2 * w) / QA + bias` is in units of QA * QB, and
//! centipawns are that times EVAL_SCALE / (QA * QB).

use std::fs;
use std::io;
use std::path::Path;

use super::network::Network;

pub use crate::nnue::{fnv1a64, EVAL_SCALE, FORMAT_VERSION, MAGIC, QA, QB};

fn to_i16s(values: &[f32], scale: i32) -> Box<[i16]> {
    values
        .iter()
        .map(|&x| {
            (x * scale as f32)
                .round()
                .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
        })
        .collect()
}

/// The engine's network for `net`: its parameters rounded to the file's integers.
///
/// # Panics
///
/// When the trainer's network breaks the format's bounds (a hidden size or bucket count it
/// does not allow; weights beyond the clip, which Adam never leaves).
pub fn quantized(net: &Network) -> crate::nnue::Network {
    let h = net.hidden;
    crate::nnue::Network::from_parts(
        h,
        net.kings,
        to_i16s(net.feature_weights(), QA),
        to_i16s(net.feature_bias(), QA),
        to_i16s(net.output_weights(), QB),
        net.output_biases()
            .iter()
            .map(|&b| (f64::from(b) * f64::from(QA * QB)).round() as i32)
            .collect(),
    )
    .unwrap_or_else(|e| panic!("the trainer's network does not fit the net format: {e}"))
}

/// The file's bytes for `net`.
pub fn quantized_bytes(net: &Network) -> Vec<u8> {
    quantized(net).to_bytes()
}

/// The float network a quantized net stands for, as the trainer's parameters: the start of
/// a run that goes on from an existing net (`basalt train --init`) on new data. Quantizing
/// it again gives the same file.
pub fn dequantized(net: &crate::nnue::Network) -> Network {
    let float = net.dequantize();
    let buckets = float.output_biases.len();
    let kings = float.king_buckets;
    let mut params = Vec::with_capacity(Network::param_count(float.hidden, buckets, &kings));
    params.extend_from_slice(&float.feature_weights);
    params.extend_from_slice(&float.feature_biases);
    params.extend_from_slice(&float.output_weights);
    params.extend_from_slice(&float.output_biases);
    Network {
        hidden: float.hidden,
        buckets,
        kings,
        params,
    }
}

/// Reads a net file for `--init`.
pub fn read(path: &Path) -> Result<Network, String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let net = crate::nnue::Network::from_bytes(&bytes)
        .map_err(|e| format!("{} is not a net: {e}", path.display()))?;
    Ok(dequantized(&net))
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
    use crate::nnue::Accumulator;
    use crate::offline::train::data::synthetic::random_records;
    use crate::offline::train::data::{decode, TrainingSample};
    use crate::offline::train::network::{KingBuckets, INPUTS};
    use crate::offline::train::Trainer;

    #[test]
    fn a_dequantized_net_quantizes_to_the_same_file() {
        let net = crate::nnue::embedded();
        let float = dequantized(&net);
        assert_eq!(
            float.params.len(),
            Network::param_count(net.hidden_size(), net.output_buckets(), net.king_buckets())
        );
        assert_eq!(quantized_bytes(&float), net.to_bytes());
        let bucketed = crate::nnue::FloatNetwork::random_bucketed(32, 8, 4).quantize();
        assert_eq!(
            quantized_bytes(&dequantized(&bucketed)),
            bucketed.to_bytes()
        );
    }

    /// Trains a small net briefly, writes it, reads it back and compares the integer
    /// forward pass with the float one. Against the float net on the quantization grid the
    /// integer pass may only lose its truncations (<= 2 cp). Against the unrounded float
    /// net the rounding of the weights adds more: an output weight moves by up to 1/128
    /// (QB = 64), which over 2H neurons comes to a few cp on average and some tens at worst;
    /// that is the format's resolution, not the writer's error.
    #[test]
    fn quantized_file_round_trips() {
        for layout in ["none", "mirror", "m4"] {
            round_trip(KingBuckets::named(layout).unwrap());
        }
    }

    fn round_trip(kings: KingBuckets) {
        let hidden = 32;
        let records = random_records(3000, 11);
        let mut trainer = Trainer::new(hidden, 2, kings, 1, 1);
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
        // The engine's reader and integer forward pass.
        let quantized = crate::nnue::Network::from_bytes(&bytes).expect("the engine reads it");
        assert_eq!(quantized.hidden_size(), hidden);
        assert_eq!(quantized.output_buckets(), 2);

        let mut on_grid = net.clone();
        let hq = kings.count() * INPUTS * hidden + hidden;
        for (i, p) in on_grid.params.iter_mut().enumerate() {
            let scale = match i {
                i if i < hq => QA,
                i if i < hq + 2 * 2 * hidden => QB,
                _ => QA * QB,
            } as f32;
            *p = (*p * scale).round() / scale;
        }

        let (mut worst_grid, mut worst_float, mut total_float) = (0, 0, 0);
        let positions = random_records(200, 12);
        for record in &positions {
            let position = decode(record).unwrap();
            let board = crate::offline::datagen::format::unpack(record)
                .unwrap()
                .board;
            let accumulator = Accumulator::from_board(&quantized, &board);
            let pieces = board.occupied().count();
            let integer = i64::from(quantized.output(&accumulator, position.turn, pieces));
            let sample = TrainingSample::new(&position, 0.0, &kings);
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
