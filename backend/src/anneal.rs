//! The simulated-annealing engine of Minsky Fig 4-5, shared by placement and rerouting: a
//! *configuration* that can propose a change (returning the change in cost), accept it or reset
//! it; a temperature schedule that steps down linearly while the number of iterations per
//! temperature grows; and a restart from half the starting temperature when the cost that decides
//! success is still above the minimum acceptable cost.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A configuration being optimised (the thesis's `compute_new_config`, `reset_configuration`,
/// `deciding_cost`).
pub trait Configuration {
    /// Make a random change and return `new cost − old cost`, or `None` when no change is possible.
    fn propose(&mut self, rng: &mut ChaCha8Rng) -> Option<f64>;
    /// Keep the last proposed change.
    fn accept(&mut self);
    /// Undo the last proposed change.
    fn reset(&mut self);
    /// The cost compared with the minimum acceptable cost.
    fn deciding_cost(&self) -> f64;
    /// Called after each temperature: remember the current configuration if it is the best yet.
    fn checkpoint(&mut self) {}
    /// Called when a temperature begins (before its iterations), with the pass's starting and
    /// final temperatures: a configuration may scale its moves to the temperature.
    fn temperature(&mut self, _t: f64, _start_t: f64, _final_t: f64) {}
    /// True once the configuration has used up its own budget of changes: the anneal stops at
    /// once, whatever the schedule says.
    fn exhausted(&self) -> bool {
        false
    }
}

/// The thesis's `Sa_sched` plus the stopping rule.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Schedule {
    pub start_t: f64,
    pub final_t: f64,
    /// Linear temperature decrement (`t = t − t_step`).
    pub t_step: f64,
    /// Geometric cooling factor applied before the decrement (`t = t·t_factor − t_step`); 1 is the
    /// thesis's purely linear schedule.
    #[serde(default = "one")]
    pub t_factor: f64,
    /// Iterations at the first temperature.
    pub n_iter_start: u64,
    /// Added to the iteration count after every temperature.
    pub n_iter_step: u64,
    /// Restart (from half the temperature) while `deciding_cost > min_acceptable_cost`.
    pub min_acceptable_cost: f64,
    /// No restart once the starting temperature has fallen to this.
    pub bail_out_t: f64,
}

impl Schedule {
    /// A schedule with `steps` temperatures from `start_t` down to `start_t / 1000`.
    pub fn linear(start_t: f64, steps: u64, n_iter_start: u64, n_iter_step: u64) -> Schedule {
        let start_t = if start_t.is_finite() && start_t > 0.0 {
            start_t
        } else {
            1.0
        };
        let final_t = start_t / 1000.0;
        Schedule {
            start_t,
            final_t,
            t_step: (start_t - final_t) / steps.max(1) as f64,
            t_factor: 1.0,
            n_iter_start,
            n_iter_step,
            min_acceptable_cost: f64::NEG_INFINITY,
            bail_out_t: start_t / 8.0,
        }
    }

    /// Iterations of one pass from `start_t` (for progress bars).
    pub fn iterations(&self) -> u64 {
        let steps = self.steps();
        steps * self.n_iter_start + self.n_iter_step * steps * steps.saturating_sub(1) / 2
    }

    /// A schedule that cools geometrically by `factor` per temperature (with a tiny linear part
    /// so it ends), from `start_t` to `final_t`.
    pub fn geometric(
        start_t: f64,
        final_t: f64,
        factor: f64,
        n_iter_start: u64,
        n_iter_step: u64,
    ) -> Schedule {
        let mut s = Schedule::linear(start_t, 1, n_iter_start, n_iter_step);
        s.final_t = final_t.max(s.start_t * 1e-9);
        s.t_factor = factor.clamp(0.01, 0.999);
        s.t_step = 0.0;
        s.bail_out_t = s.start_t / 8.0;
        s
    }

    fn steps(&self) -> u64 {
        if self.start_t <= self.final_t {
            return 0;
        }
        if self.t_factor < 1.0 && self.t_factor > 0.0 {
            let n = (self.final_t / self.start_t).ln() / self.t_factor.ln();
            return n.ceil().max(1.0) as u64;
        }
        if self.t_step <= 0.0 {
            return 0;
        }
        ((self.start_t - self.final_t) / self.t_step).ceil() as u64
    }
}

fn one() -> f64 {
    1.0
}

/// How far the anneal has got, for progress bars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub iterations: u64,
    /// Estimated total (grows when a restart happens).
    pub total: u64,
    pub temperature: f64,
    pub deciding_cost: f64,
}

/// Boltzmann acceptance: `exp(−ΔC/T)`.
fn should_accept(delta: f64, t: f64, rng: &mut ChaCha8Rng) -> bool {
    if delta <= 0.0 {
        return true;
    }
    if t <= 0.0 {
        return false;
    }
    rng.random::<f64>() < (-delta / t).exp()
}

/// Minsky Fig 4-5. The initial configuration is whatever `config` holds.
pub fn simanneal(
    config: &mut dyn Configuration,
    schedule: &Schedule,
    rng: &mut ChaCha8Rng,
    progress: &mut dyn FnMut(Progress),
) {
    let mut sched = schedule.clone();
    let mut done = 0u64;
    let mut total = sched.iterations();
    loop {
        let initial_t = sched.start_t;
        let mut n_iter = sched.n_iter_start;
        let mut t = initial_t;
        while t > sched.final_t {
            config.temperature(t, schedule.start_t, sched.final_t);
            for _ in 0..n_iter {
                if config.exhausted() {
                    config.checkpoint();
                    return;
                }
                match config.propose(rng) {
                    Some(delta) if should_accept(delta, t, rng) => config.accept(),
                    Some(_) => config.reset(),
                    None => {}
                }
            }
            done += n_iter;
            n_iter += sched.n_iter_step;
            config.checkpoint();
            progress(Progress {
                iterations: done,
                total: total.max(done),
                temperature: t,
                deciding_cost: config.deciding_cost(),
            });
            if config.deciding_cost() <= sched.min_acceptable_cost {
                return;
            }
            let next = t * sched.t_factor - sched.t_step;
            if next >= t {
                break;
            }
            t = next;
        }
        // "If we still haven't reached min acceptable cost, keep going" from half the temperature.
        // (Only when a minimum acceptable cost was set: the default of −∞ means "no target".)
        if sched.min_acceptable_cost.is_finite()
            && config.deciding_cost() > sched.min_acceptable_cost
            && sched.start_t > sched.bail_out_t
        {
            sched.start_t = initial_t / 2.0;
            sched.n_iter_start = n_iter;
            total += sched.iterations();
        } else {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A cost that never reaches the target: the annealer must restart from half the temperature
    /// until the bail-out temperature, then stop.
    struct Stubborn {
        proposals: u64,
    }

    impl Configuration for Stubborn {
        fn propose(&mut self, _: &mut ChaCha8Rng) -> Option<f64> {
            self.proposals += 1;
            Some(1.0)
        }
        fn accept(&mut self) {}
        fn reset(&mut self) {}
        fn deciding_cost(&self) -> f64 {
            10.0
        }
    }

    #[test]
    fn restarts_from_half_the_temperature_then_bails_out() {
        let mut s = Schedule::linear(8.0, 4, 10, 0);
        s.min_acceptable_cost = 1.0;
        s.bail_out_t = 1.5;
        let mut temps = Vec::new();
        let mut c = Stubborn { proposals: 0 };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        simanneal(&mut c, &s, &mut rng, &mut |p| temps.push(p.temperature));
        // Passes start at 8, 4, 2 and 1 (the last below the bail-out temperature of 1.5), each
        // stepping down by the same t_step of about 2.
        let starts: Vec<f64> = temps.iter().copied().filter(|t| t.fract() == 0.0).collect();
        assert_eq!(starts, vec![8.0, 4.0, 2.0, 1.0]);
        assert_eq!(temps.len(), 4 + 2 + 1 + 1);
        assert_eq!(c.proposals, 10 * temps.len() as u64);
    }
}
