//! PGN games with search scores, as fastchess writes them (cutechess's comments have the
//! same form) and OpenBench's DATAGEN workloads return them, read into games of the games
//! file (`games.rs`).
//!
//! Each move of an engine carries a comment whose first word is its search's score and
//! depth, from the side to move's view: `{+0.35/12 0.123s, n=51234, sd=18}`, `{-1.20/9}`
//! (OpenBench's compact form), `{+M5/20 ...}` (mating in 5 plies: fastchess counts a mate
//! in plies), `{-M4/30 ...}` (mated in 4 plies). Moves from the opening book say `{book}`. A game becomes the games file's
//! game: its start is the position after the moves before the first scored one (the `FEN`
//! tag's position or the start position, then the book moves), each scored move a ply with
//! the score turned to White's view, and the result the `Result` tag's. Which of those
//! positions train the net is decided when the file is read, by the rule every games file
//! follows (`games::Selection::Quiet`: not in check, the move neither a capture nor a
//! promotion, no mate score), so a game converted from PGN yields the positions a game
//! `basalt datagen` played would.
//!
//! Games that cannot become training data are skipped and counted by reason: unfinished
//! (`Result "*"`), ended by something other than the board or adjudication (`Termination`
//! "time forfeit", "abandoned", "illegal move", ...: the result says nothing about the
//! position), another variant, no scored move (a PGN written with fastchess's `min=true`),
//! or a move without a score after scored ones. Text that is not a PGN, an illegal move or
//! a bad FEN is an error naming its line.

use std::collections::BTreeMap;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Bitboard, CastlingMode, Chess, Color, Position};

use super::format::GameResult;
use super::games::{Game, Ply};
use crate::score::{MATE, MATE_BOUND, MAX_PLY};

/// A game as the PGN gives it.
#[derive(Debug, Default)]
struct RawGame {
    /// The line it starts on.
    line: usize,
    tags: Vec<(String, String)>,
    moves: Vec<RawMove>,
}

#[derive(Debug)]
struct RawMove {
    san: String,
    /// The comments after it, joined.
    comment: Option<String>,
    line: usize,
}

impl RawGame {
    fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.moves.is_empty()
    }
}

/// What a PGN text held.
#[derive(Debug, Default)]
pub struct Read {
    /// The games kept, in the text's order.
    pub games: Vec<Game>,
    /// Every game in the text, kept or not.
    pub seen: u64,
    /// Games skipped, by reason.
    pub skipped: BTreeMap<String, u64>,
}

impl Read {
    /// Adds another text's games after these.
    pub fn append(&mut self, other: Read) {
        self.games.extend(other.games);
        self.seen += other.seen;
        for (reason, count) in other.skipped {
            *self.skipped.entry(reason).or_default() += count;
        }
    }
}

/// Reads every game of a PGN text; an error names the line.
pub fn read(text: &str) -> Result<Read, String> {
    let mut read = Read::default();
    for raw in split_games(text)? {
        read.seen += 1;
        match to_game(&raw)? {
            Ok(game) => read.games.push(game),
            Err(reason) => *read.skipped.entry(reason).or_default() += 1,
        }
    }
    Ok(read)
}

/// The games of a PGN text: tag pairs, then movetext up to a result (`1-0`, `0-1`,
/// `1/2-1/2`, `*`) or the next tag. Comments (`{...}`, `;` to the end of the line),
/// variations, NAGs and move numbers are read past; a comment belongs to the move before it.
fn split_games(text: &str) -> Result<Vec<RawGame>, String> {
    // Every byte the syntax looks at is ASCII, so the slices taken between them are text.
    let bytes = text.as_bytes();
    let mut games = Vec::new();
    let mut game = RawGame::default();
    let mut in_movetext = false;
    let (mut i, mut line) = (0, 1);
    let finish = |game: &mut RawGame, games: &mut Vec<RawGame>| {
        if !game.is_empty() {
            games.push(std::mem::take(game));
        }
    };
    while i < bytes.len() {
        let c = bytes[i];
        if game.is_empty() {
            game.line = line;
        }
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'[' => {
                if in_movetext {
                    finish(&mut game, &mut games);
                    game.line = line;
                    in_movetext = false;
                }
                let (tag, next) = read_tag(text, i).map_err(|e| format!("line {line}: {e}"))?;
                game.tags.push(tag);
                i = next;
            }
            b'{' => {
                let Some(length) = bytes[i + 1..].iter().position(|&b| b == b'}') else {
                    return Err(format!("line {line}: a comment `{{` is never closed"));
                };
                let comment = &text[i + 1..i + 1 + length];
                line += comment.matches('\n').count();
                i += length + 2;
                if let Some(last) = game.moves.last_mut() {
                    let text = last.comment.get_or_insert_with(String::new);
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(comment.trim());
                }
            }
            b';' | b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => {
                let start = line;
                let mut depth = 0;
                while i < bytes.len() {
                    match bytes[i] {
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        b'\n' => line += 1,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                if depth != 0 {
                    return Err(format!("line {start}: a variation `(` is never closed"));
                }
            }
            _ => {
                let start = i;
                while i < bytes.len()
                    && !bytes[i].is_ascii_whitespace()
                    && !b"{}()[];".contains(&bytes[i])
                {
                    i += 1;
                }
                if start == i {
                    return Err(format!("line {line}: unexpected `{}`", char::from(c)));
                }
                let word = &text[start..i];
                in_movetext = true;
                if matches!(word, "1-0" | "0-1" | "1/2-1/2" | "*") {
                    finish(&mut game, &mut games);
                    in_movetext = false;
                    continue;
                }
                // A move number (`12.`, `12...`), perhaps run into its move (`12.e4`); no
                // move starts with a digit but `0-0`, whose digits are not followed by a dot.
                let san = match word.find(|c: char| !c.is_ascii_digit()) {
                    Some(at) if at > 0 && word[at..].starts_with('.') => {
                        word[at..].trim_start_matches('.')
                    }
                    _ => word,
                };
                if san.is_empty() || san.starts_with('$') {
                    continue;
                }
                game.moves.push(RawMove {
                    san: san.to_string(),
                    comment: None,
                    line,
                });
            }
        }
    }
    finish(&mut game, &mut games);
    Ok(games)
}

/// The tag pair `[Name "value"]` at byte `at` of `text`, and the index after it.
fn read_tag(text: &str, at: usize) -> Result<((String, String), usize), String> {
    let bytes = text.as_bytes();
    let mut i = at + 1;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    let name = &text[at + 1..i];
    while i < bytes.len() && bytes[i] == b' ' {
        i += 1;
    }
    if name.is_empty() || bytes.get(i) != Some(&b'"') {
        return Err("a tag is not `[Name \"value\"]`".into());
    }
    i += 1;
    let mut value = Vec::new();
    loop {
        match bytes.get(i) {
            Some(b'"') => break,
            Some(b'\\') if matches!(bytes.get(i + 1), Some(b'"' | b'\\')) => {
                value.push(bytes[i + 1]);
                i += 2;
            }
            Some(b'\n') | None => return Err(format!("the tag {name} is not closed")),
            Some(&b) => {
                value.push(b);
                i += 1;
            }
        }
    }
    i += 1;
    while i < bytes.len() && bytes[i] == b' ' {
        i += 1;
    }
    if bytes.get(i) != Some(&b']') {
        return Err(format!("the tag {name} is not closed by `]`"));
    }
    let value = String::from_utf8_lossy(&value).into_owned();
    Ok(((name.to_string(), value), i + 1))
}

/// The search score a move's comment opens with, in the engine's units from the side to
/// move's view (`MATE - n` for a mate in `n` plies); `None` for a comment without one: a
/// book move, `unknown`, or a depth of 0 (fastchess writes `0.00/0` for a move whose engine
/// printed no `info` line).
pub fn comment_score(comment: &str) -> Option<i32> {
    let first = comment.split([' ', ',', '\t', '\n']).next()?;
    let (score, depth) = first.split_once('/')?;
    if depth.parse::<u32>().ok()? == 0 {
        return None;
    }
    let (negative, magnitude) = match score.as_bytes().first()? {
        b'+' => (false, &score[1..]),
        b'-' => (true, &score[1..]),
        _ => (false, score),
    };
    let value = if let Some(plies) = magnitude.strip_prefix('M') {
        // A mate beyond what a search can see is still a mate score.
        let plies: i32 = plies.parse().ok()?;
        MATE - plies.min(MAX_PLY as i32 - 1)
    } else {
        if magnitude.is_empty() || !magnitude.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        let pawns: f64 = magnitude.parse().ok()?;
        // A centipawn score never reads as a mate score.
        (pawns * 100.0).round().min(f64::from(MATE_BOUND)) as i32
    };
    Some(if negative { -value } else { value })
}

/// The game `raw` holds, `Ok(Err(reason))` when it is skipped, or an error naming the line
/// of what is wrong with it.
fn to_game(raw: &RawGame) -> Result<Result<Game, String>, String> {
    let result = match raw.tag("Result") {
        Some("1-0") => GameResult::WhiteWin,
        Some("0-1") => GameResult::BlackWin,
        Some("1/2-1/2") => GameResult::Draw,
        _ => return Ok(Err("unfinished (Result \"*\" or none)".into())),
    };
    if let Some(termination) = raw.tag("Termination") {
        if !["normal", "adjudication"]
            .iter()
            .any(|t| termination.eq_ignore_ascii_case(t))
        {
            return Ok(Err(format!("Termination \"{termination}\"")));
        }
    }
    if let Some(variant) = raw.tag("Variant") {
        if !["standard", "chess"]
            .iter()
            .any(|v| variant.eq_ignore_ascii_case(v))
        {
            return Ok(Err(format!("Variant \"{variant}\"")));
        }
    }
    let mut pos = match raw.tag("FEN") {
        None => Chess::default(),
        Some(fen) => fen
            .parse::<Fen>()
            .map_err(|e| e.to_string())
            .and_then(|f| {
                f.into_position(CastlingMode::Standard)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| format!("line {}: FEN \"{fen}\": {e}", raw.line))?,
    };
    if !(pos.castles().castling_rights() & !Bitboard::CORNERS).is_empty() {
        return Ok(Err("castling rights off the corner rooks".into()));
    }
    let mut start = pos.clone();
    let mut plies = Vec::new();
    for raw_move in &raw.moves {
        let san = raw_move.san.trim_end_matches(['!', '?']);
        let m = san
            .parse::<SanPlus>()
            .ok()
            .and_then(|s| s.san.to_move(&pos).ok())
            .ok_or_else(|| {
                format!(
                    "line {}: `{}` is not a legal move in {}",
                    raw_move.line,
                    raw_move.san,
                    Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
                )
            })?;
        match raw_move.comment.as_deref().and_then(comment_score) {
            // The opening: moves before the first search move the start.
            None if plies.is_empty() => {
                pos.play_unchecked(m);
                start = pos.clone();
                continue;
            }
            None => return Ok(Err("a move without a score after scored ones".into())),
            Some(score) => {
                let white = if pos.turn() == Color::White {
                    score
                } else {
                    -score
                };
                plies.push(Ply {
                    best: Some(m),
                    score: white.clamp(-MATE, MATE) as i16,
                });
            }
        }
        pos.play_unchecked(m);
    }
    if plies.is_empty() {
        return Ok(Err("no move with a score (written with min=true?)".into()));
    }
    if plies.len() > usize::from(u16::MAX) {
        return Ok(Err("more than 65,535 plies".into()));
    }
    Ok(Ok(Game {
        start,
        plies,
        result,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uci(game: &Game) -> Vec<String> {
        game.plies
            .iter()
            .map(|p| p.best.unwrap().to_uci(CastlingMode::Standard).to_string())
            .collect()
    }

    #[test]
    fn comments_give_scores_in_the_engines_units() {
        assert_eq!(comment_score("+0.35/12 0.123s, n=51234, sd=18"), Some(35));
        assert_eq!(comment_score("-1.20/9"), Some(-120));
        assert_eq!(comment_score("0.00/14 0.2s"), Some(0));
        assert_eq!(comment_score("+12.07/20, line=abc"), Some(1207));
        assert_eq!(comment_score("+M5/20 0.1s"), Some(MATE - 5));
        assert_eq!(comment_score("-M4/30"), Some(-(MATE - 4)));
        assert!(comment_score("+M500/30").unwrap() > MATE_BOUND);
        assert_eq!(comment_score("+400.00/3"), Some(MATE_BOUND));
        for none in [
            "book",
            "unknown",
            "0.00/0 0ms",
            "ERR/5",
            "+inf/3",
            "/3",
            "+0.35",
            "",
        ] {
            assert_eq!(comment_score(none), None, "{none}");
        }
    }

    #[test]
    fn games_split_at_tags_and_results_past_comments_and_variations() {
        let text = "[Event \"a\"]\n[Result \"1-0\"]\n\n1. e4 {+0.30/10} (1. d4 {x} d5) e5 \
                    {-0.10/9\n 0.1s} $1 2.Nf3 ; rest\n{+0.20/8} 1-0\n\n[Event \"b \\\"q\\\"\"]\n\
                    [Result \"*\"]\n1... e5 *";
        let games = split_games(text).unwrap();
        assert_eq!(games.len(), 2);
        let sans: Vec<&str> = games[0].moves.iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        let comments: Vec<Option<&str>> = games[0]
            .moves
            .iter()
            .map(|m| m.comment.as_deref())
            .collect();
        assert_eq!(
            comments,
            [Some("+0.30/10"), Some("-0.10/9\n 0.1s"), Some("+0.20/8")]
        );
        assert_eq!(games[0].moves[2].line, 5);
        assert_eq!(games[1].tag("Event"), Some("b \"q\""));
        assert_eq!(games[1].line, 8);
        for (bad, words) in [
            ("1. e4 {+0.3/1", "line 1: a comment"),
            ("[Event \"a]\n", "line 1: the tag Event"),
            ("\n\n1. e4 (e3", "line 3: a variation"),
        ] {
            let error = split_games(bad).unwrap_err();
            assert!(error.contains(words), "{bad}: {error}");
        }
    }

    #[test]
    fn book_moves_move_the_start_and_scores_turn_to_whites_view() {
        let text = "[Result \"0-1\"]\n[SetUp \"1\"]\n\
                    [FEN \"r3k3/8/8/8/8/8/8/4K2R b Kq - 3 20\"]\n\n\
                    20... Kd7 {book} 21. O-O {+0.50/10 0.01s} Ra1 {-0.30/9} 22. Rxa1 {+M3/7} 0-1";
        let read = read(text).unwrap();
        assert_eq!((read.seen, read.games.len()), (1, 1));
        let game = &read.games[0];
        assert_eq!(
            Fen::from_position(&game.start, shakmaty::EnPassantMode::Legal).to_string(),
            "r7/3k4/8/8/8/8/8/4K2R w K - 4 21"
        );
        assert_eq!(uci(game), ["e1g1", "a8a1", "f1a1"]);
        let scores: Vec<i16> = game.plies.iter().map(|p| p.score).collect();
        assert_eq!(scores, [50, 30, (MATE - 3) as i16]);
        assert_eq!(game.result, GameResult::BlackWin);
    }

    #[test]
    fn unusable_games_are_skipped_by_reason_and_broken_ones_refused() {
        let game = |tags: &str, moves: &str| format!("{tags}\n\n{moves}\n\n");
        let text = [
            game("[Result \"*\"]", "1. e4 {+0.1/5} *"),
            game(
                "[Result \"1-0\"]\n[Termination \"time forfeit\"]",
                "1. e4 {+0.1/5} 1-0",
            ),
            game(
                "[Result \"1-0\"]\n[Variant \"Chess960\"]",
                "1. e4 {+0.1/5} 1-0",
            ),
            game("[Result \"1-0\"]", "1. e4 e5 2. Nf3 1-0"),
            game("[Result \"1-0\"]", "1. e4 {+0.1/5} e5 {book} 1-0"),
            game(
                "[Result \"1/2-1/2\"]\n[Termination \"adjudication\"]",
                "1. d4 {+0.2/5} 1/2-1/2",
            ),
        ]
        .concat();
        let read = read(&text).unwrap();
        assert_eq!((read.seen, read.games.len()), (6, 1));
        assert_eq!(read.games[0].result, GameResult::Draw);
        let reasons: Vec<&str> = read.skipped.keys().map(String::as_str).collect();
        assert_eq!(
            reasons,
            [
                "Termination \"time forfeit\"",
                "Variant \"Chess960\"",
                "a move without a score after scored ones",
                "no move with a score (written with min=true?)",
                "unfinished (Result \"*\" or none)",
            ]
        );
        let error = super::read("[Result \"1-0\"]\n\n1. e4 {+0.1/5} e4 1-0").unwrap_err();
        assert!(
            error.contains("line 3: `e4` is not a legal move"),
            "{error}"
        );
        let error = super::read("[Result \"1-0\"]\n[FEN \"8/8 w - - 0 1\"]\n\n1-0").unwrap_err();
        assert!(error.starts_with("line 1: FEN"), "{error}");
    }
}
