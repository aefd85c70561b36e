//! The trainer's own state between runs: float parameters, Adam moments, epochs done.
//!
//! Little-endian: magic b"BSLTCKPT", u32 version (4), u32 H, u32 epochs done, u64 Adam
//! steps, u64 seed, u32 output buckets, then (version 3) u32 king buckets, u32 king
//! mirroring (0 or 1) and the 64-byte king bucket table, then (version 4) u32 factorised
//! (0 or 1), then f32 parameters, first moments and second moments (each in the net
//! file's order), then for a factorised net the shared rows `[768][H]` and their first and
//! second moments (their Adam has taken as many steps as the rest), then the FNV-1a 64 of
//! every byte before it. Version 1, from before output buckets, lacks the bucket count (one
//! bucket); versions 1 and 2 have no king buckets, versions 1 to 3 no factoriser.

use std::io;
use std::path::Path;

use crate::nnue::{fnv1a64, FloatNetwork, KingBuckets, FEATURES};

use super::adam::Adam;
use super::factoriser::Factoriser;
use super::net_file::write_atomically;

const MAGIC: &[u8; 8] = b"BSLTCKPT";
const VERSION: u32 = 4;
const HEADER_SIZE_V1: usize = 8 + 4 + 4 + 4 + 8 + 8;
const HEADER_SIZE_V2: usize = HEADER_SIZE_V1 + 4;
const HEADER_SIZE_V3: usize = HEADER_SIZE_V2 + KingBuckets::BYTES;
const HEADER_SIZE: usize = HEADER_SIZE_V3 + 4;

#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub network: FloatNetwork,
    pub adam: Adam,
    /// The shared rows of a net trained with `--factorise`.
    pub factoriser: Option<Factoriser>,
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
    bytes.extend_from_slice(&u32::from(checkpoint.factoriser.is_some()).to_le_bytes());
    let adam = &checkpoint.adam;
    let mut tensors = vec![net.params(), &adam.first_moment, &adam.second_moment];
    if let Some(factoriser) = &checkpoint.factoriser {
        let shared_adam = &factoriser.adam;
        tensors.extend([
            &factoriser.shared[..],
            &shared_adam.first_moment,
            &shared_adam.second_moment,
        ]);
    }
    for tensor in tensors {
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
        3 => HEADER_SIZE_V3,
        4 => HEADER_SIZE,
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
    let kings = if header >= HEADER_SIZE_V3 {
        KingBuckets::from_bytes(&bytes[HEADER_SIZE_V2..HEADER_SIZE_V3]).map_err(|e| invalid(&e))?
    } else {
        KingBuckets::NONE
    };
    let factorised = match header {
        HEADER_SIZE => match u32_at(HEADER_SIZE_V3) {
            0 => false,
            1 => true,
            _ => return Err(invalid("factorised flag is neither 0 nor 1")),
        },
        _ => false,
    };
    if !crate::nnue::OUTPUT_BUCKET_COUNTS.contains(&buckets) {
        return Err(invalid("output bucket count out of range"));
    }
    let hidden = u32_at(12) as usize;
    let count = FloatNetwork::param_count(hidden, buckets, &kings);
    let shared_count = if factorised { FEATURES * hidden } else { 0 };
    if bytes.len() != header + 12 * (count + shared_count) + 8 {
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
            second_moment: floats[2 * count..3 * count].to_vec(),
            steps: u64_at(20),
        },
        factoriser: factorised.then(|| {
            let shared = &floats[3 * count..];
            Factoriser {
                shared: shared[..shared_count].to_vec(),
                adam: Adam {
                    first_moment: shared[shared_count..2 * shared_count].to_vec(),
                    second_moment: shared[2 * shared_count..].to_vec(),
                    steps: u64_at(20),
                },
            }
        }),
        epochs_done: u32_at(16),
        seed: u64_at(28),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_round_trips_and_detects_damage() {
        let m4 = KingBuckets::named("m4").unwrap();
        for (kings, factorised) in [(KingBuckets::NONE, false), (m4, false), (m4, true)] {
            round_trip_and_damage(kings, factorised);
        }
    }

    fn round_trip_and_damage(kings: KingBuckets, factorised: bool) {
        let network = FloatNetwork::random_with(16, 2, kings, 1);
        let mut adam = Adam::new(network.params().len());
        adam.first_moment[5] = 0.25;
        adam.second_moment[7] = 1e-9;
        adam.steps = 1234;
        let factoriser = factorised.then(|| {
            let mut factoriser = Factoriser::from_network(&network);
            factoriser.adam.first_moment[3] = -0.5;
            factoriser.adam.second_moment[4] = 2e-9;
            factoriser.adam.steps = 1234;
            factoriser
        });
        let checkpoint = Checkpoint {
            network,
            adam,
            factoriser,
            epochs_done: 3,
            seed: 99,
        };
        let path = std::env::temp_dir().join(format!(
            "basalt-ckpt-{}-{factorised}.bin",
            std::process::id()
        ));
        save(&path, &checkpoint).unwrap();
        assert!(load(&path).unwrap() == checkpoint);
        let saved = std::fs::read(&path).unwrap();
        // A flipped bit among the parameters, and among the last (shared) moments.
        for at in [100, saved.len() - 20] {
            let mut bytes = saved.clone();
            bytes[at] ^= 1;
            std::fs::write(&path, &bytes).unwrap();
            assert!(load(&path).is_err(), "a flip at byte {at} went unnoticed");
        }
        std::fs::write(&path, &saved[..saved.len() - 1]).unwrap();
        assert!(load(&path).is_err());
        std::fs::remove_file(&path).unwrap();
    }

    /// A version 3 checkpoint (before the factoriser: no flag) still loads.
    #[test]
    fn version_3_checkpoints_load() {
        let network = FloatNetwork::random_with(16, 2, KingBuckets::named("m4").unwrap(), 2);
        let checkpoint = Checkpoint {
            adam: Adam::new(network.params().len()),
            network,
            factoriser: None,
            epochs_done: 1,
            seed: 5,
        };
        let path = std::env::temp_dir().join(format!("basalt-ckpt-v3-{}.bin", std::process::id()));
        save(&path, &checkpoint).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 8);
        bytes.drain(HEADER_SIZE_V3..HEADER_SIZE);
        bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
        let hash = fnv1a64(&bytes);
        bytes.extend_from_slice(&hash.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path).unwrap() == checkpoint);
        std::fs::remove_file(&path).unwrap();
    }
}
