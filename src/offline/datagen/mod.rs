//! `basalt datagen`: self-play games at a node budget per move, written for the NNUE
//! trainer whole, as games (`games.rs`, from which the reader picks the quiet positions),
//! or as 32-byte training records of those positions (`format.rs`).
//!
//! Game `g` of a run is played from an opening (`opening.rs`) drawn by a generator seeded
//! with `(seed, g)`, with a fresh table and fresh histories, so it is the same game whatever
//! thread plays it; the writer puts games into the file in game order. A run is therefore
//! reproducible from its seed, and resuming an interrupted run (the progress file says how
//! many games and records are complete, and with what settings: `progress.rs`) gives the
//! same file as an uninterrupted one.

pub mod chunk;
pub mod convert;
pub mod format;
pub mod games;
pub mod opening;
pub mod pgn;
pub mod progress;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::SeedableRng;
use shakmaty::Color;

use crate::nnue::Network;
use crate::position::Position;
use crate::score::MATE_BOUND;
use crate::search::{Limits, SearchJob, SearchResult, Searcher};
use crate::syzygy::{Outcome, Tablebases};
use crate::tt::TranspositionTable;
use format::{pack, GameResult, RECORD_BYTES};
use games::{Ply, FILE_HEADER_BYTES};

/// What `basalt datagen` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// 32-byte records of the quiet positions (`format.rs`).
    Records,
    /// Whole games (`games.rs`): about 5 bytes a quiet position, and every search kept.
    #[default]
    Games,
}

/// How a move's search keeps to the node budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeLimit {
    /// The budget is a soft limit: the iteration in which it runs out is finished, so the
    /// move and score played are those of the deepest iteration the nodes paid for, and an
    /// iteration is cut only at `HARD_NODES_PER_SOFT` times the budget.
    #[default]
    Soft,
    /// The budget is a hard limit, as in datagen before issue 49: the search stops in the
    /// middle of the iteration it runs out in, whose nodes are thrown away.
    Hard,
}

/// With `NodeLimit::Soft`, an iteration still running at this many times the budget is
/// cut off (the one before it is played). The iteration a budget runs out in often costs
/// several times all those before it: in self-play at budgets of 2,500 to 5,000 nodes,
/// 10-14% of the moves passed 4 times the budget and about 1.5% reached 8 times. A cap of
/// 4 would send a tenth of the moves back to a shallower iteration; 8 guards against the
/// rare explosion only.
pub const HARD_NODES_PER_SOFT: u64 = 8;

/// Settings of a run (the command-line flags).
#[derive(Clone)]
pub struct Config {
    pub out: PathBuf,
    /// The evaluation the games are played with: a network, or `None` for the hand-crafted one.
    pub network: Option<Arc<Network>>,
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub seed: u64,
    pub threads: usize,
    /// The node budget of a move.
    pub nodes: u64,
    pub node_limit: NodeLimit,
    /// The node budget of an opening's verification search (kept to `node_limit` too).
    pub verify_nodes: u64,
    /// Openings the verification search scores beyond this (centipawns) are drawn again.
    pub opening_max_score: i32,
    /// FENs to start from (empty: the start position).
    pub book: Vec<String>,
    pub random_plies: (u32, u32),
    /// Games reaching a covered position end with its tablebase result (none: no tables).
    pub tablebases: Tablebases,
    pub format: Format,
    /// Print progress to stderr.
    pub verbose: bool,
}

/// A score this large for `WIN_PLIES` plies in a row decides the game.
const WIN_SCORE: i32 = 2500;
const WIN_PLIES: u32 = 6;
/// After `DRAW_FROM_PLY`, scores within `DRAW_SCORE` for `DRAW_PLIES` plies make a draw.
const DRAW_FROM_PLY: u32 = 80;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: u32 = 12;
/// Games this long are drawn.
const MAX_GAME_PLIES: u32 = 400;
/// Each game thread's table (and `genfens`'s: its openings are those of the same games).
pub const GAME_HASH_MB: usize = 16;
/// Default `--nodes`: the node budget of a move, and of an opening's verification search.
/// A soft limit, costing about what 5000 nodes did as a hard limit (docs/datagen.md).
pub const DEFAULT_NODES: u64 = 2000;
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What a run wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub games: u64,
    /// Quiet positions: the records of the record format, the positions a games file yields
    /// (`games::Selection::Quiet`).
    pub records: u64,
    /// The file's complete bytes.
    pub bytes: u64,
}

/// One finished game: its bytes in the run's format, its quiet positions and its result.
struct FinishedGame {
    number: u64,
    bytes: Vec<u8>,
    positions: u64,
    result: GameResult,
    plies: u32,
    /// Ended by a tablebase probe.
    by_tablebase: bool,
    /// Openings drawn for it (the verification search threw away all but the last).
    opening_tries: u32,
    /// The game's move searches, and their nodes and depths reached, summed.
    searches: u64,
    nodes: u64,
    depths: u64,
}

/// Reads the `--book` file: one position per line, EPD or FEN (operations are ignored).
pub fn read_book(path: &Path) -> io::Result<Vec<String>> {
    let text = fs::read_to_string(path)?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().take(4).collect();
            (fields.len() == 4).then(|| format!("{} 0 1", fields.join(" ")))
        })
        .collect())
}

fn invalid_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Opens the output for appending, after the games the progress file counts; a half-written
/// game beyond them is cut off. A new games file gets its header. A file begun with other
/// `settings` is refused before anything is changed; the notes say what a file from an
/// older build leaves unchecked.
fn open_output(
    out: &Path,
    format: Format,
    settings: &[progress::Setting],
) -> io::Result<(File, Totals, Vec<String>)> {
    let length = if out.exists() {
        fs::metadata(out)?.len()
    } else {
        0
    };
    let mut head = Vec::new();
    if length > 0 {
        File::open(out)?
            .take(FILE_HEADER_BYTES as u64)
            .read_to_end(&mut head)?;
    }
    let header = games::file_header(games::Encoding::Plain);
    // A games file cut inside its header holds no game yet: it is started again.
    let empty = length == 0
        || (format == Format::Games
            && length <= FILE_HEADER_BYTES as u64
            && header.starts_with(&head));
    match format {
        Format::Records if games::is_games_file(&head) => {
            return Err(invalid_data(format!(
                "{} is a games file: resume it with --format games",
                out.display()
            )))
        }
        Format::Games if !empty && !head.starts_with(&header) => {
            return Err(invalid_data(format!(
                "{} does not start with the games header of this version (records? resume \
                 them with --format records)",
                out.display()
            )))
        }
        _ => {}
    }
    let (mut totals, notes) = if !empty {
        let recorded = progress::read(out, format).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "{} has data but no usable {}: {e}",
                    out.display(),
                    progress::path(out).display()
                ),
            )
        })?;
        let notes =
            progress::check_resume(out, &recorded.settings, settings).map_err(invalid_data)?;
        (recorded.totals, notes)
    } else {
        (Totals::default(), Vec::new())
    };
    let mut file = OpenOptions::new().create(true).append(true).open(out)?;
    if file.metadata()?.len() < totals.bytes {
        return Err(invalid_data(format!(
            "{} is shorter than its progress file says",
            out.display()
        )));
    }
    file.set_len(totals.bytes)?;
    if format == Format::Games && empty {
        file.write_all(&header)?;
        totals.bytes = header.len() as u64;
    }
    Ok((file, totals, notes))
}

/// Runs datagen to the target; returns the totals in the file.
pub fn run(config: &Config) -> io::Result<Totals> {
    let settings = progress::settings(config);
    let (mut file, mut totals, notes) = open_output(&config.out, config.format, &settings)?;
    if config.verbose {
        for note in notes {
            eprintln!("datagen: {note}");
        }
    }
    if reached(config, totals) {
        return Ok(totals);
    }
    let next_game = Arc::new(AtomicU64::new(totals.games));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, finished) = crossbeam_channel::unbounded::<FinishedGame>();
    let workers: Vec<_> = (0..config.threads.max(1))
        .map(|_| {
            let (config, next_game, stop, sender) = (
                config.clone(),
                next_game.clone(),
                stop.clone(),
                sender.clone(),
            );
            std::thread::Builder::new()
                .stack_size(64 * 1024 * 1024)
                .spawn(move || play_games(&config, &next_game, &stop, &sender))
        })
        .collect::<io::Result<_>>()?;
    drop(sender);

    let start = Instant::now();
    let mut last_report = start;
    let mut stats = RunStats::default();
    let mut waiting = BTreeMap::new();
    // Games come back out of order; each is written once every game before it is.
    'receive: for game in finished.iter() {
        waiting.insert(game.number, game);
        while let Some(game) = waiting.remove(&totals.games) {
            file.write_all(&game.bytes)?;
            file.flush()?;
            totals.games += 1;
            totals.records += game.positions;
            totals.bytes += game.bytes.len() as u64;
            progress::write(&config.out, totals, config.format, &settings)?;
            stats.add(&game);
            if config.verbose && last_report.elapsed() >= PROGRESS_EVERY {
                last_report = Instant::now();
                eprintln!("{}", stats.line(totals, config.format, start.elapsed()));
            }
            if reached(config, totals) {
                break 'receive;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let mut panicked = false;
    for worker in workers {
        panicked |= worker.join().is_err();
    }
    if panicked {
        // The games before the failed one are in the file and counted; a rerun resumes.
        return Err(io::Error::other(format!(
            "a game thread failed after game {} (see above)",
            totals.games
        )));
    }
    if config.verbose {
        eprintln!("{}", stats.line(totals, config.format, start.elapsed()));
    }
    Ok(totals)
}

fn reached(config: &Config, totals: Totals) -> bool {
    config.games.is_some_and(|g| totals.games >= g)
        || config.positions.is_some_and(|p| totals.records >= p)
}

/// A game thread: plays game after game until the writer has enough.
fn play_games(
    config: &Config,
    next_game: &AtomicU64,
    stop: &AtomicBool,
    sender: &crossbeam_channel::Sender<FinishedGame>,
) {
    let tt = Arc::new(TranspositionTable::new(GAME_HASH_MB));
    let mut searcher = Searcher::new();
    while !stop.load(Ordering::Relaxed) {
        let number = next_game.fetch_add(1, Ordering::Relaxed);
        if config.games.is_some_and(|g| number >= g) {
            break;
        }
        let game = play_game(config, number, &tt, &mut searcher);
        if sender.send(game).is_err() {
            break;
        }
    }
}

/// The generator of game `number`: distinct per game, fixed by the run's seed.
pub fn game_rng(seed: u64, number: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ number.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Searches `pos` within `nodes` under the run's node limit.
fn search_move(
    searcher: &mut Searcher,
    tt: &Arc<TranspositionTable>,
    pos: &mut Position,
    config: &Config,
    nodes: u64,
) -> SearchResult {
    let limits = match config.node_limit {
        NodeLimit::Soft => Limits {
            soft_nodes: Some(nodes),
            hard_nodes: Some(nodes.saturating_mul(HARD_NODES_PER_SOFT)),
            ..Limits::default()
        },
        NodeLimit::Hard => Limits {
            hard_nodes: Some(nodes),
            ..Limits::default()
        },
    };
    let job = SearchJob {
        network: config.network.clone(),
        ..SearchJob::new(tt.clone(), limits)
    };
    searcher.iterative_deepening(pos, job, &mut |_| {})
}

/// Plays game `number` to its end and returns it in the run's format.
fn play_game(
    config: &Config,
    number: u64,
    tt: &Arc<TranspositionTable>,
    searcher: &mut Searcher,
) -> FinishedGame {
    let mut rng = game_rng(config.seed, number);
    let opening = opening::opening(config, &mut rng, tt, searcher);
    let mut pos = opening.position;
    tt.clear();
    searcher.clear();
    let start = pos.board().clone();
    // Every search (a games file keeps them all), and the quiet positions (the records).
    let mut searches: Vec<Ply> = Vec::new();
    let mut positions: Vec<(shakmaty::Chess, i16)> = Vec::new();
    let (mut winning_plies, mut drawn_plies, mut plies) = (0u32, 0u32, 0u32);
    let mut last_sign = 0;
    let (mut nodes, mut depths, mut by_tablebase) = (0, 0, false);
    let result = loop {
        let turn = pos.turn();
        if pos.legal_moves().is_empty() {
            break if pos.in_check() {
                GameResult::win_for(!turn)
            } else {
                GameResult::Draw
            };
        }
        if pos.is_repetition() || pos.is_fifty_move_draw() || pos.is_insufficient_material() {
            break GameResult::Draw;
        }
        // The tables know the result: playing on would only add noise to it.
        if let Some(outcome) = config.tablebases.probe_outcome(pos.board()) {
            by_tablebase = true;
            break match outcome {
                Outcome::Win => GameResult::win_for(turn),
                Outcome::Draw => GameResult::Draw,
                Outcome::Loss => GameResult::win_for(!turn),
            };
        }
        if plies >= MAX_GAME_PLIES {
            break GameResult::Draw;
        }
        let searched = search_move(searcher, tt, &mut pos, config, config.nodes);
        nodes += searcher.nodes();
        depths += searched.depth.max(0) as u64;
        let score = searched.score;
        let Some(best) = searched.best_move else {
            break GameResult::Draw;
        };
        let white_score = if turn == Color::White { score } else { -score };
        // Mate scores fit: MATE is 32,000.
        let stored_score = white_score.clamp(-32000, 32000) as i16;
        searches.push(Ply {
            best: Some(best),
            score: stored_score,
        });
        if score.abs() > MATE_BOUND {
            break GameResult::win_for(if score > 0 { turn } else { !turn });
        }
        let quiet = !pos.in_check() && !best.is_capture() && !best.is_promotion();
        if quiet {
            positions.push((pos.board().clone(), stored_score));
        }
        // Adjudication: a side clearly winning for several plies, or a dead-even ending.
        let sign = white_score.signum();
        if white_score.abs() >= WIN_SCORE && sign == last_sign {
            winning_plies += 1;
        } else {
            winning_plies = u32::from(white_score.abs() >= WIN_SCORE);
        }
        last_sign = sign;
        if winning_plies >= WIN_PLIES {
            break GameResult::win_for(if white_score > 0 {
                Color::White
            } else {
                Color::Black
            });
        }
        drawn_plies = if white_score.abs() <= DRAW_SCORE {
            drawn_plies + 1
        } else {
            0
        };
        if plies >= DRAW_FROM_PLY && drawn_plies >= DRAW_PLIES {
            break GameResult::Draw;
        }
        pos.make_move(best);
        plies += 1;
    };
    let search_count = searches.len() as u64;
    let bytes = match config.format {
        Format::Records => {
            let mut records = Vec::with_capacity(positions.len() * RECORD_BYTES);
            for (board, score) in &positions {
                records.extend_from_slice(&pack(board, *score, result));
            }
            records
        }
        Format::Games => {
            let mut bytes = Vec::new();
            games::Game {
                start,
                plies: searches,
                result,
            }
            .encode(&mut bytes, games::Encoding::Plain);
            bytes
        }
    };
    FinishedGame {
        number,
        bytes,
        positions: positions.len() as u64,
        result,
        plies,
        by_tablebase,
        opening_tries: opening.tries,
        searches: search_count,
        nodes,
        depths,
    }
}

/// Running totals for the progress lines.
#[derive(Default)]
struct RunStats {
    games: u64,
    records: u64,
    plies: u64,
    /// White wins, draws, Black wins.
    results: [u64; 3],
    by_tablebase: u64,
    opening_tries: u64,
    /// The move searches (one a ply, and one for a game's last position when it ended on
    /// that search's score), and their nodes and depths reached.
    searches: u64,
    nodes: u64,
    depths: u64,
}

impl RunStats {
    fn add(&mut self, game: &FinishedGame) {
        self.games += 1;
        self.records += game.positions;
        self.plies += u64::from(game.plies);
        self.by_tablebase += u64::from(game.by_tablebase);
        self.opening_tries += u64::from(game.opening_tries);
        self.searches += game.searches;
        self.nodes += game.nodes;
        self.depths += game.depths;
        self.results[match game.result {
            GameResult::WhiteWin => 0,
            GameResult::Draw => 1,
            GameResult::BlackWin => 2,
        }] += 1;
    }

    fn line(&self, totals: Totals, format: Format, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64().max(1e-3);
        let size = match format {
            Format::Records => String::new(),
            Format::Games => format!(
                ", {:.2} bytes a position",
                totals.bytes as f64 / totals.records.max(1) as f64
            ),
        };
        let tablebase = if self.by_tablebase > 0 {
            format!(", {} ended by the tablebases", self.by_tablebase)
        } else {
            String::new()
        };
        let searches = self.searches.max(1) as f64;
        format!(
            "datagen: {} games ({} this run, +{}={}-{} for White{tablebase}), {} positions in \
             the file ({} this run), {:.0} positions/s, {:.2} games/s, {:.0} plies a game, \
             {:.0} nodes and depth {:.1} a move, {:.2} openings drawn a game{size}",
            totals.games,
            self.games,
            self.results[0],
            self.results[1],
            self.results[2],
            totals.records,
            self.records,
            self.records as f64 / secs,
            self.games as f64 / secs,
            self.plies as f64 / self.games.max(1) as f64,
            self.nodes as f64 / searches,
            self.depths as f64 / searches,
            self.opening_tries as f64 / self.games.max(1) as f64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("basalt-datagen-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let out = dir.join(name);
        let _ = fs::remove_file(&out);
        let _ = fs::remove_file(progress::path(&out));
        out
    }

    fn open_games(out: &Path) -> io::Result<Totals> {
        open_output(out, Format::Games, &[]).map(|(_, totals, _)| totals)
    }

    #[test]
    fn a_games_file_resumes_after_its_complete_games() {
        let header = games::file_header(games::Encoding::Plain);
        // New, empty, or stopped inside its header before the first game: started afresh.
        for existing in [None, Some(&[][..]), Some(&header[..5]), Some(&header[..])] {
            let out = scratch("fresh.bin");
            if let Some(bytes) = existing {
                fs::write(&out, bytes).unwrap();
            }
            let totals = open_games(&out).unwrap();
            assert_eq!(
                totals,
                Totals {
                    games: 0,
                    records: 0,
                    bytes: 12
                }
            );
            assert_eq!(fs::read(&out).unwrap(), header);
        }
        // Two games' worth of bytes counted, a half-written third one beyond: cut off.
        let out = scratch("resumed.bin");
        let mut bytes = header.to_vec();
        bytes.extend_from_slice(&[7; 100]);
        fs::write(&out, &bytes).unwrap();
        let counted = Totals {
            games: 2,
            records: 9,
            bytes: 80,
        };
        progress::write(&out, counted, Format::Games, &[]).unwrap();
        assert_eq!(
            fs::read_to_string(progress::path(&out)).unwrap(),
            "games 2 records 9 bytes 80\n"
        );
        assert_eq!(open_games(&out).unwrap(), counted);
        assert_eq!(fs::read(&out).unwrap(), bytes[..80]);
        // Shorter than counted: refused, and left alone.
        progress::write(
            &out,
            Totals {
                bytes: 81,
                ..counted
            },
            Format::Games,
            &[],
        )
        .unwrap();
        let error = open_games(&out).unwrap_err().to_string();
        assert!(error.contains("shorter than its progress file"), "{error}");
        assert_eq!(fs::read(&out).unwrap().len(), 80);
        // A record file's progress, or none, is not a games file's.
        progress::write(&out, counted, Format::Records, &[]).unwrap();
        assert!(open_games(&out).is_err());
        fs::remove_file(progress::path(&out)).unwrap();
        assert!(open_games(&out).is_err());
        assert_eq!(fs::read(&out).unwrap().len(), 80);
        // Records are not resumed as games, nor games as records.
        let records = scratch("records.bin");
        fs::write(&records, [0u8; 64]).unwrap();
        progress::write(
            &records,
            Totals {
                games: 1,
                records: 2,
                bytes: 64,
            },
            Format::Records,
            &[],
        )
        .unwrap();
        assert!(open_games(&records).is_err());
        assert!(open_output(&out, Format::Records, &[]).is_err());
        assert_eq!(
            open_output(&records, Format::Records, &[])
                .unwrap()
                .1
                .records,
            2
        );
        fs::remove_dir_all(out.parent().unwrap()).unwrap();
    }
}
