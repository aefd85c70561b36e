//! Command line: no subcommand runs the UCI loop; `bench`, `perft`, `tune` and `train` are
//! tools.

use std::process::ExitCode;

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Parser, Subcommand};

use basalt::bench;
use basalt::offline::datagen;
use basalt::offline::texel;
use basalt::offline::train;
use basalt::perft;
use basalt::position::Position;

#[derive(Parser)]
#[command(name = "basalt", version, about = "Basalt, a UCI chess engine")]
struct Cli {
    #[command(subcommand)]
    command: Option<Tool>,
}

#[derive(Subcommand)]
enum Tool {
    /// Self-play games at a fixed node budget, written as NNUE training records
    /// (docs/datagen.md). Appending to an existing file resumes the run.
    Datagen {
        /// Output file (records); `<out>.progress` beside it tracks the run.
        #[arg(long)]
        out: PathBuf,
        /// Stop when the file holds this many games.
        #[arg(long)]
        games: Option<u64>,
        /// Stop when the file holds this many positions.
        #[arg(long)]
        positions: Option<u64>,
        /// The same seed gives the same games.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Games played at once (one search thread each).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Node budget per move.
        #[arg(long, default_value_t = 5000)]
        nodes: u64,
        /// Opening positions (EPD or FEN lines); default: the start position.
        #[arg(long)]
        book: Option<PathBuf>,
        /// Fewest random plies played after the book position.
        #[arg(long, default_value_t = 8)]
        random_plies_min: u32,
        /// Most random plies played after the book position.
        #[arg(long, default_value_t = 10)]
        random_plies_max: u32,
        /// Play with the hand-crafted evaluation (as the first generation did).
        #[arg(long, conflicts_with = "eval_file")]
        hce: bool,
        /// Play with this net instead of the embedded one.
        #[arg(long)]
        eval_file: Option<PathBuf>,
    },
    /// Fixed-depth search over the built-in positions; last line `<nodes> nodes <nps> nps`.
    Bench {
        /// Search depth for every position.
        #[arg(long, default_value_t = bench::DEFAULT_BENCH_DEPTH)]
        depth: i32,
        /// Also print search statistics (cutoff rates, branching factor, TT hits).
        #[arg(long)]
        stats: bool,
        /// Evaluate with the hand-crafted evaluation instead of the embedded net.
        #[arg(long)]
        hce: bool,
        /// The embedded net evaluates (the default; kept for older scripts).
        #[arg(long, hide = true, conflicts_with = "hce")]
        nnue: bool,
        /// Accepted for OpenBench-style invocations (`basalt bench 13`).
        #[arg(hide = true)]
        positional_depth: Option<i32>,
    },
    /// Count leaf nodes of the legal move tree (divide output), or check an EPD suite.
    Perft {
        /// Depth for a single position.
        depth: Option<u32>,
        /// Position to count (default: the start position).
        #[arg(long)]
        fen: Option<String>,
        /// EPD perft suite (`FEN ;D1 20 ;D2 400 ...`) to check instead.
        #[arg(long)]
        suite: Option<String>,
        /// With --suite: skip counts deeper than this.
        #[arg(long, default_value_t = 6)]
        max_depth: u32,
    },
    /// Texel-tune the evaluation weights on labelled positions (`FEN | result` lines).
    Tune {
        /// Labelled positions, e.g. ../shared/data/tuning/texel_positions.txt.
        #[arg(long)]
        data: PathBuf,
        /// Where to write the tuned weights (Rust source).
        #[arg(long, default_value = "src/eval/weights.rs")]
        out: PathBuf,
        /// Adam epochs over the full training set.
        #[arg(long, default_value_t = 2000)]
        epochs: usize,
        /// Adam step size, in centipawns.
        #[arg(long, default_value_t = 1.0)]
        learning_rate: f64,
        /// Share of the positions (the file's tail) held back for validation.
        #[arg(long, default_value_t = 0.1)]
        validation: f64,
        /// Replace each position by the end of its capture sequence (qsearch PV).
        #[arg(long)]
        quiet: bool,
        /// Use only the first N lines.
        #[arg(long)]
        limit: Option<usize>,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// L2 penalty weight pulling each weight toward its starting value.
        #[arg(long, default_value_t = 0.0)]
        regularization: f64,
        /// Weight blocks to keep as they are, e.g. `MATERIAL:mg,PST:mg,MOBILITY_*:mg`.
        #[arg(long, default_value = "")]
        freeze: String,
    },
    /// Train the NNUE on `basalt datagen` records (CPU); see docs/training.md.
    Train {
        /// Record files (32 bytes a record): several after one flag, the flag repeated, or
        /// comma-separated.
        #[arg(long, required = true, num_args = 1.., value_delimiter = ',')]
        data: Vec<PathBuf>,
        /// Quantized net, rewritten after every epoch, e.g. nets/first.nnue.
        #[arg(long)]
        out: PathBuf,
        /// Float state with Adam moments, rewritten after every epoch [default: OUT.ckpt].
        #[arg(long)]
        checkpoint: Option<PathBuf>,
        /// Continue from the checkpoint (same data, --seed and --hidden).
        #[arg(long)]
        resume: bool,
        /// Start from this net's weights instead of random ones (fresh optimizer state, any
        /// data); --hidden must match it.
        #[arg(long, conflicts_with = "resume")]
        init: Option<PathBuf>,
        /// Accumulator neurons per perspective.
        #[arg(long, default_value_t = 256)]
        hidden: usize,
        /// Output buckets chosen by piece count: 1, 2, 4 or 8. With --init from a net of one
        /// bucket, every bucket starts as a copy of it.
        #[arg(long, default_value_t = 1)]
        output_buckets: usize,
        /// Input weight sets chosen by the king's square: none, mirror (one set, the board
        /// mirrored when the king is on files e-h) or m4 (mirrored, four sets by king
        /// square). With --init from a net without them, every set starts as a copy of its
        /// weights.
        #[arg(long, default_value = "none", value_parser = parse_king_buckets)]
        king_buckets: basalt::nnue::KingBuckets,
        /// Total passes over the training split, including those a resumed run has done.
        #[arg(long, default_value_t = 20)]
        epochs: u32,
        /// Positions per Adam step.
        #[arg(long, default_value_t = 16384)]
        batch: usize,
        /// Adam learning rate at the start.
        #[arg(long, default_value_t = 0.001)]
        lr: f32,
        /// Multiply the learning rate by --lr-gamma every this many epochs (0: never).
        #[arg(long, default_value_t = 8)]
        lr_drop_every: u32,
        /// Factor of each learning-rate drop.
        #[arg(long, default_value_t = 0.3)]
        lr_gamma: f32,
        /// Weight of the game result in the target; the rest is the search score.
        #[arg(long, default_value_t = 0.25)]
        wdl: f32,
        /// Also train on every training position mirrored left to right (files a-h swapped),
        /// which has the same value: twice the positions from the same games.
        #[arg(long)]
        mirror: bool,
        /// Threads sharing each batch (and the Adam step).
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Share of the records held back for validation: the data's tail (whole games).
        #[arg(long, default_value_t = 0.02)]
        validation_fraction: f64,
        /// Fixes the initial weights and every epoch's order.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => {
            basalt::uci::run_stdio();
            ExitCode::SUCCESS
        }
        Some(Tool::Bench {
            depth,
            stats,
            hce,
            nnue: _,
            positional_depth,
        }) => {
            let depth = positional_depth.unwrap_or(depth).clamp(1, 30);
            let network = (!hce).then(basalt::nnue::embedded);
            let report = bench::run(depth, network, &mut |line| println!("{line}"));
            if stats {
                let s = &report.stats;
                println!(
                    "stats: first-move cutoffs {:.1}%  tt hit rate {:.1}%  qsearch nodes {:.1}%  avg branching factor (depth 8+) {}",
                    100.0 * s.first_move_cutoff_rate(),
                    100.0 * s.tt_hit_rate(),
                    100.0 * s.qsearch_share(),
                    bench::average_branching_factor(s, 8)
                        .map_or("n/a".to_string(), |b| format!("{b:.2}"))
                );
            }
            println!("{} nodes {} nps", report.nodes, report.nps);
            ExitCode::SUCCESS
        }
        Some(Tool::Datagen {
            out,
            games,
            positions,
            seed,
            threads,
            nodes,
            book,
            random_plies_min,
            random_plies_max,
            hce,
            eval_file,
        }) => {
            if games.is_none() && positions.is_none() {
                eprintln!("datagen: give --games or --positions");
                return ExitCode::FAILURE;
            }
            let book = match book.as_deref().map(datagen::read_book).transpose() {
                Ok(book) => book.unwrap_or_default(),
                Err(e) => {
                    eprintln!("datagen: cannot read the book: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let network = match (hce, eval_file) {
                (true, _) => None,
                (false, None) => Some(basalt::nnue::embedded()),
                (false, Some(path)) => match std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| basalt::nnue::Network::from_bytes(&bytes))
                {
                    Ok(network) => Some(std::sync::Arc::new(network)),
                    Err(e) => {
                        eprintln!("datagen: {}: {e}", path.display());
                        return ExitCode::FAILURE;
                    }
                },
            };
            let config = datagen::Config {
                out,
                network,
                games,
                positions,
                seed,
                threads,
                nodes: nodes.max(1),
                book,
                random_plies: (random_plies_min, random_plies_max),
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
        Some(Tool::Perft {
            depth,
            fen,
            suite,
            max_depth,
        }) => match suite {
            Some(path) => run_suite(&path, max_depth),
            None => run_divide(depth.unwrap_or(5), fen.as_deref()),
        },
        Some(Tool::Tune {
            data,
            out,
            epochs,
            learning_rate,
            validation,
            quiet,
            limit,
            threads,
            regularization,
            freeze,
        }) => {
            let frozen = match texel::frozen_weights(&freeze) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("--freeze: {e}");
                    return ExitCode::from(2);
                }
            };
            let settings = texel::Settings {
                epochs,
                learning_rate,
                threads: threads.max(1),
                regularization,
                frozen,
            };
            run_tune(&data, &out, validation, quiet, limit, &settings)
        }
        Some(Tool::Train {
            data,
            out,
            checkpoint,
            resume,
            init,
            hidden,
            output_buckets,
            king_buckets,
            epochs,
            batch,
            lr,
            lr_drop_every,
            lr_gamma,
            wdl,
            mirror,
            threads,
            validation_fraction,
            seed,
        }) => {
            let checkpoint = checkpoint.unwrap_or_else(|| {
                let mut path = out.clone().into_os_string();
                path.push(".ckpt");
                path.into()
            });
            let settings = train::Settings {
                data,
                out,
                checkpoint,
                resume,
                init,
                hidden,
                output_buckets,
                king_buckets,
                epochs,
                batch_size: batch,
                learning_rate: lr,
                lr_drop_every,
                lr_gamma,
                wdl: wdl.clamp(0.0, 1.0),
                mirror,
                threads,
                validation_fraction,
                seed,
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
}

fn run_tune(
    data_path: &Path,
    out: &Path,
    validation_share: f64,
    quiet: bool,
    limit: Option<usize>,
    settings: &texel::Settings,
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

fn run_divide(depth: u32, fen: Option<&str>) -> ExitCode {
    let position = match fen {
        None => Ok(Position::default()),
        Some(f) => Position::from_fen(f, true),
    };
    let mut position = match position {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut total = 0;
    for (uci, n) in perft::divide(&mut position, depth.max(1)) {
        println!("{uci}: {n}");
        total += n;
    }
    println!();
    println!("Nodes searched: {total}");
    ExitCode::SUCCESS
}

fn run_suite(path: &str, max_depth: u32) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut total) = (0, 0);
    for entry in text.lines().filter_map(perft::parse_suite_line) {
        total += 1;
        let mismatches = perft::check_entry(&entry, max_depth);
        for m in &mismatches {
            match m.found {
                Some(found) => println!(
                    "MISMATCH {} depth {}: expected {} found {}",
                    m.fen, m.depth, m.expected, found
                ),
                None => println!("INVALID {}: position rejected", m.fen),
            }
        }
        if mismatches.is_empty() {
            passed += 1;
        }
    }
    println!("{passed}/{total} positions passed");
    if passed == total {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--king-buckets NAME`: one of `nnue::KING_BUCKET_LAYOUTS`.
fn parse_king_buckets(name: &str) -> Result<basalt::nnue::KingBuckets, String> {
    basalt::nnue::KingBuckets::named(name).ok_or_else(|| {
        let known: Vec<String> = basalt::nnue::KING_BUCKET_LAYOUTS
            .iter()
            .map(|(name, what)| format!("{name} ({what})"))
            .collect();
        format!("unknown layout; known: {}", known.join(", "))
    })
}
