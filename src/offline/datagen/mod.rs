//! `basalt datagen`: self-play games at a fixed node budget, written as training records
//! (`format.rs`) for the NNUE trainer.
//!
//! Game `g` of a run is played from an opening drawn by a generator seeded with
//! `(seed, g)`, with a fresh table and fresh histories, so it is the same game whatever
//! thread plays it; the writer puts games into the file in game order. A run is therefore
//! reproducible from its seed, and resuming an interrupted run (the progress file says how
//! many games and records are complete) gives the same file as an uninterrupted one.

pub mod format;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shakmaty::Color;

use crate::nnue::Network;
use crate::position::Position;
use crate::score::MATE_BOUND;
use crate::search::{Control, Limits, Searcher};
use crate::tt::TranspositionTable;
use format::{pack, GameResult, RECORD_BYTES};

/// Settings of a run (the command-line flags).
#[derive(Clone, Debug)]
pub struct Config {
    pub out: PathBuf,
    /// The evaluation the games are played with: a network, or `None` for the hand-crafted one.
    pub network: Option<Arc<Network>>,
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub seed: u64,
    pub threads: usize,
    pub nodes: u64,
    /// FENs to start from (empty: the start position).
    pub book: Vec<String>,
    pub random_plies: (u32, u32),
    /// Print progress to stderr.
    pub verbose: bool,
}

/// Openings whose score is beyond this (centipawns) are drawn again: a decided position
/// teaches little and ends the game at once.
const MAX_OPENING_SCORE: i32 = 1000;
/// A score this large for `WIN_PLIES` plies in a row decides the game.
const WIN_SCORE: i32 = 2500;
const WIN_PLIES: u32 = 6;
/// After `DRAW_FROM_PLY`, scores within `DRAW_SCORE` for `DRAW_PLIES` plies make a draw.
const DRAW_FROM_PLY: u32 = 80;
const DRAW_SCORE: i32 = 10;
const DRAW_PLIES: u32 = 12;
/// Games this long are drawn.
const MAX_GAME_PLIES: u32 = 400;
/// Each game thread's table.
const GAME_HASH_MB: usize = 16;
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What a run wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub games: u64,
    pub records: u64,
}

/// One finished game: its records and result.
struct Game {
    number: u64,
    records: Vec<u8>,
    result: GameResult,
    plies: u32,
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

fn progress_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".progress");
    PathBuf::from(name)
}

fn read_progress(out: &Path) -> io::Result<Totals> {
    let text = fs::read_to_string(progress_path(out))?;
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        ["games", g, "records", r] => match (g.parse(), r.parse()) {
            (Ok(games), Ok(records)) => Ok(Totals { games, records }),
            _ => Err(bad_progress()),
        },
        _ => Err(bad_progress()),
    }
}

fn bad_progress() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "unreadable progress file")
}

/// Written beside the data after each game, through a rename so that it is never half-written.
fn write_progress(out: &Path, totals: Totals) -> io::Result<()> {
    let path = progress_path(out);
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    fs::write(
        &tmp,
        format!("games {} records {}\n", totals.games, totals.records),
    )?;
    fs::rename(&tmp, &path)
}

/// Opens the output for appending, after the games the progress file counts; a half-written
/// game beyond them is cut off.
fn open_output(out: &Path) -> io::Result<(File, Totals)> {
    let totals = if out.exists() && fs::metadata(out)?.len() > 0 {
        read_progress(out).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "{} has data but no usable {}: {e}",
                    out.display(),
                    progress_path(out).display()
                ),
            )
        })?
    } else {
        Totals::default()
    };
    let file = OpenOptions::new().create(true).append(true).open(out)?;
    let complete = totals.records * RECORD_BYTES as u64;
    if file.metadata()?.len() < complete {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is shorter than its progress file says", out.display()),
        ));
    }
    file.set_len(complete)?;
    Ok((file, totals))
}

/// Runs datagen to the target; returns the totals in the file.
pub fn run(config: &Config) -> io::Result<Totals> {
    let (mut file, mut totals) = open_output(&config.out)?;
    if reached(config, totals) {
        return Ok(totals);
    }
    let next_game = Arc::new(AtomicU64::new(totals.games));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, finished) = crossbeam_channel::unbounded::<Game>();
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
            file.write_all(&game.records)?;
            file.flush()?;
            totals.games += 1;
            totals.records += (game.records.len() / RECORD_BYTES) as u64;
            write_progress(&config.out, totals)?;
            stats.add(&game);
            if config.verbose && last_report.elapsed() >= PROGRESS_EVERY {
                last_report = Instant::now();
                eprintln!("{}", stats.line(totals, start.elapsed()));
            }
            if reached(config, totals) {
                break 'receive;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        let _ = worker.join();
    }
    if config.verbose {
        eprintln!("{}", stats.line(totals, start.elapsed()));
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
    sender: &crossbeam_channel::Sender<Game>,
) {
    let tt = Arc::new(TranspositionTable::new(GAME_HASH_MB));
    let mut searcher = Searcher::new(tt.clone(), Arc::new(Control::default()));
    searcher.network = config.network.clone();
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
fn game_rng(seed: u64, number: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ number.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn search(
    searcher: &mut Searcher,
    pos: &mut Position,
    nodes: u64,
) -> (Option<shakmaty::Move>, i32) {
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    let result = searcher.search(pos, limits, &mut |_| {});
    (result.best_move, result.score)
}

/// A random opening: a book position (or the start) and some random legal plies, drawn
/// again until the game is not over and the search does not find it decided.
fn opening(
    config: &Config,
    rng: &mut StdRng,
    tt: &TranspositionTable,
    searcher: &mut Searcher,
) -> Position {
    loop {
        let mut pos = if config.book.is_empty() {
            Position::default()
        } else {
            let fen = &config.book[rng.random_range(0..config.book.len())];
            match Position::from_fen(fen, false) {
                Ok(p) => p,
                Err(_) => continue,
            }
        };
        let (low, high) = config.random_plies;
        let plies = rng.random_range(low..=high.max(low));
        let mut playable = true;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                playable = false;
                break;
            }
            let m = moves[rng.random_range(0..moves.len())];
            pos.make_move(m);
        }
        if !playable || pos.legal_moves().is_empty() {
            continue;
        }
        let mut pos = pos.without_history();
        tt.clear();
        searcher.clear();
        let (_, score) = search(searcher, &mut pos, config.nodes);
        if score.abs() <= MAX_OPENING_SCORE {
            return pos;
        }
    }
}

/// Plays game `number` to its end and returns its quiet positions.
fn play_game(
    config: &Config,
    number: u64,
    tt: &TranspositionTable,
    searcher: &mut Searcher,
) -> Game {
    let mut rng = game_rng(config.seed, number);
    let mut pos = opening(config, &mut rng, tt, searcher);
    tt.clear();
    searcher.clear();
    let mut positions: Vec<(shakmaty::Chess, i16)> = Vec::new();
    let (mut winning_plies, mut drawn_plies, mut plies) = (0u32, 0u32, 0u32);
    let mut last_sign = 0;
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
        if plies >= MAX_GAME_PLIES {
            break GameResult::Draw;
        }
        let (best, score) = search(searcher, &mut pos, config.nodes);
        let Some(best) = best else {
            break GameResult::Draw;
        };
        if score.abs() > MATE_BOUND {
            break GameResult::win_for(if score > 0 { turn } else { !turn });
        }
        let white_score = if turn == Color::White { score } else { -score };
        let quiet = !pos.in_check() && !best.is_capture() && !best.is_promotion();
        if quiet {
            positions.push((pos.board().clone(), white_score.clamp(-32000, 32000) as i16));
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
    let mut records = Vec::with_capacity(positions.len() * RECORD_BYTES);
    for (board, score) in &positions {
        records.extend_from_slice(&pack(board, *score, result));
    }
    Game {
        number,
        records,
        result,
        plies,
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
}

impl RunStats {
    fn add(&mut self, game: &Game) {
        self.games += 1;
        self.records += (game.records.len() / RECORD_BYTES) as u64;
        self.plies += u64::from(game.plies);
        self.results[match game.result {
            GameResult::WhiteWin => 0,
            GameResult::Draw => 1,
            GameResult::BlackWin => 2,
        }] += 1;
    }

    fn line(&self, totals: Totals, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64().max(1e-3);
        format!(
            "datagen: {} games ({} this run, +{}={}-{} for White), {} positions in the file \
             ({} this run), {:.0} positions/s, {:.2} games/s, {:.0} plies a game",
            totals.games,
            self.games,
            self.results[0],
            self.results[1],
            self.results[2],
            totals.records,
            self.records,
            self.records as f64 / secs,
            self.games as f64 / secs,
            self.plies as f64 / self.games.max(1) as f64
        )
    }
}
