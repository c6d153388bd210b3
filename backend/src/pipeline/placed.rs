//! A program placed once for every model `simulate` and `compare` run on it, the plan among
//! them, so every row runs on the same placement.

use super::{place, plan_placed, resolve, PipelineError, PlanConfig, Setting, Settings};
use crate::progress::Progress;
use crate::schedule;
use crate::sim::models::scheduled::{PlannedRun, Planner};
use crate::topology::Network;
use crate::traffic::{Placement, Traffic};

/// A program placed for the hardware models: what `simulate` and `compare` run.
#[derive(Clone, Debug)]
pub struct Placed {
    pub traffic: Traffic,
    pub network: Network,
    pub placement: Placement,
    pub config: PlanConfig,
}

/// Resolves the configuration and places the program, as [`plan`] would.
pub fn placed(traffic: &Traffic, o: &Settings) -> Result<Placed, PipelineError> {
    let config = resolve(traffic, o)?;
    let (network, placement) = place(traffic, &config)?;
    Ok(Placed {
        traffic: traffic.clone(),
        network,
        placement,
        config,
    })
}

/// One model's run of a placed program, or why it could not run or finish.
#[derive(Clone, Debug)]
pub struct ModelRun {
    /// The spec as asked for (`wormhole vc=2`).
    pub spec: String,
    pub result: Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError>,
}

impl Placed {
    /// Runs the program on one model (`wormhole`, `"circuit setup=3"`), under `max_cycles` or
    /// the program's default cap. The `scheduled` model plans with this configuration's route,
    /// scheduler and timing unless the spec sets them.
    pub fn simulate(
        &self,
        spec: &str,
        max_cycles: Option<u64>,
    ) -> Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError> {
        self.simulate_with_progress(spec, max_cycles, &Progress::none())
    }

    /// [`Placed::simulate`], counting delivered messages on `progress`.
    pub fn simulate_with_progress(
        &self,
        spec: &str,
        max_cycles: Option<u64>,
        progress: &Progress,
    ) -> Result<crate::sim::drive::program::SimReport, crate::sim::drive::program::SimError> {
        use crate::sim::drive::program::{simulate_with_progress, SimOptions};
        use crate::sim::registry::{self, ModelContext};
        let ctx = ModelContext::new(&self.network)
            .with_program(&self.traffic, &self.placement)
            .with_seed(self.config.seed)
            .with_planner(&Pipeline);
        let mut model = registry::build(&self.with_plan_settings(spec), &ctx)?;
        let mut opts = SimOptions::for_program(&self.traffic, &self.network, &self.placement);
        if let Some(m) = max_cycles {
            opts.max_cycles = m;
        }
        simulate_with_progress(
            &self.traffic,
            &self.placement,
            &self.network,
            model.as_mut(),
            &opts,
            progress,
        )
    }

    /// Builds the model `spec` names without running it: a bad name or option, or a model that
    /// cannot run on this network, is found before any work.
    pub fn check_model(&self, spec: &str) -> Result<(), crate::sim::ModelError> {
        let ctx = crate::sim::registry::ModelContext::new(&self.network)
            .with_program(&self.traffic, &self.placement)
            .with_seed(self.config.seed)
            .with_planner(&Pipeline);
        crate::sim::registry::build(&self.with_plan_settings(spec), &ctx).map(|_| ())
    }

    /// The model specs `compare` runs: `models` as a comma-separated list (`wormhole,circuit
    /// setup=3`), or every registered model's standard set when it is `None` — the one default
    /// list every front end shows. An unknown model name is refused with the closest name.
    pub fn compare_specs(&self, models: Option<&str>) -> Result<Vec<String>, PipelineError> {
        use crate::sim::registry;
        let Some(list) = models else {
            let mut specs = registry::compare_specs();
            // A program that multicasts gets the like-for-like pair: the plan with its
            // broadcasts sent as unicasts, as the dynamic models send them (SPEC §5).
            if self.traffic.messages.iter().any(|m| m.is_multicast()) {
                let at = specs
                    .iter()
                    .position(|s| s == "scheduled")
                    .map_or(0, |i| i + 1);
                specs.insert(at, "scheduled multicast=unicast".to_string());
            }
            return Ok(specs);
        };
        let specs: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if specs.is_empty() {
            return Err(PipelineError::Config(
                "the model list names no model".into(),
            ));
        }
        for s in &specs {
            let name = s.split([' ', ':']).next().unwrap_or("");
            registry::known(name).map_err(PipelineError::Config)?;
        }
        Ok(specs)
    }

    /// Every spec in turn, side by side (`compare`); `progress` is called before each.
    pub fn compare(
        &self,
        specs: &[String],
        max_cycles: Option<u64>,
        mut progress: impl FnMut(&str),
    ) -> Vec<ModelRun> {
        specs
            .iter()
            .map(|spec| {
                progress(spec);
                ModelRun {
                    spec: spec.clone(),
                    result: self.simulate(spec, max_cycles),
                }
            })
            .collect()
    }

    /// `spec` with the plan settings filled in where a `scheduled` spec leaves them out, so
    /// `compare --schedule lp` or a script's `(target … :route 'shortest)` reaches the plan.
    pub fn with_plan_settings(&self, spec: &str) -> String {
        let name = spec.split([' ', ':']).next().unwrap_or("");
        if name != "scheduled" {
            return spec.to_string();
        }
        let given = |key: &str| {
            spec.split([' ', ',', ':'])
                .any(|w| w.split_once('=').is_some_and(|(k, _)| k == key))
        };
        let mut out = spec.to_string();
        for (setting, value) in self.config.settings().iter() {
            if setting.model && !given(setting.key) && !given(setting.name) {
                out.push_str(&format!(" {}={value}", setting.key));
            }
        }
        out
    }
}

/// The pipeline as the `scheduled` model's planner ([`crate::sim::registry::ModelContext`]): the
/// plan `ttdl run` makes of the program on the given placement.
pub struct Pipeline;

impl Planner for Pipeline {
    fn plan(
        &self,
        traffic: &Traffic,
        network: &Network,
        placement: &Placement,
        settings: &Settings,
    ) -> Result<PlannedRun, String> {
        let cfg = resolve(traffic, settings).map_err(|e| e.to_string())?;
        let plan = plan_placed(traffic, network.clone(), placement.clone(), &cfg)
            .map_err(|e| e.to_string())?;
        let default_of = |name: &str| Setting::find(name).map_or("", |s| s.default_text());
        let mut non_default = Vec::new();
        if cfg.hardware.setup > 0 {
            non_default.push(format!("setup={}", cfg.hardware.setup));
        }
        if cfg.route.name() != default_of("route") {
            non_default.push(format!("route={}", cfg.route.name()));
        }
        if cfg.hardware.buffer != schedule::Hardware::BUFFER {
            non_default.push(format!(
                "buffer={}",
                schedule::Hardware::buffer_name(cfg.hardware.buffer)
            ));
        }
        if cfg.timing.name() != default_of("timing") {
            non_default.push(format!("timing={}", cfg.timing.name()));
        }
        Ok(PlannedRun {
            schedule: plan.schedule,
            replay: plan.replay,
            non_default,
        })
    }
}
