//! The command lines of `basalt datagen`, `basalt convert-data`, `basalt tune`,
//! `basalt train` and `basalt spsa-inputs` (clap argument structs, one per subcommand of the
//! binary's `Tool`) and what each runs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::nnue::{KingBuckets, KING_BUCKET_LAYOUTS};
use crate::offline::{datagen, openbench, texel, train};
use crate::position::Position;
use crate::syzygy::{self, Tablebases};

/// `--format` of `basalt datagen`.
#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// 32-byte records of the quiet positions.
    Records,
    /// Whole games, about 5 bytes a quiet position (`basalt train` reads both).
    Games,
}

/// `--node-limit` of `basalt datagen`.
#[derive(Clone, Copy, ValueEnum)]
pub enum NodeLimitArg {
    /// Finish the iteration in which --nodes runs out (cut at 8 times --nodes).
    Soft,
    /// Stop at --nodes in the middle of an iteration (datagen before issue 49).
    Hard,
}

/// `basalt datagen`.
#[derive(Args)]
pub struct DatagenArgs {
    /// Output file; `<out>.progress` beside it tracks the run.
    #[arg(long)]
    pub out: PathBuf,
    /// What the file holds; a resumed run must give the file's format.
    #[arg(long, value_enum, default_value_t = FormatArg::Games)]
    pub format: FormatArg,
    /// Stop when the file holds this many games.
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop when the file holds this many positions.
    #[arg(long)]
    pub positions: Option<u64>,
    /// The same seed gives the same games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at once (one search thread each).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Node budget per move. The default, a soft limit, costs about what 5000 nodes did as
    /// a hard limit (docs/datagen.md).
    #[arg(long, default_value_t = datagen::DEFAULT_NODES)]
    pub nodes: u64,
    /// How a move's search keeps to --nodes.
    #[arg(long, value_enum, default_value_t = NodeLimitArg::Soft)]
    pub node_limit: NodeLimitArg,
    /// Opening positions (EPD or FEN lines); default: the start position.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Fewest random plies played after the book position (or the start position).
    #[arg(long, default_value_t = datagen::opening::DEFAULT_RANDOM_PLIES.0)]
    pub random_plies_min: u32,
    /// Most random plies played after the book position (or the start position).
    #[arg(long, default_value_t = datagen::opening::DEFAULT_RANDOM_PLIES.1)]
    pub random_plies_max: u32,
    /// Node budget of the search that verifies an opening [default: --nodes].
    #[arg(long)]
    pub verify_nodes: Option<u64>,
    /// Draw the opening again when the verification search scores it beyond this many
    /// centipawns either way.
    #[arg(long, default_value_t = datagen::opening::DEFAULT_MAX_OPENING_SCORE)]
    pub opening_max_score: i32,
    /// Syzygy table directories (colon-separated): a game ends with the tables' result
    /// (fifty-move rule applied) once its position is in them.
    #[arg(long)]
    pub syzygy: Option<String>,
    /// Play with the hand-crafted evaluation (as the first generation did).
    #[arg(long, conflicts_with = "eval_file")]
    pub hce: bool,
    /// Play with this net instead of the embedded one.
    #[arg(long)]
    pub eval_file: Option<PathBuf>,
}

impl DatagenArgs {
    pub fn run(self) -> ExitCode {
        if self.games.is_none() && self.positions.is_none() {
            eprintln!("datagen: give --games or --positions");
            return ExitCode::FAILURE;
        }
        let book = match self.book.as_deref().map(datagen::read_book).transpose() {
            Ok(book) => book.unwrap_or_default(),
            Err(e) => {
                eprintln!("datagen: cannot read the book: {e}");
                return ExitCode::FAILURE;
            }
        };
        if self.book.is_some()
            && !book
                .iter()
                .any(|fen| Position::from_fen(fen, false).is_ok())
        {
            eprintln!("datagen: the book holds no readable position");
            return ExitCode::FAILURE;
        }
        let tablebases = match self.syzygy.as_deref().map(syzygy::load).transpose() {
            Ok(tables) => {
                if let Some(t) = &tables {
                    eprintln!(
                        "datagen: {} Syzygy files, games end in positions of up to {} pieces",
                        t.files, t.max_pieces
                    );
                }
                Tablebases::new(
                    tables.as_ref(),
                    syzygy::MAX_TB_PIECES,
                    syzygy::DEFAULT_PROBE_DEPTH,
                    true,
                )
            }
            Err(e) => {
                // The loader words its errors for the UCI option.
                let e = e.trim_start_matches("SyzygyPath: ");
                eprintln!(
                    "datagen: --syzygy: {}",
                    e.trim_end_matches("; tablebases off")
                );
                return ExitCode::FAILURE;
            }
        };
        let network = match (self.hce, self.eval_file) {
            (true, _) => None,
            (false, None) => Some(crate::nnue::embedded()),
            (false, Some(path)) => match crate::nnue::Network::read_file(&path) {
                Ok(network) => Some(Arc::new(network)),
                Err(e) => {
                    eprintln!("datagen: {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            },
        };
        let config = datagen::Config {
            out: self.out,
            network,
            games: self.games,
            positions: self.positions,
            seed: self.seed,
            threads: self.threads,
            nodes: self.nodes.max(1),
            node_limit: match self.node_limit {
                NodeLimitArg::Soft => datagen::NodeLimit::Soft,
                NodeLimitArg::Hard => datagen::NodeLimit::Hard,
            },
            verify_nodes: self.verify_nodes.unwrap_or(self.nodes).max(1),
            opening_max_score: self.opening_max_score,
            book,
            random_plies: (self.random_plies_min, self.random_plies_max),
            tablebases,
            format: match self.format {
                FormatArg::Records => datagen::Format::Records,
                FormatArg::Games => datagen::Format::Games,
            },
            verbose: true,
        };
        match datagen::run(&config) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("datagen: {e}");
                ExitCode::FAILURE
            }
        }
    }
}

/// `basalt convert-data`.
#[derive(Args)]
pub struct ConvertArgs {
    /// A file of 32-byte records or a games file (told apart by the games file's magic).
    #[arg(long = "in", required_unless_present = "from_pgn")]
    pub input: Option<PathBuf>,
    /// The converted file (games from records, records from games, a chunk from PGNs); must
    /// not exist.
    #[arg(long)]
    pub out: PathBuf,
    /// From a games file: every searched position, not only the quiet ones the record
    /// format keeps.
    #[arg(long)]
    pub all: bool,
    /// Pack a games file (or a chunk) into a chunk of `data/`: the packed encoding,
    /// compressed with zstd (docs/datagen.md, "Chunks").
    #[arg(long, conflicts_with = "all")]
    pub pack: bool,
    /// PGN files whose moves carry `{score/depth}` comments (an OpenBench DATAGEN
    /// workload's, fastchess's or cutechess's) into one chunk of `data/`
    /// (docs/openbench.md).
    #[arg(long, num_args = 1.., conflicts_with_all = ["input", "all", "pack"])]
    pub from_pgn: Vec<PathBuf>,
}

impl ConvertArgs {
    pub fn run(self) -> ExitCode {
        if !self.from_pgn.is_empty() {
            return self.convert_pgn();
        }
        let Some(input) = self.input.as_deref() else {
            eprintln!("convert-data: give --in or --from-pgn");
            return ExitCode::from(2);
        };
        if self.pack {
            return self.pack(input);
        }
        let selection = if self.all {
            datagen::games::Selection::All
        } else {
            datagen::games::Selection::Quiet
        };
        match datagen::convert::convert(input, &self.out, selection) {
            Ok(c) => {
                let (games_bytes, what) = if c.to_games {
                    (c.bytes_out, "records to games")
                } else {
                    (c.bytes_in, "games to records")
                };
                println!(
                    "convert-data: {what}: {} games, {} plies, {} records; {} bytes in, {} \
                     out; the games file: {:.2} bytes a record, {:.2} a ply",
                    c.games,
                    c.plies,
                    c.records,
                    c.bytes_in,
                    c.bytes_out,
                    games_bytes as f64 / c.records.max(1) as f64,
                    games_bytes as f64 / c.plies.max(1) as f64
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("convert-data: {e}");
                ExitCode::FAILURE
            }
        }
    }

    fn convert_pgn(&self) -> ExitCode {
        match datagen::convert::from_pgn(&self.from_pgn, &self.out) {
            Ok(c) => {
                let skipped: Vec<String> = c
                    .skipped
                    .iter()
                    .map(|(reason, count)| format!("{count} {reason}"))
                    .collect();
                println!(
                    "convert-data: from PGN: {} games read, {} kept{}; {} plies, {} \
                     positions; {} bytes, {:.3} bytes a position",
                    c.seen,
                    c.packed.games,
                    if skipped.is_empty() {
                        String::new()
                    } else {
                        format!(" (skipped: {})", skipped.join(", "))
                    },
                    c.packed.plies,
                    c.packed.positions,
                    c.packed.chunk.len(),
                    c.packed.chunk.len() as f64 / c.packed.positions.max(1) as f64
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("convert-data: {e}");
                ExitCode::FAILURE
            }
        }
    }
}

impl ConvertArgs {
    fn pack(&self, input: &Path) -> ExitCode {
        match datagen::convert::pack(input, &self.out) {
            Ok(p) => {
                println!(
                    "convert-data: packed: {} games, {} plies, {} positions; {} bytes \
                     ({} before compression), {:.3} bytes a position",
                    p.games,
                    p.plies,
                    p.positions,
                    p.chunk.len(),
                    p.unpacked_bytes,
                    p.chunk.len() as f64 / p.positions.max(1) as f64
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("convert-data: {e}");
                ExitCode::FAILURE
            }
        }
    }
}

/// `basalt tune`: the Texel tuner.
#[derive(Args)]
pub struct TexelArgs {
    /// Labelled positions, e.g. ../shared/data/tuning/texel_positions.txt.
    #[arg(long)]
    pub data: PathBuf,
    /// Where to write the tuned weights (Rust source).
    #[arg(long, default_value = "src/eval/weights.rs")]
    pub out: PathBuf,
    /// Adam epochs over the full training set.
    #[arg(long, default_value_t = 2000)]
    pub epochs: usize,
    /// Adam step size, in centipawns.
    #[arg(long, default_value_t = 1.0)]
    pub learning_rate: f64,
    /// Share of the positions (the file's tail) held back for validation.
    #[arg(long, default_value_t = 0.1)]
    pub validation: f64,
    /// Replace each position by the end of its capture sequence (qsearch PV).
    #[arg(long)]
    pub quiet: bool,
    /// Use only the first N lines.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// L2 penalty weight pulling each weight toward its starting value.
    #[arg(long, default_value_t = 0.0)]
    pub regularization: f64,
    /// Weight blocks to keep as they are, e.g. `MATERIAL:mg,PST:mg,MOBILITY_*:mg`.
    #[arg(long, default_value = "")]
    pub freeze: String,
}

impl TexelArgs {
    pub fn run(self) -> ExitCode {
        let frozen = match texel::frozen_weights(&self.freeze) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("--freeze: {e}");
                return ExitCode::from(2);
            }
        };
        let settings = texel::TexelSettings {
            epochs: self.epochs,
            learning_rate: self.learning_rate,
            threads: self.threads.max(1),
            regularization: self.regularization,
            frozen,
        };
        run_tune(
            &self.data,
            &self.out,
            self.validation,
            self.quiet,
            self.limit,
            &settings,
        )
    }
}

fn run_tune(
    data_path: &Path,
    out: &Path,
    validation_share: f64,
    quiet: bool,
    limit: Option<usize>,
    settings: &texel::TexelSettings,
) -> ExitCode {
    let started = Instant::now();
    let (data, skipped) = match texel::load(data_path, quiet, limit, settings.threads) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("cannot read {}: {e}", data_path.display());
            return ExitCode::from(2);
        }
    };
    let total = data.len();
    let (train, validation) = data.split(validation_share.clamp(0.0, 0.9));
    println!(
        "loaded {total} positions ({skipped} skipped{}) in {:.0} s: {} training, {} validation",
        if quiet {
            ", in check or unparsable"
        } else {
            ", unparsable"
        },
        started.elapsed().as_secs_f64(),
        train.len(),
        validation.len()
    );
    let start = texel::current_weights();
    let k = texel::fit_k(&train, &start, settings.threads);
    let error = |set: &texel::Dataset, w: &[f64]| texel::error(set, w, k, settings.threads);
    let (train_before, validation_before) = (error(&train, &start), error(&validation, &start));
    println!("K = {k:.4}; before: train {train_before:.7}, validation {validation_before:.7}");
    let tuned = texel::adam(&train, &validation, start, k, settings, &mut |line| {
        println!("{line}")
    });
    let scores = texel::to_scores(&tuned);
    let rounded: Vec<f64> = scores
        .iter()
        .flat_map(|s| [s.mg as f64, s.eg as f64])
        .collect();
    let (train_after, validation_after) = (error(&train, &rounded), error(&validation, &rounded));
    println!("after (rounded): train {train_after:.7}, validation {validation_after:.7}");
    let command: Vec<String> = std::env::args().collect();
    let header = vec![
        format!("Produced by: `{}`", command.join(" ")),
        format!(
            "Data: {} ({total} positions, {skipped} skipped{}; {} training, {} validation)",
            data_path
                .file_name()
                .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
            if quiet {
                ", resolved to quiet positions"
            } else {
                ""
            },
            train.len(),
            validation.len()
        ),
        format!(
            "K = {k:.4}; mean squared error before -> after: training {train_before:.6} -> \
             {train_after:.6}, validation {validation_before:.6} -> {validation_after:.6}"
        ),
    ];
    match texel::write_weights(out, &scores, &header) {
        Ok(()) => {
            println!("wrote {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write {}: {e}", out.display());
            ExitCode::from(2)
        }
    }
}

/// `basalt train`.
#[derive(Args)]
pub struct TrainArgs {
    /// Record files (32 bytes a record) or games files (`datagen --format games`, their
    /// quiet positions): several after one flag, the flag repeated, or comma-separated.
    #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
    pub data: Vec<PathBuf>,
    /// Quantized net, rewritten after every epoch, e.g. nets/first.nnue.
    #[arg(long)]
    pub out: PathBuf,
    /// Float state with Adam moments, rewritten after every epoch [default: OUT.ckpt].
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Continue from the checkpoint (same data, --seed and --hidden).
    #[arg(long)]
    pub resume: bool,
    /// Start from this net's weights instead of random ones (fresh optimizer state, any
    /// data); --hidden must match it.
    #[arg(long, conflicts_with = "resume")]
    pub init: Option<PathBuf>,
    /// Accumulator neurons per perspective.
    #[arg(long, default_value_t = 256)]
    pub hidden: usize,
    /// Output buckets chosen by piece count: 1, 2, 4 or 8. With --init from a net of one
    /// bucket, every bucket starts as a copy of it.
    #[arg(long, default_value_t = 1)]
    pub output_buckets: usize,
    /// Input weight sets chosen by the king's square: none, mirror (one set, the board
    /// mirrored when the king is on files e-h) or m4 (mirrored, four sets by king
    /// square). With --init from a net without them, every set starts as a copy of its
    /// weights.
    #[arg(long, default_value = "none", value_parser = parse_king_buckets)]
    pub king_buckets: KingBuckets,
    /// Train the king buckets' input rows as a part all buckets share plus each bucket's
    /// own, so every position teaches every bucket (the net file holds the sums). Needs a
    /// layout of more than one set.
    #[arg(long)]
    pub factorise: bool,
    /// Total passes over the training split, including those a resumed run has done.
    #[arg(long, default_value_t = 20)]
    pub epochs: u32,
    /// Positions per Adam step.
    #[arg(long, default_value_t = 16384)]
    pub batch: usize,
    /// Adam learning rate at the start.
    #[arg(long, default_value_t = 0.001)]
    pub lr: f32,
    /// Multiply the learning rate by --lr-gamma every this many epochs (0: never).
    #[arg(long, default_value_t = 8)]
    pub lr_drop_every: u32,
    /// Factor of each learning-rate drop.
    #[arg(long, default_value_t = 0.3)]
    pub lr_gamma: f32,
    /// The learning rate's course: step (--lr-drop-every, --lr-gamma, per epoch) or cosine
    /// (batch by batch from --lr down to --lr * --lr-floor at the end of the run).
    #[arg(long, value_enum, default_value_t = LrScheduleArg::Step)]
    pub lr_schedule: LrScheduleArg,
    /// Cosine's last learning rate as a share of --lr.
    #[arg(long, default_value_t = 0.01)]
    pub lr_floor: f32,
    /// Batches over which the learning rate rises linearly from 0 to its schedule.
    #[arg(long, default_value_t = 0)]
    pub warmup_batches: u64,
    /// AdamW's decoupled weight decay: every step also shrinks each parameter by
    /// lr * this of itself (0: Adam).
    #[arg(long, default_value_t = 0.0)]
    pub weight_decay: f32,
    /// Leave out training positions before this ply of their game (0 is the start).
    #[arg(long, default_value_t = 0)]
    pub min_ply: u32,
    /// Leave out training positions whose |score| is above this many centipawns.
    #[arg(long)]
    pub max_score: Option<i32>,
    /// Whole data files held out as a fixed validation set (instead of the data's tail,
    /// --validation-fraction), read without the position filters; a file also given to
    /// --data is not trained on.
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub validation_data: Vec<PathBuf>,
    /// Keep the loaded training records in this file, and read them back from it when a
    /// later run names the same --data files (same sizes and times) and filters.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Weight of the game result in the target; the rest is the search score.
    #[arg(long, default_value_t = 0.25)]
    pub wdl: f32,
    /// The sigmoid scale (cp) that turns scores into expected results for the target: the
    /// score whose expected result is 1 / (1 + e^-1), about 0.73. The net's own scale by
    /// default; a scale fitted to the data keeps a blended target from inflating scores.
    #[arg(long, default_value_t = crate::nnue::EVAL_SCALE as f32)]
    pub target_scale: f32,
    /// Also train on every training position mirrored left to right (files a-h swapped),
    /// which has the same value: twice the positions from the same games.
    #[arg(long)]
    pub mirror: bool,
    /// Threads sharing each batch (and the Adam step).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Share of the records held back for validation: the data's tail (whole games).
    #[arg(long, default_value_t = 0.02)]
    pub validation_fraction: f64,
    /// Fixes the initial weights and every epoch's order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl TrainArgs {
    pub fn run(self) -> ExitCode {
        if !(self.target_scale.is_finite() && self.target_scale > 0.0) {
            eprintln!(
                "train: --target-scale {}: give a positive number of centipawns",
                self.target_scale
            );
            return ExitCode::FAILURE;
        }
        let checkpoint = self.checkpoint.unwrap_or_else(|| {
            let mut path = self.out.clone().into_os_string();
            path.push(".ckpt");
            path.into()
        });
        let settings = train::TrainSettings {
            data: self.data,
            out: self.out,
            checkpoint,
            resume: self.resume,
            init: self.init,
            hidden: self.hidden,
            output_buckets: self.output_buckets,
            king_buckets: self.king_buckets,
            factorise: self.factorise,
            epochs: self.epochs,
            batch_size: self.batch,
            learning_rate: self.lr,
            lr_drop_every: self.lr_drop_every,
            lr_gamma: self.lr_gamma,
            lr_schedule: match self.lr_schedule {
                LrScheduleArg::Step => train::LrSchedule::Step,
                LrScheduleArg::Cosine => train::LrSchedule::Cosine,
            },
            lr_floor: self.lr_floor,
            warmup_batches: self.warmup_batches,
            weight_decay: self.weight_decay.max(0.0),
            filter: train::data::Filter {
                min_ply: self.min_ply,
                max_score: self.max_score,
            },
            validation_data: self.validation_data,
            cache: self.cache,
            target: train::data::Target {
                wdl: self.wdl.clamp(0.0, 1.0),
                scale: self.target_scale,
            },
            mirror: self.mirror,
            threads: self.threads,
            validation_fraction: self.validation_fraction,
            seed: self.seed,
        };
        match train::run(&settings, &mut |line| println!("{line}")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        }
    }
}

/// `--lr-schedule`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LrScheduleArg {
    Step,
    Cosine,
}

/// `--king-buckets NAME`: one of `nnue::KING_BUCKET_LAYOUTS`.
fn parse_king_buckets(name: &str) -> Result<KingBuckets, String> {
    KingBuckets::named(name).ok_or_else(|| {
        let known: Vec<String> = KING_BUCKET_LAYOUTS
            .iter()
            .map(|(name, what)| format!("{name} ({what})"))
            .collect();
        format!("unknown layout; known: {}", known.join(", "))
    })
}

/// `basalt spsa-inputs`.
#[derive(Args)]
pub struct SpsaInputsArgs {
    /// Only these parameters (names as in src/search/params.rs and src/time.rs), e.g.
    /// `--only LMP_BASE,RFP_MARGIN_PER_DEPTH`; default: every one.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// c_end, the last perturbation, as a share of each parameter's range (at least 0.5).
    #[arg(long, default_value_t = 0.05)]
    pub c_share: f64,
    /// r_end, OpenBench's last step relative to c_end.
    #[arg(long, default_value_t = 0.002)]
    pub r_end: f64,
}

impl SpsaInputsArgs {
    pub fn run(self) -> ExitCode {
        if !(self.c_share > 0.0 && self.r_end > 0.0) {
            eprintln!("spsa-inputs: --c-share and --r-end must be above 0");
            return ExitCode::from(2);
        }
        match openbench::spsa_inputs(&self.only, self.c_share, self.r_end) {
            Ok(lines) => {
                for line in lines {
                    println!("{line}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("spsa-inputs: {e}");
                ExitCode::from(2)
            }
        }
    }
}
