//! Adam over the flat parameter vector of a `nnue::FloatNetwork`.

use crate::nnue::WEIGHT_CLIP;

/// Adam (beta1 0.9, beta2 0.999, eps 1e-8) over the flat parameter vector, with optional
/// decoupled weight decay (AdamW: each step also shrinks every parameter by
/// `learning_rate * weight_decay` of itself, apart from the gradient's moments), clipping
/// every parameter to +-WEIGHT_CLIP after each step.
#[derive(Clone, Debug, PartialEq)]
pub struct Adam {
    pub first_moment: Vec<f32>,
    pub second_moment: Vec<f32>,
    /// Steps taken so far (for the bias correction).
    pub steps: u64,
}

pub const ADAM_BETA1: f32 = 0.9;
pub const ADAM_BETA2: f32 = 0.999;
pub const ADAM_EPSILON: f32 = 1e-8;

impl Adam {
    pub fn new(param_count: usize) -> Adam {
        Adam {
            first_moment: vec![0.0; param_count],
            second_moment: vec![0.0; param_count],
            steps: 0,
        }
    }

    /// One step with the gradient `grad`, split over `threads` threads (each parameter's
    /// update depends on that parameter alone, so the result does not depend on them).
    pub fn step(
        &mut self,
        params: &mut [f32],
        grad: &[f32],
        (learning_rate, weight_decay): (f32, f32),
        threads: usize,
    ) {
        self.steps += 1;
        let t = self.steps as i32;
        let step_size =
            learning_rate * (1.0 - ADAM_BETA2.powi(t)).sqrt() / (1.0 - ADAM_BETA1.powi(t));
        let shrink = 1.0 - learning_rate * weight_decay;
        let chunk = params.len().div_ceil(threads.max(1));
        let update = |params: &mut [f32], grad: &[f32], m: &mut [f32], v: &mut [f32]| {
            for i in 0..params.len() {
                let g = grad[i];
                m[i] = ADAM_BETA1 * m[i] + (1.0 - ADAM_BETA1) * g;
                v[i] = ADAM_BETA2 * v[i] + (1.0 - ADAM_BETA2) * g * g;
                let p = params[i] * shrink - step_size * m[i] / (v[i].sqrt() + ADAM_EPSILON);
                params[i] = p.clamp(-WEIGHT_CLIP, WEIGHT_CLIP);
            }
        };
        if threads <= 1 {
            update(
                params,
                grad,
                &mut self.first_moment,
                &mut self.second_moment,
            );
            return;
        }
        std::thread::scope(|scope| {
            let parts = params
                .chunks_mut(chunk)
                .zip(grad.chunks(chunk))
                .zip(self.first_moment.chunks_mut(chunk))
                .zip(self.second_moment.chunks_mut(chunk));
            for (((p, g), m), v) in parts {
                scope.spawn(move || update(p, g, m, v));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_moves_against_the_gradient_and_clips() {
        let mut params = vec![0.0, 0.0, 1.975];
        let mut adam = Adam::new(3);
        adam.step(&mut params, &[1.0, -1.0, -1.0], (0.01, 0.0), 2);
        // The first bias-corrected step is lr * sign(g).
        assert!((params[0] + 0.01).abs() < 1e-6 && (params[1] - 0.01).abs() < 1e-6);
        assert_eq!(params[2], WEIGHT_CLIP);
        assert_eq!(adam.steps, 1);
    }

    /// Decoupled weight decay shrinks a parameter by lr * decay of itself on top of the
    /// gradient's step, and leaves the moments as plain Adam's.
    #[test]
    fn weight_decay_is_decoupled_from_the_moments() {
        let (mut plain, mut decayed) = (vec![1.0, -0.5, 0.0], vec![1.0, -0.5, 0.0]);
        let (mut adam, mut adamw) = (Adam::new(3), Adam::new(3));
        let grad = [0.25, 0.25, 0.0];
        adam.step(&mut plain, &grad, (0.01, 0.0), 1);
        adamw.step(&mut decayed, &grad, (0.01, 0.1), 1);
        assert_eq!(adam, adamw, "same moments and step count");
        assert!((decayed[0] - (1.0 * (1.0 - 0.001) - 0.01)).abs() < 1e-7);
        assert!((decayed[1] - (-0.5 * (1.0 - 0.001) - 0.01)).abs() < 1e-7);
        assert_eq!((plain[2], decayed[2]), (0.0, 0.0));
    }
}
