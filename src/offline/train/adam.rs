//! Adam over the flat parameter vector of a `nnue::FloatNetwork`.

use crate::nnue::WEIGHT_CLIP;

/// Adam (beta1 0.9, beta2 0.999, eps 1e-8, no weight decay) over the flat parameter vector,
/// clipping every parameter to +-WEIGHT_CLIP after each step.
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

    /// One step with the gradient `grad`, split over `threads` threads.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], learning_rate: f32, threads: usize) {
        self.steps += 1;
        let t = self.steps as i32;
        let step_size =
            learning_rate * (1.0 - ADAM_BETA2.powi(t)).sqrt() / (1.0 - ADAM_BETA1.powi(t));
        let chunk = params.len().div_ceil(threads.max(1));
        let update = |params: &mut [f32], grad: &[f32], m: &mut [f32], v: &mut [f32]| {
            for i in 0..params.len() {
                let g = grad[i];
                m[i] = ADAM_BETA1 * m[i] + (1.0 - ADAM_BETA1) * g;
                v[i] = ADAM_BETA2 * v[i] + (1.0 - ADAM_BETA2) * g * g;
                let p = params[i] - step_size * m[i] / (v[i].sqrt() + ADAM_EPSILON);
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
        adam.step(&mut params, &[1.0, -1.0, -1.0], 0.01, 2);
        // The first bias-corrected step is lr * sign(g).
        assert!((params[0] + 0.01).abs() < 1e-6 && (params[1] - 0.01).abs() < 1e-6);
        assert_eq!(params[2], WEIGHT_CLIP);
        assert_eq!(adam.steps, 1);
    }
}
