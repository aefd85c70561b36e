//! The factoriser of a king-bucketed net (`basalt train --factorise`).
//!
//! With K king buckets each feature has K weight rows, and a row learns only from the
//! positions whose king stands in its bucket: with little data most rows see too few
//! positions (nets/README.md, "king buckets"). The factoriser trains each row as the sum
//! `W_k = B_k + S` of a bucket's own part `B_k` and one part `S` that all buckets share,
//! so every position teaches `S`, and `B_k` only has to learn how bucket k differs.
//!
//! Only the sums go into the net file, so the engine never sees the factoriser. The
//! network the trainer evaluates holds the sums `W` and this module holds `S` with its own
//! Adam moments. Each step takes the gradient of `W` (which is the gradient of every
//! `B_k`), sums it over the buckets for the gradient of `S`, steps both, and writes back
//! `W = clamp(B + S)`; `B` is always recomputed as `W - S`, so a resumed run, which reads
//! `W` and `S` from the checkpoint, steps exactly as an uninterrupted one. (Recomputing
//! may round an untouched weight by an ulp, a millionth of the quantization step.)

use crate::nnue::{FloatNetwork, FEATURES, WEIGHT_CLIP};

use super::adam::Adam;

/// The shared rows `S` (`[768][H]`, feature-major like one bucket of the net's feature
/// weights) and their Adam state.
#[derive(Clone, Debug, PartialEq)]
pub struct Factoriser {
    pub shared: Vec<f32>,
    pub adam: Adam,
}

impl Factoriser {
    /// Takes the mean of the buckets' rows as the shared part and leaves the buckets the
    /// rest: a net whose buckets are copies of one set (a fresh factorised net, or `--init`
    /// from a net without king buckets) starts with every `B_k` zero.
    pub fn from_network(network: &FloatNetwork) -> Factoriser {
        let block = FEATURES * network.hidden_size();
        let buckets = network.king_buckets().count();
        let mut shared = vec![0.0f32; block];
        for rows in network.feature_weights().chunks_exact(block) {
            for (s, w) in shared.iter_mut().zip(rows) {
                *s += w;
            }
        }
        for s in &mut shared {
            *s /= buckets as f32;
        }
        Factoriser {
            shared,
            adam: Adam::new(block),
        }
    }

    /// One Adam step of the factorised parameters, given `gradient`, the loss gradient of
    /// `network`'s parameters (in their layout), and `adam`, the optimizer of every
    /// parameter but `S`.
    pub fn step(
        &mut self,
        network: &mut FloatNetwork,
        adam: &mut Adam,
        gradient: &[f32],
        rate_and_decay: (f32, f32),
        threads: usize,
    ) {
        let block = self.shared.len();
        let feature_weights = network.feature_weights().len();
        let mut shared_gradient = vec![0.0f32; block];
        for rows in gradient[..feature_weights].chunks_exact(block) {
            for (s, g) in shared_gradient.iter_mut().zip(rows) {
                *s += g;
            }
        }
        let params = network.params_mut();
        for rows in params[..feature_weights].chunks_exact_mut(block) {
            for (w, s) in rows.iter_mut().zip(&self.shared) {
                *w -= s;
            }
        }
        // Now `params` holds B: the main optimizer steps it with W's gradient.
        adam.step(params, gradient, rate_and_decay, threads);
        self.adam
            .step(&mut self.shared, &shared_gradient, rate_and_decay, threads);
        for rows in params[..feature_weights].chunks_exact_mut(block) {
            for (w, s) in rows.iter_mut().zip(&self.shared) {
                *w = (*w + s).clamp(-WEIGHT_CLIP, WEIGHT_CLIP);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nnue::KingBuckets;

    fn m4_network() -> FloatNetwork {
        FloatNetwork::random_with(16, 2, KingBuckets::named("m4").unwrap(), 3)
    }

    #[test]
    fn copied_buckets_are_all_shared() {
        let plain = FloatNetwork::random(16, 4);
        let kinged = plain
            .with_king_buckets(KingBuckets::named("m4").unwrap())
            .unwrap();
        let factoriser = Factoriser::from_network(&kinged);
        assert_eq!(factoriser.shared, plain.feature_weights());
    }

    /// A gradient on one bucket's rows only moves every bucket's weights of those
    /// features through `S` (and that bucket's more, through its own part), and leaves
    /// the rows of other features alone; without the factoriser the other buckets stay.
    #[test]
    fn one_buckets_gradient_teaches_every_bucket() {
        let network = m4_network();
        let block = FEATURES * network.hidden_size();
        let mut gradient = vec![0.0f32; network.params().len()];
        // Bucket 2's row of feature 100.
        let row = 2 * block + 100 * network.hidden_size();
        gradient[row..row + network.hidden_size()].fill(0.5);

        let mut factorised = network.clone();
        let mut factoriser = Factoriser::from_network(&factorised);
        let mut adam = Adam::new(network.params().len());
        factoriser.step(&mut factorised, &mut adam, &gradient, (0.01, 0.0), 1);

        let mut plain = network.clone();
        Adam::new(network.params().len()).step(plain.params_mut(), &gradient, (0.01, 0.0), 1);

        let moved = |net: &FloatNetwork, index: usize| {
            (net.feature_weights()[index] - network.feature_weights()[index]).abs()
        };
        for bucket in 0..4 {
            let index = bucket * block + 100 * network.hidden_size() + 3;
            let expected = if bucket == 2 { 0.02 } else { 0.01 };
            assert!(
                (moved(&factorised, index) - expected).abs() < 1e-5,
                "bucket {bucket}: moved {}",
                moved(&factorised, index)
            );
            let plain_expected = if bucket == 2 { 0.01 } else { 0.0 };
            assert!((moved(&plain, index) - plain_expected).abs() < 1e-5);
            // W - S + S may round W by an ulp: no more.
            assert!(moved(&factorised, bucket * block + 7) < 1e-6);
        }
        assert_eq!(
            factorised.feature_biases(),
            plain.feature_biases(),
            "the other tensors step as without a factoriser"
        );
    }

    /// Weights pushed the same way step after step stop at the clip bound the net format
    /// relies on.
    #[test]
    fn sums_are_clipped() {
        let mut network = m4_network();
        let mut factoriser = Factoriser::from_network(&network);
        let mut adam = Adam::new(network.params().len());
        let gradient = vec![-1.0f32; network.params().len()];
        for _ in 0..300 {
            factoriser.step(&mut network, &mut adam, &gradient, (0.05, 0.0), 2);
        }
        let limit = network.feature_weights().len();
        assert!(network.params()[..limit]
            .iter()
            .all(|w| (-WEIGHT_CLIP..=WEIGHT_CLIP).contains(w)));
        assert!(network.params()[..limit].contains(&WEIGHT_CLIP));
    }
}
