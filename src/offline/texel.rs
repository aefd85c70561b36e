//! Texel tuning of the evaluation weights.
//!
//! The evaluation is linear in its weights before tapering (see `eval::trace`), so each
//! labelled position is stored once as its sparse coefficient vector and the whole data set
//! is re-evaluated for any weight vector without touching a board again. The error is the
//! mean squared difference between the game result and `sigmoid(K · eval)`; K is fitted
//! first (with the starting weights), then every weight moves at once by Adam on the exact
//! full-batch gradient.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Instant;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::eval::{self, Score, Trace, BLOCKS, FULL_SCALE, MAX_PHASE, NUM_WEIGHTS, WEIGHTS};

/// One labelled position, reduced to what the error needs.
#[derive(Clone, Copy, Debug)]
struct TexelSample {
    /// Range of this sample's coefficients in `Dataset::coefficients`.
    start: u32,
    len: u16,
    phase: u8,
    /// Material scale when White / Black is the stronger side.
    scale: [u8; 2],
    fifty_move_factor: u8,
    /// Game result for White: 1, 0.5 or 0.
    result: f32,
}

/// Labelled positions as coefficient vectors.
#[derive(Default)]
pub struct Dataset {
    samples: Vec<TexelSample>,
    coefficients: Vec<(u16, i16)>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    fn push(&mut self, trace: &Trace, result: f32) {
        self.samples.push(TexelSample {
            start: self.coefficients.len() as u32,
            len: trace.coefficients.len() as u16,
            phase: trace.phase.clamp(0, MAX_PHASE) as u8,
            scale: trace.scale.map(|s| s as u8),
            fifty_move_factor: trace.fifty_move_factor as u8,
            result,
        });
        self.coefficients.extend_from_slice(&trace.coefficients);
    }

    /// Splits off the last `share` of the samples (the data file is shuffled, so the tail is
    /// a fair sample) as the validation set.
    pub fn split(mut self, share: f64) -> (Dataset, Dataset) {
        let keep = self.samples.len() - (self.samples.len() as f64 * share).round() as usize;
        let tail = self.samples.split_off(keep);
        let mut validation = Dataset::default();
        for s in tail {
            let coefficients = &self.coefficients[s.start as usize..][..s.len as usize];
            validation.samples.push(TexelSample {
                start: validation.coefficients.len() as u32,
                ..s
            });
            validation.coefficients.extend_from_slice(coefficients);
        }
        if let Some(last) = self.samples.last() {
            self.coefficients
                .truncate(last.start as usize + last.len as usize);
        }
        (self, validation)
    }
}

/// The weight vector as floats: `[mg0, eg0, mg1, eg1, ...]`.
pub type Weights = Vec<f64>;

pub fn current_weights() -> Weights {
    WEIGHTS
        .iter()
        .flat_map(|s| [s.mg as f64, s.eg as f64])
        .collect()
}

/// The evaluation of a sample (White's view, centipawns) and, for the gradient, the
/// derivatives by one unit of a coefficient's middlegame and endgame weight.
#[inline]
fn evaluate(sample: &TexelSample, coefficients: &[(u16, i16)], w: &[f64]) -> (f64, f64, f64) {
    let mut mg = 0.0;
    let mut eg = 0.0;
    for &(i, c) in coefficients {
        let c = c as f64;
        mg += c * w[2 * i as usize];
        eg += c * w[2 * i as usize + 1];
    }
    let phase = sample.phase as f64;
    let max_phase = MAX_PHASE as f64;
    let unscaled = mg * phase + eg * (max_phase - phase);
    let scale = sample.scale[usize::from(unscaled < 0.0)] as f64;
    let factor = scale / FULL_SCALE as f64 * sample.fifty_move_factor as f64 / 200.0 / max_phase;
    let d_mg = phase * factor;
    let d_eg = (max_phase - phase) * factor;
    (mg * d_mg + eg * d_eg, d_mg, d_eg)
}

#[inline]
fn sigmoid(k: f64, eval: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * eval / 400.0))
}

fn coefficients_of<'a>(data: &'a Dataset, s: &TexelSample) -> &'a [(u16, i16)] {
    &data.coefficients[s.start as usize..][..s.len as usize]
}

/// Mean squared error of the data set under weights `w` and scaling constant `k`.
pub fn error(data: &Dataset, w: &[f64], k: f64, threads: usize) -> f64 {
    let sum: f64 = chunks(data, threads, |samples| {
        samples
            .iter()
            .map(|s| {
                let (e, _, _) = evaluate(s, coefficients_of(data, s), w);
                let d = s.result as f64 - sigmoid(k, e);
                d * d
            })
            .sum::<f64>()
    })
    .into_iter()
    .sum();
    sum / data.len().max(1) as f64
}

/// The gradient of `error` by every weight.
pub fn gradient(data: &Dataset, w: &[f64], k: f64, threads: usize) -> Weights {
    let parts = chunks(data, threads, |samples| {
        let mut g = vec![0.0; w.len()];
        for s in samples {
            let coefficients = coefficients_of(data, s);
            let (e, d_mg, d_eg) = evaluate(s, coefficients, w);
            let p = sigmoid(k, e);
            // d/de (r - p)^2 = -2 (r - p) p (1 - p) K ln10 / 400
            let d_error =
                -2.0 * (s.result as f64 - p) * p * (1.0 - p) * k * std::f64::consts::LN_10 / 400.0;
            for &(i, c) in coefficients {
                let c = c as f64 * d_error;
                g[2 * i as usize] += c * d_mg;
                g[2 * i as usize + 1] += c * d_eg;
            }
        }
        g
    });
    let n = data.len().max(1) as f64;
    let mut total = vec![0.0; w.len()];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            *t += p / n;
        }
    }
    total
}

/// Runs `f` over `threads` contiguous slices of the samples.
fn chunks<T: Send>(
    data: &Dataset,
    threads: usize,
    f: impl Fn(&[TexelSample]) -> T + Sync,
) -> Vec<T> {
    let size = data.samples.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = data
            .samples
            .chunks(size)
            .map(|part| scope.spawn(|| f(part)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("tuner thread panicked"))
            .collect()
    })
}

/// The K minimising the error for fixed weights (golden-section search; the error is
/// unimodal in K).
pub fn fit_k(data: &Dataset, w: &[f64], threads: usize) -> f64 {
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut lo, mut hi) = (0.05, 4.0);
    for _ in 0..40 {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if error(data, w, a, threads) < error(data, w, b, threads) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

/// Settings of one tuning run.
pub struct TexelSettings {
    pub epochs: usize,
    pub learning_rate: f64,
    pub threads: usize,
    /// Weight of the L2 penalty `Σ (w - w_start)²` added to the error. Weights that few
    /// positions touch (a king on a5 in the middlegame) barely change the error, so Adam,
    /// which moves every weight at the same rate, lets them drift to wild values; the
    /// penalty holds them near their starting values while well-determined ones move freely.
    pub regularization: f64,
    /// Weights (in `[mg0, eg0, mg1, ...]` order) that keep their starting value.
    pub frozen: Vec<bool>,
}

/// Which of the `[mg0, eg0, ...]` weights `spec` freezes: comma-separated block names
/// (`*` at the end matches a prefix), each optionally with `:mg` or `:eg` for one half.
pub fn frozen_weights(spec: &str) -> Result<Vec<bool>, String> {
    let mut frozen = vec![false; 2 * NUM_WEIGHTS];
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, halves) = match item.split_once(':') {
            Some((n, "mg")) => (n, [true, false]),
            Some((n, "eg")) => (n, [false, true]),
            Some((_, other)) => return Err(format!("unknown half '{other}' in '{item}'")),
            None => (item, [true, true]),
        };
        let matches = |block: &str| match name.strip_suffix('*') {
            Some(prefix) => block.starts_with(prefix),
            None => block == name,
        };
        let blocks: Vec<_> = BLOCKS.iter().filter(|b| matches(b.name)).collect();
        if blocks.is_empty() {
            return Err(format!("no weight block matches '{name}'"));
        }
        for b in blocks {
            for i in b.start..b.start + b.len {
                frozen[2 * i] |= halves[0];
                frozen[2 * i + 1] |= halves[1];
            }
        }
    }
    Ok(frozen)
}

/// Adam on the full-batch gradient; prints the errors every `report_every` epochs.
pub fn adam(
    train: &Dataset,
    validation: &Dataset,
    mut w: Weights,
    k: f64,
    settings: &TexelSettings,
    report: &mut dyn FnMut(String),
) -> Weights {
    let (beta1, beta2, epsilon) = (0.9, 0.999, 1e-8);
    let mut m = vec![0.0; w.len()];
    let mut v = vec![0.0; w.len()];
    let start = w.clone();
    let started = Instant::now();
    for epoch in 1..=settings.epochs {
        let mut g = gradient(train, &w, k, settings.threads);
        for ((gi, wi), si) in g.iter_mut().zip(&w).zip(&start) {
            *gi += 2.0 * settings.regularization * (wi - si);
        }
        // Halve the step over the last half of the run to settle into the minimum.
        let progress = epoch as f64 / settings.epochs as f64;
        let lr = settings.learning_rate * if progress > 0.5 { 0.5 } else { 1.0 };
        let t = epoch as i32;
        for i in 0..w.len() {
            if settings.frozen.get(i).copied().unwrap_or(false) {
                continue;
            }
            m[i] = beta1 * m[i] + (1.0 - beta1) * g[i];
            v[i] = beta2 * v[i] + (1.0 - beta2) * g[i] * g[i];
            let m_hat = m[i] / (1.0 - beta1.powi(t));
            let v_hat = v[i] / (1.0 - beta2.powi(t));
            w[i] -= lr * m_hat / (v_hat.sqrt() + epsilon);
        }
        if epoch % 100 == 0 || epoch == settings.epochs {
            report(format!(
                "epoch {epoch:5}  train {:.7}  validation {:.7}  {:.0} s",
                error(train, &w, k, settings.threads),
                error(validation, &w, k, settings.threads),
                started.elapsed().as_secs_f64()
            ));
        }
    }
    w
}

/// Parses `<FEN> | <result>` lines (result 1.0 / 0.5 / 0.0 for White). With `quiet`,
/// each position is replaced by the end of its capture-only principal variation, and
/// positions in check are dropped (their static evaluation means little). Returns the data
/// set and the number of lines skipped.
pub fn load(
    path: &Path,
    quiet: bool,
    limit: Option<usize>,
    threads: usize,
) -> std::io::Result<(Dataset, usize)> {
    let reader = BufReader::new(File::open(path)?);
    let mut lines = Vec::new();
    for line in reader.lines() {
        lines.push(line?);
        if limit.is_some_and(|l| lines.len() >= l) {
            break;
        }
    }
    let size = lines.len().div_ceil(threads.max(1)).max(1);
    let parsed: Vec<Vec<Option<(Trace, f32)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(size)
            .map(|part| scope.spawn(move || part.iter().map(|l| parse_line(l, quiet)).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("loader thread panicked"))
            .collect()
    });
    let mut data = Dataset::default();
    let mut skipped = 0;
    for entry in parsed.into_iter().flatten() {
        match entry {
            Some((trace, result)) => data.push(&trace, result),
            None => skipped += 1,
        }
    }
    Ok((data, skipped))
}

fn parse_line(line: &str, quiet: bool) -> Option<(Trace, f32)> {
    let (fen, result) = line.split_once('|')?;
    let result: f32 = result.trim().parse().ok()?;
    if !(0.0..=1.0).contains(&result) {
        return None;
    }
    let board: Chess = fen
        .trim()
        .parse::<Fen>()
        .ok()?
        .into_position(CastlingMode::Standard)
        .ok()?;
    let board = if quiet {
        if board.is_check() {
            return None;
        }
        quiet_leaf(&board)
    } else {
        board
    };
    Some((eval::trace(&board), result))
}

/// Longest a capture sequence is followed when resolving a position.
const QUIET_MAX_PLY: u32 = 8;

/// The position at the end of the capture-only principal variation of `board`.
pub fn quiet_leaf(board: &Chess) -> Chess {
    qsearch(board, -100_000, 100_000, 0).1
}

fn qsearch(board: &Chess, mut alpha: i32, beta: i32, ply: u32) -> (i32, Chess) {
    let stand_pat = eval::evaluate(board);
    let mut best = (stand_pat, board.clone());
    if stand_pat >= beta || ply >= QUIET_MAX_PLY {
        return best;
    }
    alpha = alpha.max(stand_pat);
    let mut captures: Vec<Move> = board.capture_moves().into_iter().collect();
    captures.sort_by_key(|m| {
        let victim = m.capture().map_or(0, |r| r as i32);
        -(victim * 8 - m.role() as i32)
    });
    for m in captures {
        let mut child = board.clone();
        child.play_unchecked(m);
        let (score, leaf) = qsearch(&child, -beta, -alpha, ply + 1);
        let score = -score;
        if score > best.0 {
            best = (score, leaf);
            if score > alpha {
                alpha = score;
                if score >= beta {
                    break;
                }
            }
        }
    }
    best
}

/// Rounds the tuned weights; weights no position uses keep their old value exactly.
pub fn to_scores(w: &[f64]) -> Vec<Score> {
    w.chunks(2)
        .map(|p| Score {
            mg: p[0].round() as i32,
            eg: p[1].round() as i32,
        })
        .collect()
}

/// Writes `weights` as `src/eval/weights.rs`, with `header` lines in its doc comment.
pub fn write_weights(path: &Path, weights: &[Score], header: &[String]) -> std::io::Result<()> {
    assert_eq!(weights.len(), NUM_WEIGHTS);
    let mut out = String::new();
    out.push_str(
        "//! Evaluation weights: (middlegame, endgame) pairs in centipawns, in the order of the\n\
         //! blocks in `layout.rs`. Written by `basalt tune`; change them by re-running it.\n//!\n",
    );
    for line in header {
        out.push_str(&format!("//! {line}\n"));
    }
    out.push_str(
        "\nuse super::layout::NUM_WEIGHTS;\nuse super::tapered::Score;\n\n\
         const fn s(mg: i32, eg: i32) -> Score {\n    Score { mg, eg }\n}\n\n\
         #[rustfmt::skip]\npub const WEIGHTS: [Score; NUM_WEIGHTS] = [\n",
    );
    for block in BLOCKS {
        out.push_str(&format!("    // {} [{}]\n", block.name, block.len));
        for row in weights[block.start..block.start + block.len].chunks(8) {
            let cells: Vec<String> = row
                .iter()
                .map(|s| format!("s({}, {}),", s.mg, s.eg))
                .collect();
            out.push_str(&format!("    {}\n", cells.join(" ")));
        }
    }
    out.push_str("];\n");
    File::create(path)?.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Color;

    /// Positions with a game result and the evaluation (White's view, cp) that `basalt eval`
    /// printed for them with the committed weights ("Hand-crafted evaluation"): a full and a
    /// partial phase, a pawn ending with Black to move and 12 plies on the fifty-move
    /// counter, a rook against a bishop (endgame scale 16/64) and a lone bishop (scale 0).
    /// New weights change the numbers; record the new ones in the commit that writes them.
    const FENS: [(&str, f32, i32); 6] = [
        (
            "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5",
            0.5,
            1,
        ),
        (
            "6k1/1p2qppp/1b3nb1/8/r4N2/P3P1NP/1B3PP1/3Q2K1 w - - 0 27",
            1.0,
            -340,
        ),
        ("8/5k2/8/3KP3/8/8/8/8 b - - 12 60", 1.0, 171),
        ("2r3k1/5ppp/8/8/8/8/1q3PPP/3R2K1 w - - 0 30", 0.0, -1116),
        ("8/8/4k3/3b4/8/2R5/5K2/8 w - - 0 1", 0.5, 58),
        ("8/8/4k3/8/8/2B5/5K2/8 w - - 70 90", 0.5, 0),
    ];

    fn dataset() -> Dataset {
        let mut data = Dataset::default();
        for (fen, result, _) in FENS {
            let line = format!("{fen} | {result}");
            let (trace, result) = parse_line(&line, false).expect("valid line");
            data.push(&trace, result);
        }
        data
    }

    /// The tuner's model of a position (its coefficients, phase, scale and fifty-move factor,
    /// weighted in floating point) gives the evaluation the engine printed, up to the two
    /// roundings toward zero of the integer evaluation (tapering, then damping).
    #[test]
    fn the_tuners_model_gives_the_recorded_evaluations() {
        let data = dataset();
        let w = current_weights();
        for ((fen, _, recorded), sample) in FENS.iter().zip(&data.samples) {
            let board: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            let engine = match board.turn() {
                Color::White => eval::evaluate(&board),
                Color::Black => -eval::evaluate(&board),
            };
            assert_eq!(engine, *recorded, "the evaluation of {fen} changed");
            let (model, _, _) = evaluate(sample, coefficients_of(&data, sample), &w);
            assert!(
                (model - f64::from(*recorded)).abs() < 2.0,
                "{fen}: the tuner's model gives {model}, the engine {recorded}"
            );
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let data = dataset();
        let w = current_weights();
        let k = 1.1;
        let g = gradient(&data, &w, k, 1);
        let mut checked = 0;
        for (i, &gi) in g.iter().enumerate() {
            if gi == 0.0 {
                continue;
            }
            let h = 1e-3;
            let mut plus = w.clone();
            plus[i] += h;
            let mut minus = w.clone();
            minus[i] -= h;
            let numeric = (error(&data, &plus, k, 1) - error(&data, &minus, k, 1)) / (2.0 * h);
            let tolerance = 1e-6 + 1e-3 * numeric.abs();
            assert!(
                (numeric - gi).abs() < tolerance,
                "weight {i}: analytic {gi}, numeric {numeric}"
            );
            checked += 1;
        }
        assert!(checked > 50, "only {checked} weights had a gradient");
    }

    #[test]
    fn frozen_blocks_keep_their_values() {
        let frozen = frozen_weights("MATERIAL:mg,MOBILITY_*").unwrap();
        assert!(
            frozen[2 * crate::eval::BLOCKS[0].start]
                && !frozen[2 * crate::eval::BLOCKS[0].start + 1]
        );
        assert_eq!(
            frozen.iter().filter(|&&f| f).count(),
            6 + 2 * (9 + 14 + 15 + 28)
        );
        assert!(frozen_weights("NOPE").is_err());
        let data = dataset();
        let w = current_weights();
        let settings = TexelSettings {
            epochs: 20,
            learning_rate: 1.0,
            threads: 1,
            regularization: 0.0,
            frozen: frozen.clone(),
        };
        let tuned = adam(
            &data,
            &Dataset::default(),
            w.clone(),
            1.0,
            &settings,
            &mut |_| {},
        );
        for (i, f) in frozen.iter().enumerate() {
            if *f {
                assert_eq!(tuned[i], w[i]);
            }
        }
    }

    #[test]
    fn fitted_k_minimises_the_error() {
        let data = dataset();
        let w = current_weights();
        let k = fit_k(&data, &w, 1);
        let at_k = error(&data, &w, k, 1);
        assert!(at_k <= error(&data, &w, k * 1.2, 1));
        assert!(at_k <= error(&data, &w, k / 1.2, 1));
    }

    #[test]
    fn adam_lowers_the_training_error() {
        let data = dataset();
        let w = current_weights();
        let k = 1.0;
        let before = error(&data, &w, k, 1);
        let settings = TexelSettings {
            epochs: 50,
            learning_rate: 1.0,
            threads: 1,
            regularization: 0.0,
            frozen: Vec::new(),
        };
        let tuned = adam(&data, &Dataset::default(), w, k, &settings, &mut |_| {});
        assert!(error(&data, &tuned, k, 1) < before);
    }

    #[test]
    fn split_keeps_every_sample_and_its_coefficients() {
        let data = dataset();
        let total: Vec<f32> = data.samples.iter().map(|s| s.result).collect();
        let last_coefficients = coefficients_of(&data, &data.samples[5]).to_vec();
        let (train, validation) = data.split(0.4);
        assert_eq!(train.len(), 4);
        assert_eq!(validation.len(), 2);
        assert_eq!(validation.samples[1].result, total[5]);
        assert_eq!(
            coefficients_of(&validation, &validation.samples[1]),
            last_coefficients
        );
    }

    #[test]
    fn quiet_leaf_resolves_a_hanging_capture() {
        // White's queen takes the undefended rook on d8.
        let board: Chess = "3r2k1/5ppp/8/8/8/8/5PPP/3Q2K1 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let leaf = quiet_leaf(&board);
        assert_eq!(
            leaf.board().rooks().count(),
            0,
            "the rook should have been taken"
        );
    }
}
