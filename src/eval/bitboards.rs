//! Bitboard helpers of the evaluation: squares and spans seen from one colour's side.

use shakmaty::{Bitboard, Color, File, Rank, Square};

/// The square as seen from `color`'s side of the board (rank 1 is that colour's back rank).
#[inline]
pub fn relative(sq: Square, color: Color) -> usize {
    match color {
        Color::White => sq as usize,
        Color::Black => sq as usize ^ 56,
    }
}

#[inline]
pub fn relative_rank(sq: Square, color: Color) -> usize {
    relative(sq, color) / 8
}

#[inline]
pub fn file_mask(file: File) -> Bitboard {
    Bitboard::from(file)
}

#[inline]
pub fn adjacent_files(file: File) -> Bitboard {
    let bb = file_mask(file).0;
    Bitboard(((bb << 1) & !Bitboard::from(File::A).0) | ((bb >> 1) & !Bitboard::from(File::H).0))
}

/// Ranks strictly in front of `rank` from `color`'s side.
#[inline]
pub fn ranks_ahead(rank: Rank, color: Color) -> Bitboard {
    let r = rank as u32;
    match color {
        Color::White if r == 7 => Bitboard::EMPTY,
        Color::White => Bitboard(!0u64 << (8 * (r + 1))),
        Color::Black => Bitboard((1u64 << (8 * r)) - 1),
    }
}

/// Squares strictly in front of `sq` on its file.
#[inline]
pub fn file_ahead(sq: Square, color: Color) -> Bitboard {
    file_mask(sq.file()) & ranks_ahead(sq.rank(), color)
}

/// Squares strictly in front of `sq` on its file and both neighbours.
#[inline]
pub fn front_span(sq: Square, color: Color) -> Bitboard {
    (file_mask(sq.file()) | adjacent_files(sq.file())) & ranks_ahead(sq.rank(), color)
}

/// One step toward the enemy side.
#[inline]
pub fn forward(bb: Bitboard, color: Color) -> Bitboard {
    match color {
        Color::White => Bitboard(bb.0 << 8),
        Color::Black => Bitboard(bb.0 >> 8),
    }
}

/// Every square the pawns of `color` attack.
#[inline]
pub fn pawn_attacks(pawns: Bitboard, color: Color) -> Bitboard {
    let ahead = forward(pawns, color).0;
    let not_a = !Bitboard::from(File::A).0;
    let not_h = !Bitboard::from(File::H).0;
    Bitboard(((ahead & not_h) << 1) | ((ahead & not_a) >> 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_helpers() {
        assert_eq!(adjacent_files(File::A), file_mask(File::B));
        assert_eq!(
            adjacent_files(File::D),
            file_mask(File::C) | file_mask(File::E)
        );
        assert_eq!(
            pawn_attacks(Bitboard::from(Square::A2), Color::White),
            Bitboard::from(Square::B3)
        );
        assert_eq!(
            pawn_attacks(Bitboard::from(Square::E7), Color::Black),
            Bitboard::from(Square::D6) | Bitboard::from(Square::F6)
        );
        assert_eq!(file_ahead(Square::E6, Color::White).count(), 2);
        assert_eq!(file_ahead(Square::E6, Color::Black).count(), 5);
        assert_eq!(front_span(Square::A7, Color::Black).count(), 12);
    }
}
