//! The trainer's own state between runs: float parameters, Adam moments, epochs done.
//!
//! Little-endian: magic b"BSLTCKPT", u32 version (2), u32 H, u32 epochs done, u64 Adam
//! steps, u64 seed, u32 output buckets, then (version 3) u32 king buckets, u32 king
//! mirroring (0 or 1) and the 64-byte king bucket table, then f32 parameters, first moments
//! and second moments (each in the net file's order), then the FNV-1a 64 of every byte
//! before it. Version 1, from before output buckets, lacks the bucket count (one bucket);
//! versions 1 and 2 have no king buckets.

use std::io;
use std::path::Path;

use crate::nnue::{fnv1a64, FloatNetwork, KingBuckets};

use super::adam::Adam;
use super::net_file::write_atomically;

const MAGIC: &[u8; 8] = b"BSLTCKPT";
const VERSION: u32 = 3;
const HEADER_SIZE_V1: usize = 8 + 4 + 4 + 4 + 8 + 8;
const HEADER_SIZE_V2: usize = HEADER_SIZE_V1 + 4;
const HEADER_SIZE: usize = HEADER_SIZE_V2 + KingBuckets::BYTES;

#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub network: FloatNetwork,
    pub adam: Adam,
    pub epochs_done: u32,
    /// The `--seed` of the run, which fixed the validation split and the epoch orders.
    pub seed: u64,
}

pub fn save(path: &Path, checkpoint: &Checkpoint) -> io::Result<()> {
    let net = &checkpoint.network;
    let mut bytes = Vec::with_capacity(HEADER_SIZE + 12 * net.params().len() + 8);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&(net.hidden_size() as u32).to_le_bytes());
    bytes.extend_from_slice(&checkpoint.epochs_done.to_le_bytes());
    bytes.extend_from_slice(&checkpoint.adam.steps.to_le_bytes());
    bytes.extend_from_slice(&checkpoint.seed.to_le_bytes());
    bytes.extend_from_slice(&(net.output_buckets() as u32).to_le_bytes());
    bytes.extend_from_slice(&net.king_buckets().to_bytes());
    let adam = &checkpoint.adam;
    for tensor in [net.params(), &adam.first_moment, &adam.second_moment] {
        for x in tensor {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    let hash = fnv1a64(&bytes);
    bytes.extend_from_slice(&hash.to_le_bytes());
    write_atomically(path, &bytes)
}

pub fn load(path: &Path) -> io::Result<Checkpoint> {
    let bytes = std::fs::read(path)?;
    let invalid = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {why}", path.display()),
        )
    };
    if bytes.len() < HEADER_SIZE_V1 + 8 || &bytes[0..8] != MAGIC {
        return Err(invalid("not a basalt training checkpoint"));
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let header = match u32_at(8) {
        1 => HEADER_SIZE_V1,
        2 => HEADER_SIZE_V2,
        3 => HEADER_SIZE,
        _ => return Err(invalid("unknown checkpoint version")),
    };
    if bytes.len() < header + 8 {
        return Err(invalid("truncated header"));
    }
    let buckets = if header > HEADER_SIZE_V1 {
        u32_at(HEADER_SIZE_V1) as usize
    } else {
        1
    };
    let kings = if header == HEADER_SIZE {
        KingBuckets::from_bytes(&bytes[HEADER_SIZE_V2..HEADER_SIZE]).map_err(|e| invalid(&e))?
    } else {
        KingBuckets::NONE
    };
    if !crate::nnue::OUTPUT_BUCKET_COUNTS.contains(&buckets) {
        return Err(invalid("output bucket count out of range"));
    }
    let hidden = u32_at(12) as usize;
    let count = FloatNetwork::param_count(hidden, buckets, &kings);
    if bytes.len() != header + 12 * count + 8 {
        return Err(invalid("wrong size for its hidden layer"));
    }
    let (body, hash) = bytes.split_at(bytes.len() - 8);
    if fnv1a64(body) != u64::from_le_bytes(hash.try_into().expect("8 bytes")) {
        return Err(invalid("checksum mismatch"));
    }
    let floats: Vec<f32> = body[header..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok(Checkpoint {
        network: FloatNetwork::from_params(hidden, buckets, kings, floats[..count].to_vec())
            .map_err(|e| invalid(&e))?,
        adam: Adam {
            first_moment: floats[count..2 * count].to_vec(),
            second_moment: floats[2 * count..].to_vec(),
            steps: u64_at(20),
        },
        epochs_done: u32_at(16),
        seed: u64_at(28),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_round_trips_and_detects_damage() {
        for kings in [KingBuckets::NONE, KingBuckets::named("m4").unwrap()] {
            round_trip_and_damage(kings);
        }
    }

    fn round_trip_and_damage(kings: KingBuckets) {
        let network = FloatNetwork::random_with(16, 2, kings, 1);
        let mut adam = Adam::new(network.params().len());
        adam.first_moment[5] = 0.25;
        adam.second_moment[7] = 1e-9;
        adam.steps = 1234;
        let checkpoint = Checkpoint {
            network,
            adam,
            epochs_done: 3,
            seed: 99,
        };
        let path = std::env::temp_dir().join(format!("basalt-ckpt-{}.bin", std::process::id()));
        save(&path, &checkpoint).unwrap();
        assert!(load(&path).unwrap() == checkpoint);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path).is_err());
        std::fs::remove_file(&path).unwrap();
    }
}
