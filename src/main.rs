//! Command line: no subcommand runs the UCI loop; `bench` and `perft` are the engine's own
//! tools; `datagen`, `convert-data`, `tune`, `train` and `spsa-inputs` run the offline tools
//! (`basalt::offline`, whose `cli` module holds their flags). OpenBench's `genfens` request
//! (`basalt "genfens N seed S book None" quit`) is not a subcommand: it is caught first.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use basalt::bench;
use basalt::offline::cli::{ConvertArgs, DatagenArgs, SpsaInputsArgs, TexelArgs, TrainArgs};
use basalt::offline::openbench;
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
    /// Self-play games at a node budget per move, written whole (games files) or as NNUE
    /// training records (docs/datagen.md). Rerunning the same command resumes the run.
    Datagen(DatagenArgs),
    /// Converts 32-byte training records to a games file, or a games file to records.
    ConvertData(ConvertArgs),
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
    Tune(TexelArgs),
    /// Train the NNUE on `basalt datagen` records or games (CPU); see docs/training.md.
    Train(TrainArgs),
    /// Print the search parameters as OpenBench's SPSA input (docs/openbench.md).
    SpsaInputs(SpsaInputsArgs),
}

fn main() -> ExitCode {
    // OpenBench's DATAGEN workloads ask for openings with the whole request as one argument,
    // followed by UCI commands; clap would take it for an unknown subcommand.
    let first = std::env::args_os().nth(1);
    if first
        .as_ref()
        .and_then(|a| a.to_str())
        .is_some_and(openbench::is_genfens)
    {
        let arguments: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return openbench::genfens_main(&arguments);
    }
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
        Some(Tool::Datagen(args)) => args.run(),
        Some(Tool::ConvertData(args)) => args.run(),
        Some(Tool::Perft {
            depth,
            fen,
            suite,
            max_depth,
        }) => match suite {
            Some(path) => run_suite(&path, max_depth),
            None => run_divide(depth.unwrap_or(5), fen.as_deref()),
        },
        Some(Tool::Tune(args)) => args.run(),
        Some(Tool::Train(args)) => args.run(),
        Some(Tool::SpsaInputs(args)) => args.run(),
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
