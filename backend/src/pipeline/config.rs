//! The settings resolved into one plan configuration: the command line over the script's
//! `(target …)` over the defaults of the settings table.

use super::{LpSolverKind, PipelineError, PlanConfig, Settings, TimingModel, UnknownChoice};
use crate::place::PlaceMethod;
use crate::route::RouteMethod;
use crate::schedule::{self, Hardware, Method};
use crate::topology::{Kind, NetworkSpec};
use crate::traffic::Traffic;

/// Resolves the configuration: the given settings, else the script's `target`, else the table's
/// defaults (the target's network, else the program's logical network, else the smallest square
/// mesh that holds its tasks; the canned mapping when every task has one, else `best`). Every
/// value was checked against its row when it was set; what is left to check here is what no
/// single row can know (a solver this build lacks, set-up with the LP).
pub fn resolve(traffic: &Traffic, o: &Settings) -> Result<PlanConfig, PipelineError> {
    let target = traffic.target.clone().unwrap_or_default();
    let s = o
        .clone()
        .or(target.settings.clone())
        .or(Settings::defaults());
    let network = match s.word("network") {
        Some(n) => n
            .parse()
            .map_err(|e| PipelineError::Config(format!("--network: {e}")))?,
        None => match target.network.clone().or_else(|| traffic.logical.clone()) {
            Some(n) => n,
            None => {
                let n = traffic.tasks.len().max(1);
                let k = (1..).find(|k| k * k >= n).unwrap_or(1);
                NetworkSpec::new(Kind::Mesh, vec![k, k])
            }
        },
    };
    let all_mapped = !traffic.tasks.is_empty() && traffic.tasks.iter().all(|t| t.mapped.is_some());
    let place = s.choice("place").unwrap_or(if all_mapped {
        PlaceMethod::Mapping
    } else {
        PlaceMethod::Best
    });
    let chosen = |name: &str| -> Result<String, PipelineError> {
        s.get(name)
            .map(|v| v.to_string())
            .ok_or_else(|| PipelineError::Internal(format!("the setting `{name}` has no value")))
    };
    let parse = |name: &str| -> Result<u64, PipelineError> {
        s.int(name)
            .ok_or_else(|| PipelineError::Internal(format!("the setting `{name}` has no value")))
    };
    let route: RouteMethod = chosen("route")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let schedule: Method = chosen("schedule")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let lp_solver: LpSolverKind = chosen("lp-solver")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    schedule::lp::solver(lp_solver)
        .map_err(|e| PipelineError::Config(format!("--lp-solver: {e}")))?;
    let timing: TimingModel = chosen("timing")?
        .parse()
        .map_err(|e: UnknownChoice| PipelineError::Config(e.to_string()))?;
    let hardware = Hardware {
        ports: parse("ports")? as u32,
        hop_latency: parse("latency")?,
        setup: parse("setup")?,
        buffer: match s.get("buffer") {
            Some(ttdl_ir::settings::Value::Int(b)) => Some(*b as u32),
            _ => None,
        },
    };
    if hardware.setup > 0 && schedule == Method::Lp {
        return Err(PipelineError::Config(
            "--setup with --schedule lp: the LP scheduler splits messages into fragments, each \
             of which would pay the set-up again; use --schedule exact or best"
                .into(),
        ));
    }
    Ok(PlanConfig {
        network,
        place,
        route,
        schedule,
        lp_solver,
        hardware,
        timing,
        seed: parse("seed")?,
        throughput: s.flag("throughput").unwrap_or(false),
        follow: s.flag("follow").unwrap_or(true),
        effort: chosen("effort")?.parse().map_err(PipelineError::Config)?,
    })
}

impl PlanConfig {
    /// What the scheduler's improvement phase is given.
    pub fn improve(&self) -> schedule::improve::Improve {
        schedule::improve::Improve {
            effort: self.effort,
            seed: self.seed,
        }
    }

    /// Every setting of the table as this configuration resolved it: the plan document's
    /// `config`, from which the same plan is made again.
    pub fn settings(&self) -> Settings {
        let mut s = Settings::new();
        let mut put = |name: &str, v: String| {
            // Every value here came from the table's own checks.
            let _ = s.set(name, &v);
        };
        put("network", self.network.to_string());
        put("place", self.place.name().to_string());
        put("route", self.route.name().to_string());
        put("schedule", self.schedule.name().to_string());
        put("lp-solver", self.lp_solver.name().to_string());
        put("ports", self.hardware.ports.to_string());
        put("latency", self.hardware.hop_latency.to_string());
        put("setup", self.hardware.setup.to_string());
        put("buffer", Hardware::buffer_name(self.hardware.buffer));
        put("timing", self.timing.name().to_string());
        put(
            "throughput",
            if self.throughput { "on" } else { "off" }.to_string(),
        );
        put("follow", if self.follow { "on" } else { "off" }.to_string());
        put("effort", self.effort.to_string());
        put("seed", self.seed.to_string());
        s
    }
}
