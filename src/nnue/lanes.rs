//! f32 vectors aligned to 32 bytes, for the float network and the trainer's gradients.
//!
//! The portable build is tuned for x86-64-v2, where the compiler splits every 32-byte load
//! or store it cannot prove aligned into two 16-byte halves: the trainer's AVX2 loops ran no
//! faster than SSE2 ones on plain `Vec<f32>` rows. Stored as [`Lanes`] (eight f32 aligned to
//! 32 bytes) and read through [`as_lanes`], a row of a hidden size that is a multiple of 8
//! is whole aligned registers, and the compiler knows it.

use std::ops::{Deref, DerefMut};

/// `N` f32 aligned to 32 bytes, `N` a multiple of [`LANES`]: whole AVX2 registers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub struct Lanes<const N: usize = LANES>(pub [f32; N]);

impl<const N: usize> Default for Lanes<N> {
    fn default() -> Lanes<N> {
        Lanes([0.0; N])
    }
}

impl<const N: usize> Lanes<N> {
    /// Holds for the `N` of any `Lanes` that [`as_lanes`] hands out: a multiple of eight
    /// f32 is a multiple of the alignment, so the type has no padding and a slice of them
    /// is a slice of f32 `N` times as long.
    const NO_PADDING: () =
        assert!(N > 0 && N.is_multiple_of(LANES) && size_of::<Lanes<N>>() == 4 * N);
}

/// f32 values in one AVX2 register, the smallest [`Lanes`].
pub const LANES: usize = 8;

// Eight f32 and nothing else.
const _: () = assert!(size_of::<Lanes>() == 32 && align_of::<Lanes>() == 32);

/// A fixed number of f32 values whose first one sits on a 32-byte boundary. Dereferences
/// to `[f32]`; the padding after `len` values (fewer than eight) is never shown.
#[derive(Clone, Default)]
pub struct AlignedF32s {
    lanes: Vec<Lanes>,
    len: usize,
}

impl AlignedF32s {
    /// `len` zeros.
    pub fn zeros(len: usize) -> AlignedF32s {
        AlignedF32s {
            lanes: vec![Lanes::default(); len.div_ceil(LANES)],
            len,
        }
    }

    /// A copy of `values`.
    pub fn from_slice(values: &[f32]) -> AlignedF32s {
        let mut aligned = AlignedF32s::zeros(values.len());
        aligned.copy_from_slice(values);
        aligned
    }
}

impl Deref for AlignedF32s {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        // SAFETY: `lanes` holds `lanes.len()` initialised `Lanes`, each exactly eight f32
        // with no padding (`repr(C)`, checked by the assertion above), contiguous in one
        // allocation: `8 * lanes.len()` initialised f32, of which `len` (at most that many,
        // by construction) are shown. f32 needs less alignment than `Lanes` has, and the
        // borrow of `self` keeps the allocation alive and unaliased by writers.
        unsafe { std::slice::from_raw_parts(self.lanes.as_ptr().cast::<f32>(), self.len) }
    }
}

impl DerefMut for AlignedF32s {
    fn deref_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `deref`; the exclusive borrow of `self` makes the slice the only
        // access to these values while it lives, and any f32 written is a valid `Lanes` lane.
        unsafe { std::slice::from_raw_parts_mut(self.lanes.as_mut_ptr().cast::<f32>(), self.len) }
    }
}

impl PartialEq for AlignedF32s {
    fn eq(&self, other: &AlignedF32s) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for AlignedF32s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// `values` as whole [`Lanes`] of `N`, or None when they do not start on a 32-byte
/// boundary or are not a whole number of `N`. A part of an [`AlignedF32s`] that starts at a
/// multiple of eight values and is a multiple of `N` long always is.
#[inline]
pub fn as_lanes<const N: usize>(values: &[f32]) -> Option<&[Lanes<N>]> {
    let () = Lanes::<N>::NO_PADDING;
    if !(values.as_ptr() as usize).is_multiple_of(align_of::<Lanes<N>>())
        || !values.len().is_multiple_of(N)
    {
        return None;
    }
    // SAFETY: the start is aligned for `Lanes<N>` and the length is a whole number of them
    // (both checked above); a `Lanes<N>` is exactly `N` f32 with no padding (`NO_PADDING`),
    // so every bit pattern of them is a valid one; the result borrows `values`, so it lives
    // no longer and no writer aliases it.
    Some(unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<Lanes<N>>(), values.len() / N)
    })
}

/// [`as_lanes`] for values to change in place.
#[inline]
pub fn as_lanes_mut<const N: usize>(values: &mut [f32]) -> Option<&mut [Lanes<N>]> {
    let () = Lanes::<N>::NO_PADDING;
    if !(values.as_ptr() as usize).is_multiple_of(align_of::<Lanes<N>>())
        || !values.len().is_multiple_of(N)
    {
        return None;
    }
    // SAFETY: as in `as_lanes`, with the exclusive borrow of `values` passed on to the
    // result, and any f32 written through it being a valid f32.
    Some(unsafe {
        std::slice::from_raw_parts_mut(values.as_mut_ptr().cast::<Lanes<N>>(), values.len() / N)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values read and written through every view are the same values, the start is
    /// aligned whatever the length, and misaligned or partial views are refused.
    #[test]
    fn views_share_the_values_and_check_alignment() {
        for len in [0, 1, 7, 8, 9, 64, 1000] {
            let mut values = AlignedF32s::zeros(len);
            assert_eq!(values.len(), len);
            assert!((values.as_ptr() as usize).is_multiple_of(32));
            for (i, v) in values.iter_mut().enumerate() {
                *v = i as f32;
            }
            let copy = values.clone();
            assert_eq!(copy, values);
            assert_eq!(AlignedF32s::from_slice(&values), values);
            let whole = len - len % LANES;
            let lanes = as_lanes::<LANES>(&values[..whole]).expect("aligned, whole lanes");
            assert_eq!(lanes.len(), whole / LANES);
            for (i, lane) in lanes.iter().enumerate() {
                assert_eq!(lane.0, std::array::from_fn(|k| (i * LANES + k) as f32));
            }
            if let Some(lane) = as_lanes_mut::<LANES>(&mut values[..whole])
                .unwrap()
                .last_mut()
            {
                lane.0[7] = -1.0;
                assert_eq!(values[whole - 1], -1.0);
            }
            if len >= 9 {
                assert!(as_lanes::<8>(&values[1..9]).is_none(), "misaligned start");
                assert!(as_lanes::<8>(&values[..7]).is_none(), "partial lanes");
                assert!(as_lanes_mut::<8>(&mut values[8..]).is_some() == ((len - 8) % 8 == 0));
            }
            if len >= 64 {
                let wide = as_lanes::<64>(&values[..64]).expect("64 aligned values");
                assert_eq!(wide[0].0[63], values[63]);
                assert!(
                    as_lanes::<16>(&values[8..24]).is_some(),
                    "32 bytes in: aligned"
                );
                assert!(
                    as_lanes::<16>(&values[4..20]).is_none(),
                    "16 bytes in: misaligned"
                );
                assert!(
                    as_lanes::<16>(&values[8..32]).is_none(),
                    "not whole blocks of 16"
                );
            }
        }
    }
}
