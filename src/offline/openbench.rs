//! What OpenBench asks of an engine beyond UCI and `bench`: the openings of its DATAGEN
//! workloads (`genfens`) and the input of an SPSA tune (`basalt spsa-inputs`). The PGNs a
//! DATAGEN workload returns become training data in `datagen/pgn.rs`.
//!
//! OpenBench's client runs `./engine "genfens N seed S book <None|FILE> [extra]" "quit"`:
//! the request as one argument, then UCI commands. It reads the lines that start with
//! `info string genfens `, N of them, and gives up when one takes more than 15 s after the
//! one before; each of its threads runs the engine with a seed of its own. The openings are
//! the ones `basalt datagen` plays: opening `i` of seed `S` is the opening of game `i` of a
//! `datagen --seed S` run with the same book, random plies and verification budget (a book
//! line or the start position, random plies, a verification search that throws away the
//! unbalanced ones; `datagen/opening.rs`), so the same request prints the same FENs.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::offline::datagen::{self, opening, Config, Format, NodeLimit};
use crate::position::Position;
use crate::search::Searcher;
use crate::syzygy::Tablebases;
use crate::tt::TranspositionTable;
use crate::tunable::Param;

/// What a `genfens` request may say, for its error messages.
const GENFENS_USAGE: &str = "genfens N seed S book <None|FILE> [random-plies-min K] \
     [random-plies-max K] [verify-nodes K] [opening-max-score CP]";

/// The stack of the thread that searches the openings: a search thread's.
const SEARCH_STACK_BYTES: usize = 64 * 1024 * 1024;

/// A `genfens` request: how many openings, from which seed and book, drawn how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Genfens {
    pub count: u64,
    pub seed: u64,
    /// The EPD or FEN book; `None` for OpenBench's `book None` (the start position).
    pub book: Option<PathBuf>,
    /// As datagen's `--random-plies-min` and `--random-plies-max`.
    pub random_plies: (u32, u32),
    /// As datagen's `--verify-nodes` (its default: datagen's `--nodes`).
    pub verify_nodes: u64,
    /// As datagen's `--opening-max-score`.
    pub opening_max_score: i32,
}

/// Whether a first command-line argument is a `genfens` request.
pub fn is_genfens(argument: &str) -> bool {
    argument.split_whitespace().next() == Some("genfens")
}

fn number<T: std::str::FromStr>(what: &str, word: &str) -> Result<T, String> {
    word.parse()
        .map_err(|_| format!("{what}: `{word}` is not a number in range"))
}

impl Genfens {
    /// Reads a request: `genfens N seed S book <None|FILE>`, then optional pairs of
    /// datagen's opening flags without their dashes (the workload's "genfens args").
    pub fn parse(request: &str) -> Result<Genfens, String> {
        let words: Vec<&str> = request.split_whitespace().collect();
        let ["genfens", count, "seed", seed, "book", book, extra @ ..] = words.as_slice() else {
            return Err(format!(
                "expected `{GENFENS_USAGE}` as one argument, got `{request}`"
            ));
        };
        let mut genfens = Genfens {
            count: number("N", count)?,
            seed: number("seed", seed)?,
            book: (!book.eq_ignore_ascii_case("none")).then(|| PathBuf::from(book)),
            random_plies: opening::DEFAULT_RANDOM_PLIES,
            verify_nodes: datagen::DEFAULT_NODES,
            opening_max_score: opening::DEFAULT_MAX_OPENING_SCORE,
        };
        if extra.len() % 2 == 1 {
            return Err(format!(
                "`{}` has no value; expected `{GENFENS_USAGE}`",
                extra[extra.len() - 1]
            ));
        }
        for pair in extra.chunks(2) {
            let (key, value) = (pair[0], pair[1]);
            match key {
                "random-plies-min" => genfens.random_plies.0 = number(key, value)?,
                "random-plies-max" => genfens.random_plies.1 = number(key, value)?,
                "verify-nodes" => genfens.verify_nodes = number(key, value)?,
                "opening-max-score" => genfens.opening_max_score = number(key, value)?,
                _ => {
                    return Err(format!(
                        "unknown setting `{key}`; expected `{GENFENS_USAGE}`"
                    ))
                }
            }
        }
        if genfens.random_plies.0 > genfens.random_plies.1 {
            return Err(format!(
                "random-plies-min {} is above random-plies-max {}",
                genfens.random_plies.0, genfens.random_plies.1
            ));
        }
        if genfens.verify_nodes == 0 {
            return Err("verify-nodes must be at least 1".into());
        }
        Ok(genfens)
    }

    /// The book's lines, read as datagen reads `--book` (none without a book). A book must
    /// hold a position with a move to play, or every draw from it would fail.
    pub fn read_book(&self) -> Result<Vec<String>, String> {
        let Some(path) = &self.book else {
            return Ok(Vec::new());
        };
        let book = datagen::read_book(path)
            .map_err(|e| format!("cannot read the book {}: {e}", path.display()))?;
        let playable = |fen: &String| {
            Position::from_fen(fen, false)
                .is_ok_and(|pos| !pos.legal_moves().is_empty() && !pos.is_insufficient_material())
        };
        if !book.iter().any(playable) {
            return Err(format!(
                "the book {} holds no playable position (EPD or FEN lines)",
                path.display()
            ));
        }
        Ok(book)
    }

    /// Draws the openings in order and hands each one's FEN to `out`, which may stop the
    /// run with an error (a closed pipe).
    pub fn generate(
        &self,
        book: Vec<String>,
        out: &mut dyn FnMut(&str) -> io::Result<()>,
    ) -> io::Result<()> {
        let config = Config {
            out: PathBuf::new(),
            network: Some(crate::nnue::embedded()),
            games: Some(self.count),
            positions: None,
            seed: self.seed,
            threads: 1,
            nodes: self.verify_nodes,
            node_limit: NodeLimit::Soft,
            verify_nodes: self.verify_nodes,
            opening_max_score: self.opening_max_score,
            book,
            random_plies: self.random_plies,
            tablebases: Tablebases::default(),
            format: Format::Games,
            verbose: false,
        };
        let tt = Arc::new(TranspositionTable::new(datagen::GAME_HASH_MB));
        let mut searcher = Searcher::new();
        for game in 0..self.count {
            let mut rng = datagen::game_rng(self.seed, game);
            let drawn = opening::opening(&config, &mut rng, &tt, &mut searcher);
            out(&drawn.position.fen())?;
        }
        Ok(())
    }
}

/// `basalt "genfens ..." [command]...`: prints the openings as `info string genfens <FEN>`,
/// then runs the arguments after the request as UCI commands (OpenBench sends `quit`). A
/// bad request is named on stderr and exits with status 2, before any opening is printed.
pub fn genfens_main(arguments: &[String]) -> ExitCode {
    let Some((request, commands)) = arguments.split_first() else {
        return ExitCode::from(2);
    };
    let genfens = match Genfens::parse(request) {
        Ok(genfens) => genfens,
        Err(e) => {
            eprintln!("genfens: {e}");
            return ExitCode::from(2);
        }
    };
    let book = match genfens.read_book() {
        Ok(book) => book,
        Err(e) => {
            eprintln!("genfens: {e}");
            return ExitCode::from(2);
        }
    };
    let searching = std::thread::Builder::new()
        .stack_size(SEARCH_STACK_BYTES)
        .spawn(move || {
            let stdout = io::stdout();
            genfens.generate(book, &mut |fen| {
                let mut out = stdout.lock();
                writeln!(out, "info string genfens {fen}")?;
                out.flush()
            })
        });
    match searching.map(|thread| thread.join()) {
        Ok(Ok(Ok(()))) => {}
        // A closed pipe: nobody reads the openings or anything after them.
        Ok(Ok(Err(e))) => {
            eprintln!("genfens: {e}");
            return ExitCode::FAILURE;
        }
        Ok(Err(_)) => return ExitCode::FAILURE,
        Err(e) => {
            eprintln!("genfens: cannot start the search thread: {e}");
            return ExitCode::FAILURE;
        }
    }
    if commands.iter().any(|c| !c.trim().is_empty()) {
        let mut engine = crate::uci::Engine::new(crate::uci::stdout_output());
        engine.run(io::Cursor::new(commands.join("\n")));
    }
    ExitCode::SUCCESS
}

/// Every tunable parameter, as the `spsa` build declares them as UCI options: the search's,
/// then the time plan's.
fn tunables() -> impl Iterator<Item = &'static Param> {
    crate::search::params::TUNABLE
        .iter()
        .chain(crate::time::TUNABLE)
        .copied()
}

/// One line of OpenBench's SPSA input: `name, int, value, min, max, c_end, r_end`. c_end,
/// the perturbation at the run's end, is `c_share` of the range but at least half a unit
/// (OpenBench rounds an integer's perturbed value at random and never perturbs it by less
/// than 0.5); r_end sets the last step, r_end * c_end per unit of the result's difference.
/// The same schedule as tools/spsa.py.
pub fn spsa_input_line(param: &Param, c_share: f64, r_end: f64) -> String {
    let c_end = (c_share * f64::from(param.max - param.min)).max(0.5);
    format!(
        "{}, int, {}, {}, {}, {c_end:.2}, {r_end}",
        param.name, param.default, param.min, param.max
    )
}

/// OpenBench's SPSA input for the parameters named in `only` (every one when it is empty),
/// in declaration order; an unknown name is an error.
pub fn spsa_inputs(only: &[String], c_share: f64, r_end: f64) -> Result<Vec<String>, String> {
    if let Some(unknown) = only
        .iter()
        .find(|name| !tunables().any(|p| p.name.eq_ignore_ascii_case(name)))
    {
        let known: Vec<&str> = tunables().map(|p| p.name).collect();
        return Err(format!(
            "no tunable parameter `{unknown}`; they are {}",
            known.join(", ")
        ));
    }
    Ok(tunables()
        .filter(|p| only.is_empty() || only.iter().any(|n| p.name.eq_ignore_ascii_case(n)))
        .map(|p| spsa_input_line(p, c_share, r_end))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn genfens_requests_are_read_or_refused_with_the_reason() {
        let plain = Genfens::parse("genfens 16 seed 12345 book None ").unwrap();
        assert_eq!(
            plain,
            Genfens {
                count: 16,
                seed: 12345,
                book: None,
                random_plies: opening::DEFAULT_RANDOM_PLIES,
                verify_nodes: datagen::DEFAULT_NODES,
                opening_max_score: opening::DEFAULT_MAX_OPENING_SCORE,
            }
        );
        let extra = Genfens::parse(
            "genfens 2 seed 7 book Books/8moves_v3.epd random-plies-min 2 random-plies-max 4 \
             verify-nodes 500 opening-max-score 150",
        )
        .unwrap();
        assert_eq!(extra.book, Some(PathBuf::from("Books/8moves_v3.epd")));
        assert_eq!(extra.random_plies, (2, 4));
        assert_eq!((extra.verify_nodes, extra.opening_max_score), (500, 150));
        for (bad, words) in [
            ("genfens", "as one argument"),
            ("genfens 10 seed 1", "as one argument"),
            ("genfens ten seed 1 book None", "N: `ten`"),
            ("genfens 10 seed -1 book None", "seed: `-1`"),
            ("genfens 10 sead 1 book None", "as one argument"),
            (
                "genfens 10 seed 1 book None plies 3",
                "unknown setting `plies`",
            ),
            (
                "genfens 10 seed 1 book None verify-nodes",
                "`verify-nodes` has no value",
            ),
            ("genfens 10 seed 1 book None verify-nodes 0", "at least 1"),
            (
                "genfens 10 seed 1 book None random-plies-min 9 random-plies-max 3",
                "above",
            ),
        ] {
            let error = Genfens::parse(bad).unwrap_err();
            assert!(error.contains(words), "{bad}: {error}");
        }
        assert!(is_genfens("genfens 1 seed 1 book None"));
        assert!(!is_genfens("genfensx") && !is_genfens("bench"));
    }

    #[test]
    fn spsa_inputs_are_openbench_lines_of_every_tunable() {
        let lines = spsa_inputs(&[], 0.05, 0.002).unwrap();
        assert_eq!(lines.len(), tunables().count());
        for line in &lines {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            assert_eq!(fields.len(), 7, "{line}");
            assert_eq!(fields[1], "int");
            let numbers: Vec<f64> = fields[2..].iter().map(|f| f.parse().unwrap()).collect();
            let (value, min, max, c_end, r_end) =
                (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]);
            // OpenBench's own checks (verify_workload.py), and the half-unit floor.
            assert!(min <= value && value <= max && min < max, "{line}");
            assert!(c_end >= 0.5 && r_end > 0.0, "{line}");
        }
        let only = spsa_inputs(
            &["lmp_base".into(), "RFP_MARGIN_PER_DEPTH".into()],
            0.05,
            0.002,
        );
        assert_eq!(
            only.unwrap(),
            [
                "RFP_MARGIN_PER_DEPTH, int, 80, 30, 200, 8.50, 0.002",
                "LMP_BASE, int, 3, 0, 10, 0.50, 0.002",
            ]
        );
        let error = spsa_inputs(&["NO_SUCH".into()], 0.05, 0.002).unwrap_err();
        assert!(
            error.contains("NO_SUCH") && error.contains("LMP_BASE"),
            "{error}"
        );
    }
}
