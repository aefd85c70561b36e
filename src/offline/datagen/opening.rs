//! A game's opening: a book position (the start position without a book), then a number of
//! random legal plies drawn from `--random-plies-min..=--random-plies-max`, kept only if
//! the game is not over and a short verification search finds the position undecided.
//!
//! Random plies spread the games over far more positions than a book holds; the
//! verification throws away the openings where a random ply hung a piece outright, whose
//! games would teach the net one lopsided ending after another. Everything is drawn from
//! the game's own generator and searched from a cleared table, so an opening depends only
//! on the seed, the game number and the flags.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;

use super::{search_move, Config};
use crate::position::Position;
use crate::search::Searcher;
use crate::tt::TranspositionTable;

/// Default `--opening-max-score` (centipawns, the side to move's view): an opening the
/// verification search scores beyond this is drawn again. A little over a minor piece
/// (`PIECE_VALUE`: 320-330): a random ply that drops a pawn or two is kept (an unbalanced
/// but open game), one that drops a piece for nothing mostly is not.
pub const DEFAULT_MAX_OPENING_SCORE: i32 = 400;
/// Default `--random-plies-min` and `--random-plies-max`: random plies after the book
/// position (or the start position).
pub const DEFAULT_RANDOM_PLIES: (u32, u32) = (8, 10);
/// After this many draws the most balanced opening drawn is played, so a book of decided
/// positions or a tiny `--opening-max-score` cannot stall a run.
const MAX_OPENING_TRIES: u32 = 1000;

/// The position a game starts from, with what its verification found.
#[derive(Clone)]
pub struct Opening {
    pub position: Position,
    /// The verification search's score, the side to move's view.
    pub score: i32,
    /// Draws it took, this one included.
    pub tries: u32,
}

/// Draws openings from `rng` until one is playable and scored within
/// `config.opening_max_score` (after `MAX_OPENING_TRIES`, the most balanced one drawn).
pub fn opening(
    config: &Config,
    rng: &mut StdRng,
    tt: &Arc<TranspositionTable>,
    searcher: &mut Searcher,
) -> Opening {
    let mut best: Option<Opening> = None;
    for tries in 1..=MAX_OPENING_TRIES {
        let Some(position) = random_plies(config, rng) else {
            continue;
        };
        let mut position = position.without_history();
        tt.clear();
        searcher.clear();
        let score = search_move(searcher, tt, &mut position, config, config.verify_nodes).score;
        let drawn = Opening {
            position,
            score,
            tries,
        };
        if score.abs() <= config.opening_max_score {
            return drawn;
        }
        if best.as_ref().is_none_or(|b| score.abs() < b.score.abs()) {
            best = Some(drawn);
        }
    }
    let mut best = best.unwrap_or_else(|| {
        panic!("no playable opening in {MAX_OPENING_TRIES} draws (a book of finished games?)")
    });
    best.tries = MAX_OPENING_TRIES;
    best
}

/// A book position (or the start) and the random plies, or `None` when the book line is
/// unreadable or the game ends on the way (no legal move, or a draw by material).
fn random_plies(config: &Config, rng: &mut StdRng) -> Option<Position> {
    let mut pos = if config.book.is_empty() {
        Position::default()
    } else {
        let fen = &config.book[rng.random_range(0..config.book.len())];
        Position::from_fen(fen, false).ok()?
    };
    let (low, high) = config.random_plies;
    let plies = rng.random_range(low..=high.max(low));
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return None;
        }
        pos.make_move(moves[rng.random_range(0..moves.len())]);
    }
    let over = pos.legal_moves().is_empty() || pos.is_insufficient_material();
    (!over).then_some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offline::datagen::{game_rng, Format, NodeLimit};
    use crate::syzygy::Tablebases;

    fn config(book: Vec<String>, random_plies: (u32, u32), max_score: i32) -> Config {
        Config {
            out: std::path::PathBuf::new(),
            network: None,
            games: None,
            positions: None,
            seed: 3,
            threads: 1,
            nodes: 300,
            node_limit: NodeLimit::Soft,
            verify_nodes: 300,
            opening_max_score: max_score,
            book,
            random_plies,
            tablebases: Tablebases::default(),
            format: Format::Games,
            verbose: false,
        }
    }

    /// A game thread's table and searcher.
    fn engine() -> (Arc<TranspositionTable>, Searcher) {
        let tt = Arc::new(TranspositionTable::new(1));
        let searcher = Searcher::new();
        (tt, searcher)
    }

    fn opening_of(
        config: &Config,
        game: u64,
        engine: &mut (Arc<TranspositionTable>, Searcher),
    ) -> Opening {
        opening(
            config,
            &mut game_rng(config.seed, game),
            &engine.0,
            &mut engine.1,
        )
    }

    /// Plies played since the start position, from a FEN's side to move and move number.
    fn plies_from_start(pos: &Position) -> u32 {
        let fen = pos.fen();
        let fields: Vec<&str> = fen.split_whitespace().collect();
        let fullmove: u32 = fields[5].parse().unwrap();
        2 * (fullmove - 1) + u32::from(fields[1] == "b")
    }

    #[test]
    fn random_ply_openings_are_legal_deterministic_and_verified() {
        let config = config(Vec::new(), (6, 9), DEFAULT_MAX_OPENING_SCORE);
        let mut first = engine();
        let mut second = engine();
        let mut lengths = Vec::new();
        for game in 0..12 {
            let drawn = opening_of(&config, game, &mut first);
            let pos = &drawn.position;
            // A legal position with a move to play, reached by 6 to 9 plies from the start.
            let fen = pos.fen();
            let again = Position::from_fen(&fen, false).expect("a legal position");
            assert!(!again.legal_moves().is_empty(), "{fen}");
            assert!(!again.is_insufficient_material(), "{fen}");
            let plies = plies_from_start(pos);
            assert!((6..=9).contains(&plies), "{plies} plies: {fen}");
            lengths.push(plies);
            assert!(drawn.score.abs() <= DEFAULT_MAX_OPENING_SCORE, "{fen}");
            // The same game gives the same opening on another thread's table, whatever that
            // thread searched before.
            let replayed = opening_of(&config, game, &mut second);
            assert_eq!(replayed.position.fen(), fen);
            assert_eq!((replayed.score, replayed.tries), (drawn.score, drawn.tries));
        }
        lengths.sort_unstable();
        lengths.dedup();
        assert!(lengths.len() > 1, "the ply count varies: {lengths:?}");
    }

    #[test]
    fn openings_scored_beyond_the_limit_are_drawn_again() {
        let strict = config(Vec::new(), (8, 8), 30);
        let any = config(Vec::new(), (8, 8), i32::MAX);
        let mut engine = engine();
        let mut redrawn = 0;
        for game in 0..12 {
            let kept = opening_of(&strict, game, &mut engine);
            assert!(kept.score.abs() <= 30, "{}", kept.score);
            // Without a limit the game keeps its first draw: the one the limit threw away
            // when it took more than one draw.
            let first = opening_of(&any, game, &mut engine);
            assert_eq!(first.tries, 1);
            if kept.tries > 1 {
                redrawn += 1;
                assert!(first.score.abs() > 30, "{} was thrown away", first.score);
                assert_ne!(first.position.fen(), kept.position.fen());
            } else {
                assert_eq!(first.position.fen(), kept.position.fen());
            }
        }
        assert!(redrawn > 0, "a limit of 30 cp throws some openings away");
    }

    #[test]
    fn a_book_position_is_the_start_and_nothing_is_played_past_max_tries() {
        // White is a rook up: every opening from it is beyond 400 cp, so the most balanced
        // of the draws is played.
        let book = vec!["4k3/pppppppp/8/8/8/8/PPPPPPPP/R3K3 w Q - 0 1".to_string()];
        let mut config = config(book, (0, 0), DEFAULT_MAX_OPENING_SCORE);
        config.verify_nodes = 1;
        let drawn = opening_of(&config, 0, &mut engine());
        assert_eq!(drawn.position.fen(), config.book[0]);
        assert_eq!(drawn.tries, MAX_OPENING_TRIES);
        assert!(drawn.score > DEFAULT_MAX_OPENING_SCORE);
        // Two random plies from it.
        config.random_plies = (2, 2);
        let drawn = opening_of(&config, 0, &mut engine());
        assert_eq!(plies_from_start(&drawn.position), 2);
    }
}
