//! The quantized network: loading and writing the file format, and the integer output layer.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

use shakmaty::{Chess, Color, Position as _};

#[cfg(target_arch = "x86_64")]
use super::simd::Avx2;
use super::simd::{lanes, to_blocks, Block, Kernels, Portable, Simd};
use super::{
    output_bucket, Accumulator, FloatNetwork, KingBuckets, EVAL_LIMIT, EVAL_SCALE, FEATURES,
    HIDDEN_STEP, MAX_FEATURE_BIAS, MAX_FEATURE_WEIGHT, MAX_HIDDEN, MAX_KING_BUCKETS,
    MAX_OUTPUT_WEIGHT, MIN_HIDDEN, OUTPUT_BUCKET_COUNTS, QA, QB,
};

/// The first bytes of every network file.
pub const MAGIC: &[u8; 8] = b"BSLTNNUE";
/// The newest format version: 2 adds output buckets, 3 king buckets. A net is written in
/// the oldest version that can hold it (one output bucket and no king buckets: version 1),
/// so nets without the newer parts stay readable by earlier builds.
pub const FORMAT_VERSION: u32 = 3;
/// Version 1: magic, then five u32: version, H, QA, QB, EVAL_SCALE.
const HEADER_BYTES: usize = 8 + 5 * 4;
/// Version 2 adds a sixth u32, the number of output buckets.
const HEADER_BYTES_V2: usize = HEADER_BYTES + 4;
/// Version 3 adds two more u32, the king bucket count and the mirroring flag (0 or 1), and
/// the 64-byte table of each king square's bucket.
const HEADER_BYTES_V3: usize = HEADER_BYTES_V2 + KingBuckets::BYTES;
/// The checksum (u64) after the output biases.
const CHECKSUM_BYTES: usize = 8;

/// A quantized network, ready to evaluate. Immutable once built: every constructor checks
/// the weight bounds the integer forward pass relies on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    hidden: usize,
    king_buckets: KingBuckets,
    /// `king_buckets.inputs()` rows of `hidden` weights, feature-major.
    feature_weights: Box<[Block]>,
    feature_biases: Box<[Block]>,
    output_buckets: usize,
    /// Per bucket: the side-to-move half, then the other side's half.
    output_weights: Box<[Block]>,
    output_biases: Box<[i32]>,
    /// FNV-1a hash of the file bytes before the checksum: identifies the weights, so an
    /// `AccumulatorStack` can tell that it was filled by another network.
    checksum: u64,
    /// The kernels inference runs: the fastest this CPU has, asked once when the network is
    /// built.
    simd: Simd,
}

/// FNV-1a, 64-bit: the network file's checksum (the trainer's checkpoints use it too).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The format version a network with `buckets` output buckets and `kings` is written in.
fn version_for(buckets: usize, kings: &KingBuckets) -> u32 {
    if *kings != KingBuckets::NONE {
        3
    } else if buckets == 1 {
        1
    } else {
        2
    }
}

const fn header_bytes(version: u32) -> usize {
    match version {
        1 => HEADER_BYTES,
        2 => HEADER_BYTES_V2,
        _ => HEADER_BYTES_V3,
    }
}

/// The bytes after the header of a network with `hidden` neurons, `buckets` output buckets
/// and `king_sets` sets of input rows: the weights, biases and checksum.
const fn body_bytes(hidden: usize, buckets: usize, king_sets: usize) -> usize {
    2 * (king_sets * FEATURES * hidden + hidden + buckets * 2 * hidden)
        + 4 * buckets
        + CHECKSUM_BYTES
}

/// The file size of a network with `hidden` neurons, `buckets` output buckets and `kings`.
fn file_bytes(hidden: usize, buckets: usize, kings: &KingBuckets) -> usize {
    header_bytes(version_for(buckets, kings)) + body_bytes(hidden, buckets, kings.count())
}

/// The most output buckets a file may declare.
const MAX_OUTPUT_BUCKETS: usize = {
    let mut most = 0;
    let mut i = 0;
    while i < OUTPUT_BUCKET_COUNTS.len() {
        if OUTPUT_BUCKET_COUNTS[i] > most {
            most = OUTPUT_BUCKET_COUNTS[i];
        }
        i += 1;
    }
    most
};

/// The size of the largest net the format allows: the newest (longest) header, then
/// [`MAX_HIDDEN`] neurons with [`MAX_KING_BUCKETS`] sets of input rows and the most output
/// buckets (about 96 MiB). [`Network::read_file`] refuses a larger file without reading it.
pub const MAX_FILE_BYTES: usize =
    header_bytes(FORMAT_VERSION) + body_bytes(MAX_HIDDEN, MAX_OUTPUT_BUCKETS, MAX_KING_BUCKETS);

/// What kind of file `metadata` describes, for an error message.
fn file_kind(metadata: &Metadata) -> &'static str {
    let kind = metadata.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// A net file's size, if `metadata` is that of a regular file no larger than the largest
/// net: what may be read whole.
fn check_net_file(metadata: &Metadata) -> Result<usize, String> {
    if !metadata.is_file() {
        return Err(format!(
            "{}, not a regular file: a net is read only from a regular file",
            file_kind(metadata)
        ));
    }
    match usize::try_from(metadata.len()) {
        Ok(len) if len <= MAX_FILE_BYTES => Ok(len),
        _ => Err(format!(
            "{} bytes, more than the largest net the format allows ({MAX_FILE_BYTES} bytes)",
            metadata.len()
        )),
    }
}

/// Opens `path` for reading without waiting: a FIFO put in place of a checked file would
/// otherwise block `open` until a writer came.
fn open_without_blocking(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn read_i16s(bytes: &[u8]) -> Box<[i16]> {
    bytes
        .chunks_exact(2)
        .map(|pair| i16::from_le_bytes([pair[0], pair[1]]))
        .collect()
}

/// The first entry of `values` outside `-limit..=limit`, as (index, value).
fn first_out_of_range(values: &[i16], limit: i16) -> Option<(usize, i16)> {
    values
        .iter()
        .position(|v| v.unsigned_abs() > limit.unsigned_abs())
        .map(|i| (i, values[i]))
}

impl Network {
    /// Builds a network from its quantized parts, checking sizes and weight bounds.
    pub fn from_parts(
        hidden: usize,
        king_buckets: KingBuckets,
        feature_weights: Box<[i16]>,
        feature_biases: Box<[i16]>,
        output_weights: Box<[i16]>,
        output_biases: Box<[i32]>,
    ) -> Result<Network, String> {
        check_hidden(hidden)?;
        let output_buckets = output_biases.len();
        check_buckets(output_buckets)?;
        if feature_weights.len() != king_buckets.inputs() * hidden
            || feature_biases.len() != hidden
            || output_weights.len() != output_buckets * 2 * hidden
        {
            return Err(format!(
                "array sizes do not match hidden size {hidden} with {output_buckets} output \
                 buckets and {} king buckets",
                king_buckets.count()
            ));
        }
        if let Some((i, w)) = first_out_of_range(&feature_weights, MAX_FEATURE_WEIGHT) {
            return Err(format!(
                "feature weight {i} (feature {}, neuron {}) is {w}, outside ±{MAX_FEATURE_WEIGHT}: \
                 weights must be clipped to ±1.98 before quantization so accumulators fit an i16",
                i / hidden,
                i % hidden
            ));
        }
        if let Some((i, b)) = first_out_of_range(&feature_biases, MAX_FEATURE_BIAS) {
            return Err(format!(
                "feature bias {i} is {b}, outside ±{MAX_FEATURE_BIAS}: with 32 pieces the \
                 accumulator would overflow an i16"
            ));
        }
        if let Some((i, w)) = first_out_of_range(&output_weights, MAX_OUTPUT_WEIGHT) {
            return Err(format!(
                "output weight {i} is {w}, outside ±{MAX_OUTPUT_WEIGHT}: weights must be clipped \
                 to ±1.98 before quantization so activation * weight fits an i16"
            ));
        }
        let mut network = Network {
            hidden,
            king_buckets,
            feature_weights: to_blocks(&feature_weights),
            feature_biases: to_blocks(&feature_biases),
            output_buckets,
            output_weights: to_blocks(&output_weights),
            output_biases,
            checksum: 0,
            simd: Simd::detect(),
        };
        let bytes = network.to_bytes();
        network.checksum = fnv1a64(&bytes[..bytes.len() - 8]);
        Ok(network)
    }

    /// Reads a network file (see the module documentation for the format). Never panics:
    /// every defect of the input is an `Err` saying what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, String> {
        if bytes.len() < HEADER_BYTES {
            return Err(format!(
                "file is {} bytes, shorter than the {HEADER_BYTES}-byte header",
                bytes.len()
            ));
        }
        if &bytes[..8] != MAGIC {
            return Err("not a Basalt network file (bad magic, expected BSLTNNUE)".into());
        }
        let version = read_u32(bytes, 8);
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(format!(
                "format version {version}, but this build reads versions 1 to {FORMAT_VERSION}"
            ));
        }
        let header = header_bytes(version);
        if bytes.len() < header {
            return Err(format!(
                "file is {} bytes, shorter than the {header}-byte header of version {version}",
                bytes.len()
            ));
        }
        let buckets = if version == 1 {
            1
        } else {
            read_u32(bytes, HEADER_BYTES) as usize
        };
        check_buckets(buckets)?;
        let king_buckets = if version >= 3 {
            KingBuckets::from_bytes(&bytes[HEADER_BYTES_V2..HEADER_BYTES_V3])?
        } else {
            KingBuckets::NONE
        };
        if version != version_for(buckets, &king_buckets) {
            return Err(format!(
                "version {version} with {buckets} output buckets and {} king buckets: such a \
                 net is version {}",
                king_buckets.count(),
                version_for(buckets, &king_buckets)
            ));
        }
        let hidden = read_u32(bytes, 12) as usize;
        check_hidden(hidden)?;
        for (name, at, expected) in [
            ("QA", 16, QA),
            ("QB", 20, QB),
            ("EVAL_SCALE", 24, EVAL_SCALE),
        ] {
            let found = read_u32(bytes, at);
            if i64::from(found) != i64::from(expected) {
                return Err(format!(
                    "{name} is {found}, but this build needs {expected}"
                ));
            }
        }
        let expected = file_bytes(hidden, buckets, &king_buckets);
        if bytes.len() != expected {
            return Err(format!(
                "file is {} bytes, but a network with hidden size {hidden} takes {expected} ({})",
                bytes.len(),
                if bytes.len() < expected {
                    "truncated?"
                } else {
                    "trailing bytes"
                }
            ));
        }
        let (body, stored) = bytes.split_at(expected - 8);
        let stored = u64::from_le_bytes(stored.try_into().expect("8 bytes remain"));
        let computed = fnv1a64(body);
        if stored != computed {
            return Err(format!(
                "checksum mismatch (stored {stored:016x}, computed {computed:016x}): the file is \
                 corrupt"
            ));
        }

        let (feature_weights, rest) = body[header..].split_at(2 * king_buckets.inputs() * hidden);
        let (feature_biases, rest) = rest.split_at(2 * hidden);
        let (output_weights, output_biases) = rest.split_at(buckets * 4 * hidden);
        let output_biases = output_biases
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().expect("4-byte chunks")))
            .collect();
        Network::from_parts(
            hidden,
            king_buckets,
            read_i16s(feature_weights),
            read_i16s(feature_biases),
            read_i16s(output_weights),
            output_biases,
        )
    }

    /// Reads the net file at `path` (a symlink is followed), checked before any of it is
    /// read: it must be a regular file no larger than [`MAX_FILE_BYTES`]. A FIFO would block
    /// the reader until a writer came, and `/dev/zero` or a huge file would fill the memory.
    /// The path is checked before it is opened (opening a device can have effects of its
    /// own), and the opened file again, as it may have been replaced in between; the read
    /// stops past the bound all the same, for a file that grows. Errors say what is wrong,
    /// without the path.
    pub fn read_file(path: &Path) -> Result<Network, String> {
        check_net_file(&std::fs::metadata(path).map_err(|e| e.to_string())?)?;
        let file = open_without_blocking(path).map_err(|e| e.to_string())?;
        let len = check_net_file(&file.metadata().map_err(|e| e.to_string())?)?;
        let mut bytes = Vec::with_capacity(len);
        file.take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(format!(
                "grew past the largest net the format allows ({MAX_FILE_BYTES} bytes) while \
                 it was read"
            ));
        }
        Network::from_bytes(&bytes)
    }

    /// The file bytes of this network, checksum included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let version = version_for(self.output_buckets, &self.king_buckets);
        let mut bytes = Vec::with_capacity(file_bytes(
            self.hidden,
            self.output_buckets,
            &self.king_buckets,
        ));
        bytes.extend_from_slice(MAGIC);
        for field in [version, self.hidden as u32, QA as u32, QB as u32] {
            bytes.extend_from_slice(&field.to_le_bytes());
        }
        bytes.extend_from_slice(&(EVAL_SCALE as u32).to_le_bytes());
        if version >= 2 {
            bytes.extend_from_slice(&(self.output_buckets as u32).to_le_bytes());
        }
        if version >= 3 {
            bytes.extend_from_slice(&self.king_buckets.to_bytes());
        }
        for value in lanes(&self.feature_weights)
            .chain(lanes(&self.feature_biases))
            .chain(lanes(&self.output_weights))
        {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        for bias in &self.output_biases {
            bytes.extend_from_slice(&bias.to_le_bytes());
        }
        let checksum = fnv1a64(&bytes);
        bytes.extend_from_slice(&checksum.to_le_bytes());
        bytes
    }

    /// The number of hidden neurons per perspective (H).
    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The number of output buckets (B).
    pub fn output_buckets(&self) -> usize {
        self.output_buckets
    }

    /// The shape in a few words, e.g. "(768 -> 256) x 2 -> 1, 8 output buckets" or
    /// "(768 x 4 -> 256) x 2 -> 1, king buckets mirrored, 8 output buckets".
    pub fn describe(&self) -> String {
        let kings = &self.king_buckets;
        let inputs = match kings.count() {
            1 => "768".to_string(),
            k => format!("768 x {k}"),
        };
        let mirrored = if kings.mirrored() {
            ", king buckets mirrored"
        } else {
            ""
        };
        let plural = if self.output_buckets == 1 { "" } else { "s" };
        format!(
            "({inputs} -> {}) x 2 -> 1{mirrored}, {} output bucket{plural}",
            self.hidden, self.output_buckets
        )
    }

    /// How the king's square picks the input weights.
    #[inline]
    pub fn king_buckets(&self) -> &KingBuckets {
        &self.king_buckets
    }

    /// The file checksum: the same weights always give the same value.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// The H weights feature `index` adds to an accumulator.
    #[inline]
    pub(super) fn feature_row(&self, index: usize) -> &[Block] {
        let blocks = self.hidden / HIDDEN_STEP;
        &self.feature_weights[index * blocks..(index + 1) * blocks]
    }

    #[inline]
    pub(super) fn feature_biases(&self) -> &[Block] {
        &self.feature_biases
    }

    /// The kernels this network runs.
    #[inline]
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// This network running `simd`'s kernels instead of the fastest the CPU has: tests use
    /// it to run the portable (SSE2) path on a CPU with AVX2. (A level the CPU lacks cannot
    /// be asked for: only detection makes one.)
    pub fn with_simd(mut self, simd: Simd) -> Network {
        self.simd = simd;
        self
    }

    /// The evaluation in centipawns for `side_to_move`, from the accumulators of its board,
    /// which has `pieces` pieces.
    pub fn output(&self, accumulator: &Accumulator, side_to_move: Color, pieces: usize) -> i32 {
        match self.simd {
            Simd::Portable => self.output_with(Portable, accumulator, side_to_move, pieces),
            // SAFETY: an `Avx2` exists, so the CPU has AVX2, the one feature the callee needs.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2(avx2) => unsafe {
                self.output_avx2(avx2, accumulator, side_to_move, pieces)
            },
        }
    }

    /// The generic body compiled with AVX2 enabled, so the AVX2 kernels inline into it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn output_avx2(
        &self,
        avx2: Avx2,
        accumulator: &Accumulator,
        side_to_move: Color,
        pieces: usize,
    ) -> i32 {
        self.output_with(avx2, accumulator, side_to_move, pieces)
    }

    /// `output` with `kernels`, inlined into the caller (which has matched on the level).
    #[inline(always)]
    pub(super) fn output_with(
        &self,
        kernels: impl Kernels,
        accumulator: &Accumulator,
        side_to_move: Color,
        pieces: usize,
    ) -> i32 {
        let bucket = output_bucket(pieces, self.output_buckets);
        let blocks = self.hidden / HIDDEN_STEP;
        let weights = &self.output_weights[bucket * 2 * blocks..(bucket + 1) * 2 * blocks];
        let (ours, theirs) = weights.split_at(blocks);
        let sum = kernels.screlu_dot(accumulator.values(side_to_move), ours)
            + kernels.screlu_dot(accumulator.values(!side_to_move), theirs);
        // sum is in units QA * QA * QB; out in QA * QB.
        let out = sum / i64::from(QA) + i64::from(self.output_biases[bucket]);
        let centipawns = out * i64::from(EVAL_SCALE) / i64::from(QA * QB);
        centipawns.clamp(-i64::from(EVAL_LIMIT), i64::from(EVAL_LIMIT)) as i32
    }

    /// The evaluation of `board` for the side to move, with fresh accumulators (for the
    /// `eval` command and tests; the search keeps its accumulators incrementally).
    pub fn evaluate_from_scratch(&self, board: &Chess) -> i32 {
        let accumulator = Accumulator::from_board(self, board.board());
        self.output(&accumulator, board.turn(), board.board().occupied().count())
    }

    /// The float network these integers stand for: every weight divided by its scale.
    pub fn dequantize(&self) -> FloatNetwork {
        let by = |scale: i32| move |w: i16| f32::from(w) / scale as f32;
        let params = lanes(&self.feature_weights)
            .map(by(QA))
            .chain(lanes(&self.feature_biases).map(by(QA)))
            .chain(lanes(&self.output_weights).map(by(QB)))
            .chain(
                self.output_biases
                    .iter()
                    .map(|&b| b as f32 / (QA * QB) as f32),
            )
            .collect();
        FloatNetwork::from_params(self.hidden, self.output_buckets, self.king_buckets, params)
            .expect("a checked network has the parameters of its shape")
    }
}

fn check_buckets(buckets: usize) -> Result<(), String> {
    if OUTPUT_BUCKET_COUNTS.contains(&buckets) {
        Ok(())
    } else {
        Err(format!(
            "{buckets} output buckets: a net has 1, 2, 4 or 8 (piece counts split evenly)"
        ))
    }
}

fn check_hidden(hidden: usize) -> Result<(), String> {
    if (MIN_HIDDEN..=MAX_HIDDEN).contains(&hidden) && hidden.is_multiple_of(HIDDEN_STEP) {
        Ok(())
    } else {
        Err(format!(
            "hidden size {hidden} is not a multiple of {HIDDEN_STEP} in {MIN_HIDDEN}..={MAX_HIDDEN}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::FEATURES;

    fn small_network() -> Network {
        FloatNetwork::random(16, 7).quantize()
    }

    /// A copy of `bytes` with its checksum recomputed, so a test reaches the check after it.
    fn rehashed(mut bytes: Vec<u8>) -> Vec<u8> {
        let body = bytes.len() - 8;
        let checksum = fnv1a64(&bytes[..body]);
        bytes[body..].copy_from_slice(&checksum.to_le_bytes());
        bytes
    }

    fn error_of(bytes: &[u8]) -> String {
        Network::from_bytes(bytes).expect_err("defective file was accepted")
    }

    #[test]
    fn fnv1a64_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn file_round_trip() {
        for hidden in [16, 32, 256] {
            let network = FloatNetwork::random(hidden, hidden as u64).quantize();
            let bytes = network.to_bytes();
            assert_eq!(bytes.len(), file_bytes(hidden, 1, &KingBuckets::NONE));
            assert_eq!(&bytes[..8], b"BSLTNNUE");
            let loaded = Network::from_bytes(&bytes).unwrap();
            assert_eq!(loaded, network);
            assert_eq!(loaded.to_bytes(), bytes);
        }
    }

    #[test]
    fn bucketed_nets_are_version_2_and_round_trip() {
        for buckets in [2, 4, 8] {
            let network = FloatNetwork::random_bucketed(32, buckets, 3).quantize();
            assert_eq!(network.output_buckets(), buckets);
            let bytes = network.to_bytes();
            assert_eq!(bytes.len(), file_bytes(32, buckets, &KingBuckets::NONE));
            let fields: Vec<u32> = (0..6).map(|i| read_u32(&bytes, 8 + 4 * i)).collect();
            assert_eq!(fields, [2, 32, 255, 64, 400, buckets as u32]);
            let loaded = Network::from_bytes(&bytes).unwrap();
            assert_eq!(loaded, network);
            assert_eq!(loaded.to_bytes(), bytes);
        }
        let bytes = FloatNetwork::random_bucketed(32, 4, 3)
            .quantize()
            .to_bytes();
        let with_buckets = |buckets: u32| {
            let mut b = bytes.clone();
            b[HEADER_BYTES..HEADER_BYTES_V2].copy_from_slice(&buckets.to_le_bytes());
            rehashed(b)
        };
        for buckets in [0, 3, 16, u32::MAX] {
            let error = error_of(&with_buckets(buckets));
            assert!(error.contains("output buckets"), "B = {buckets}: {error}");
        }
        assert!(error_of(&with_buckets(1)).contains("such a net is version 1"));
        assert!(error_of(&with_buckets(8)).contains("truncated"));
        assert!(error_of(&with_buckets(2)).contains("trailing"));
        assert!(error_of(&bytes[..HEADER_BYTES + 2]).contains("header of version 2"));
    }

    #[test]
    fn king_bucketed_nets_are_version_3_round_trip_and_are_checked() {
        let m4 = KingBuckets::named("m4").unwrap();
        let network = FloatNetwork::random_with(32, 2, m4, 5).quantize();
        let bytes = network.to_bytes();
        assert_eq!(bytes.len(), file_bytes(32, 2, &m4));
        let fields: Vec<u32> = (0..8).map(|i| read_u32(&bytes, 8 + 4 * i)).collect();
        assert_eq!(fields, [3, 32, 255, 64, 400, 2, 4, 1]);
        assert_eq!(&bytes[HEADER_BYTES_V2 + 8..HEADER_BYTES_V3], m4.table());
        let loaded = Network::from_bytes(&bytes).unwrap();
        assert_eq!(loaded, network);
        assert_eq!(*loaded.king_buckets(), m4);
        assert_eq!(loaded.to_bytes(), bytes);

        let with = |at: usize, patch: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + patch.len()].copy_from_slice(patch);
            rehashed(b)
        };
        let count_at = HEADER_BYTES_V2;
        for count in [0u32, 33, u32::MAX] {
            let error = error_of(&with(count_at, &count.to_le_bytes()));
            assert!(error.contains("king buckets"), "K = {count}: {error}");
        }
        // Fewer buckets than the table names; more than the weights hold.
        assert!(error_of(&with(count_at, &2u32.to_le_bytes())).contains("maps to bucket 2"));
        assert!(error_of(&with(count_at, &5u32.to_le_bytes())).contains("truncated"));
        assert!(error_of(&with(count_at + 4, &2u32.to_le_bytes())).contains("mirroring flag"));
        assert!(error_of(&with(count_at + 8, &[9])).contains("bucket 9"));
        // A version 3 header that describes no king buckets at all.
        let mut plain = with(count_at, &1u32.to_le_bytes());
        plain[count_at + 4..HEADER_BYTES_V3].fill(0);
        assert!(error_of(&rehashed(plain)).contains("such a net is version 2"));
    }

    /// Each perspective uses its own king's bucket and mirrors with it, and the layouts
    /// split the board as documented.
    #[test]
    fn king_bucket_views() {
        use crate::nnue::InputView;
        use shakmaty::{Piece, Square};
        let m4 = KingBuckets::named("m4").unwrap();
        let pawn = Piece::from_char('P').unwrap();
        // White king on g1: bucket 0 (a1/b1 mirrored), board mirrored, so e2 reads as d2.
        let white = m4.view(Color::White, Square::G1);
        assert_eq!(white.index(pawn, Square::E2), Square::D2 as usize);
        // Black king on c8 is on its first rank, c-file: bucket 1, no mirroring; it sees the
        // white pawn on e2 as an enemy pawn on e7.
        let black = m4.view(Color::Black, Square::C8);
        assert_eq!(
            black.index(pawn, Square::E2),
            crate::nnue::FEATURES + 384 + Square::E7 as usize
        );
        let bucket = |color, king| m4.view(color, king).index(pawn, Square::A3) / FEATURES;
        assert_eq!(bucket(Color::White, Square::E2), 2);
        assert_eq!(bucket(Color::Black, Square::E7), 2);
        assert_eq!(bucket(Color::White, Square::H5), 3);
        assert_eq!(bucket(Color::Black, Square::A1), 3);
        assert_eq!(bucket(Color::White, Square::D1), 1);
        assert_eq!(bucket(Color::Black, Square::H8), 0);
        // The layout without buckets is the plain view for every king square.
        for king in Square::ALL {
            for color in Color::ALL {
                assert_eq!(KingBuckets::NONE.view(color, king), InputView::plain(color));
            }
        }
        assert!(KingBuckets::named("m5").is_none());
    }

    /// The bound is the size of a real net of the largest shape, which the loader takes.
    #[test]
    fn the_largest_net_takes_max_file_bytes() {
        for version in 1..=FORMAT_VERSION {
            assert!(header_bytes(version) <= header_bytes(FORMAT_VERSION));
        }
        let mut table = [0u8; 64];
        for (square, bucket) in table.iter_mut().enumerate() {
            *bucket = (square % MAX_KING_BUCKETS) as u8;
        }
        let kings = KingBuckets::new(table, MAX_KING_BUCKETS, true).unwrap();
        let buckets = *OUTPUT_BUCKET_COUNTS.iter().max().unwrap();
        let network = Network::from_parts(
            MAX_HIDDEN,
            kings,
            vec![0; kings.inputs() * MAX_HIDDEN].into(),
            vec![0; MAX_HIDDEN].into(),
            vec![0; buckets * 2 * MAX_HIDDEN].into(),
            vec![0; buckets].into(),
        )
        .unwrap();
        let bytes = network.to_bytes();
        assert_eq!(bytes.len(), MAX_FILE_BYTES);
        assert_eq!(Network::from_bytes(&bytes).unwrap(), network);
    }

    /// A scratch directory for file tests, empty.
    fn scratch_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("basalt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn read_file_reads_only_a_regular_file_within_the_bound() {
        let dir = scratch_dir("read-file");
        let network = small_network();
        let net = dir.join("small.nnue");
        std::fs::write(&net, network.to_bytes()).unwrap();
        assert_eq!(Network::read_file(&net).unwrap(), network);
        let error_of = |path: &Path| Network::read_file(path).expect_err("refused");

        assert!(error_of(&dir.join("missing.nnue")).contains("No such file"));
        assert!(error_of(&dir).contains("a directory, not a regular file"));
        // Larger than any net: refused by its size (the file is sparse, nothing is read).
        let huge = dir.join("huge.nnue");
        File::create(&huge)
            .unwrap()
            .set_len(MAX_FILE_BYTES as u64 + 1)
            .unwrap();
        let error = error_of(&huge);
        assert!(
            error.contains(&format!("{} bytes, more than", MAX_FILE_BYTES + 1)),
            "{error}"
        );
        // Within the bound but not a net: read, and refused as before.
        let mut longer = network.to_bytes();
        longer.push(0);
        std::fs::write(&huge, longer).unwrap();
        assert!(error_of(&huge).contains("trailing"));

        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            assert!(error_of(Path::new("/dev/zero")).contains("a character device"));
            let fifo = dir.join("fifo.nnue");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", fifo.display());
            assert!(error_of(&fifo).contains("a FIFO, not a regular file"));
            // A symlink is followed: to a net it reads the net, to a FIFO it is refused.
            let link = dir.join("link.nnue");
            symlink(&net, &link).unwrap();
            assert_eq!(Network::read_file(&link).unwrap(), network);
            std::fs::remove_file(&link).unwrap();
            symlink(&fifo, &link).unwrap();
            assert!(error_of(&link).contains("a FIFO"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn header_layout() {
        let bytes = small_network().to_bytes();
        let fields: Vec<u32> = (0..5).map(|i| read_u32(&bytes, 8 + 4 * i)).collect();
        assert_eq!(fields, [1, 16, 255, 64, 400]);
    }

    #[test]
    fn every_truncation_is_rejected() {
        let bytes = small_network().to_bytes();
        for len in (0..bytes.len()).step_by(97).chain([bytes.len() - 1]) {
            let error = error_of(&bytes[..len]);
            assert!(
                error.contains("bytes"),
                "{len} bytes gave '{error}', which does not mention the size"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(error_of(&longer).contains("trailing"));
    }

    #[test]
    fn bad_magic_version_and_constants_are_rejected() {
        let bytes = small_network().to_bytes();
        let with = |at: usize, patch: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + patch.len()].copy_from_slice(patch);
            rehashed(b)
        };
        assert!(error_of(&with(0, b"BSLTNNUF")).contains("magic"));
        assert!(error_of(&with(8, &4u32.to_le_bytes())).contains("format version 4"));
        assert!(error_of(&with(8, &0u32.to_le_bytes())).contains("format version 0"));
        assert!(error_of(&with(16, &256u32.to_le_bytes())).contains("QA is 256"));
        assert!(error_of(&with(20, &128u32.to_le_bytes())).contains("QB is 128"));
        assert!(error_of(&with(24, &100u32.to_le_bytes())).contains("EVAL_SCALE is 100"));
        for hidden in [0u32, 8, 24, 4096, u32::MAX] {
            let error = error_of(&with(12, &hidden.to_le_bytes()));
            assert!(error.contains("hidden size"), "H = {hidden}: {error}");
        }
        // H = 32 is a valid size, but not for a file written with H = 16.
        assert!(error_of(&with(12, &32u32.to_le_bytes())).contains("truncated"));
    }

    #[test]
    fn a_flipped_bit_fails_the_checksum() {
        let bytes = small_network().to_bytes();
        for at in [
            HEADER_BYTES,
            bytes.len() / 2,
            bytes.len() - 9,
            bytes.len() - 1,
        ] {
            let mut corrupt = bytes.clone();
            corrupt[at] ^= 0x10;
            assert!(error_of(&corrupt).contains("checksum"), "byte {at}");
        }
    }

    #[test]
    fn out_of_range_weights_are_rejected() {
        let network = small_network();
        let bytes = network.to_bytes();
        let hidden = network.hidden_size();
        let patched = |at: usize, value: i16| {
            let mut b = bytes.clone();
            b[at..at + 2].copy_from_slice(&value.to_le_bytes());
            rehashed(b)
        };
        let output_weights = HEADER_BYTES + 2 * (FEATURES * hidden + hidden);
        assert!(error_of(&patched(output_weights + 6, 128)).contains("output weight 3 is 128"));
        assert!(error_of(&patched(output_weights, -200)).contains("output weight 0"));
        // The limits themselves are accepted.
        assert!(Network::from_bytes(&patched(output_weights, -127)).is_ok());
        assert!(Network::from_bytes(&patched(HEADER_BYTES, 505)).is_ok());
        let error = error_of(&patched(HEADER_BYTES + 2 * (hidden + 1), 506));
        assert!(error.contains("feature 1, neuron 1"), "{error}");
        let biases = HEADER_BYTES + 2 * FEATURES * hidden;
        assert!(error_of(&patched(biases, i16::MIN)).contains("feature bias 0"));
    }

    #[test]
    fn arbitrary_bytes_are_refused_without_panicking() {
        let bytes = small_network().to_bytes();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let len = (state >> 33) as usize % 64;
            let junk: Vec<u8> = (0..len).map(|i| (state >> (i % 56)) as u8).collect();
            let error = error_of(&junk);
            if len < HEADER_BYTES {
                assert!(error.contains("shorter than"), "{len} bytes: {error}");
            } else {
                assert!(error.contains("bad magic"), "{len} bytes: {error}");
            }
            // A valid header with a short body of junk: refused (for its size, or for the
            // fields of a later version that the junk fills), and never read past its end.
            let mut header_only = bytes[..HEADER_BYTES].to_vec();
            header_only.extend_from_slice(&junk);
            assert!(
                Network::from_bytes(&header_only).is_err(),
                "header and {len} bytes of junk accepted"
            );
        }
    }

    #[test]
    fn checksum_identifies_the_weights() {
        let a = FloatNetwork::random(16, 1).quantize();
        let b = FloatNetwork::random(16, 2).quantize();
        assert_ne!(a.checksum(), b.checksum());
        assert_eq!(
            Network::from_bytes(&a.to_bytes()).unwrap().checksum(),
            a.checksum()
        );
    }

    #[test]
    fn extreme_weights_do_not_overflow() {
        // Every output weight at the bound and every accumulator saturated: 2H terms of
        // 255 * 127 * 255 exceed an i32 for H >= 130, so this checks the i64 block sums.
        let hidden = 256;
        let network = Network::from_parts(
            hidden,
            KingBuckets::NONE,
            vec![MAX_FEATURE_WEIGHT; FEATURES * hidden].into(),
            vec![MAX_FEATURE_BIAS; hidden].into(),
            vec![MAX_OUTPUT_WEIGHT; 2 * hidden].into(),
            vec![0].into(),
        )
        .unwrap();
        let sum = 2 * hidden as i64 * i64::from(MAX_OUTPUT_WEIGHT) * i64::from(QA * QA);
        assert!(sum > i64::from(i32::MAX));
        for level in Simd::available() {
            let network = network.clone().with_simd(level);
            assert_eq!(network.evaluate_from_scratch(&Chess::default()), EVAL_LIMIT);
        }
    }
}
