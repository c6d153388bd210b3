//! Hardware models by name, each with `key=value` options: `wormhole vc=2 buf=4 arb=oldest`.
//! Adding a model is one line in [`MODELS`]; `simulate`, `compare` and `sweep` find it here.

use crate::topology::Network;
use crate::traffic::{Placement, Traffic};

use super::options::{ModelError, ModelOptions, OptionSpec};
use super::NetworkModel;

/// What a model may look at when it is built: the physical network always; the program and its
/// placement when one is being run (a model that plans ahead, like the scheduled replay, needs
/// them; synthetic traffic has none).
#[derive(Clone, Copy)]
pub struct ModelContext<'a> {
    pub network: &'a Network,
    pub traffic: Option<&'a Traffic>,
    pub placement: Option<&'a Placement>,
    pub seed: u64,
    /// What plans a program, for the `scheduled` model: the pipeline hands itself in here, so
    /// the simulator never imports it (`None` where no plan is wanted).
    pub planner: Option<&'a dyn super::models::scheduled::Planner>,
}

impl<'a> ModelContext<'a> {
    /// The context of synthetic traffic on `network`: no program, no planner, seed 1.
    pub fn new(network: &'a Network) -> ModelContext<'a> {
        ModelContext {
            network,
            traffic: None,
            placement: None,
            seed: 1,
            planner: None,
        }
    }

    /// The program being run and where its tasks are placed.
    pub fn with_program(self, traffic: &'a Traffic, placement: &'a Placement) -> Self {
        ModelContext {
            traffic: Some(traffic),
            placement: Some(placement),
            ..self
        }
    }

    /// The seed of the model's random choices.
    pub fn with_seed(self, seed: u64) -> Self {
        ModelContext { seed, ..self }
    }

    /// What plans the program for the models that replay a plan.
    pub fn with_planner(self, planner: &'a dyn super::models::scheduled::Planner) -> Self {
        ModelContext {
            planner: Some(planner),
            ..self
        }
    }
}

/// Builds a model from its options (read them with [`ModelOptions`], then call `finish`).
pub type BuildFn =
    fn(&ModelContext<'_>, &mut ModelOptions) -> Result<Box<dyn NetworkModel>, ModelError>;

/// One registered model.
#[derive(Clone, Copy, Debug)]
pub struct ModelEntry {
    pub name: &'static str,
    /// One line for `--help`.
    pub summary: &'static str,
    /// Its options, declared once: type, range, default, help.
    pub options: &'static [OptionSpec],
    /// Option sets `ttdl compare` runs by default (`""` = defaults), e.g. `["d=1", "d=4"]`.
    pub compare: &'static [&'static str],
    pub build: BuildFn,
}

const fn entry(
    name: &'static str,
    summary: &'static str,
    options: &'static [OptionSpec],
    compare: &'static [&'static str],
    build: BuildFn,
) -> ModelEntry {
    ModelEntry {
        name,
        summary,
        options,
        compare,
        build,
    }
}

/// Every model, one line each, in the order tables show them.
#[rustfmt::skip]
pub const MODELS: &[ModelEntry] = &[
    entry("scheduled", "the plan from `ttdl run` (placed, routed, time-scheduled), replayed from its switch programs (Minsky ch.4-5)", super::models::scheduled::OPTIONS, &[""], super::models::scheduled::build),
    entry("wormhole", "flit-level wormhole routing with virtual channels (Chittor ch.5)", super::models::wormhole::OPTIONS, &[""], super::models::wormhole::build),
    entry("router", "input-queued virtual-channel routers as BookSim2 models them: routing, VC and switch allocation (iSLIP, separable, oldest-first), credits; preset=booksim|min", super::models::router::OPTIONS, &[""], super::models::router::build),
    entry("circuit", "circuit switching: the header reserves the whole path, then data streams (Chittor eq 1.2)", super::models::circuit::OPTIONS, &[""], super::models::circuit::build),
    entry("store-forward", "store-and-forward packet switching, whole packet per hop (Chittor eq 1.1)", super::models::store_forward::OPTIONS, &[""], super::models::store_forward::build),
    entry("path-reservation", "optical TDM torus, distributed path reservation: forward/backward, dropping/holding, channel-set size s (Yuan ch.3)", super::models::path_reservation::OPTIONS, &["d=1", "d=4"], super::models::path_reservation::build),
    entry("multi-hop", "logical topology over optical TDM, store-and-forward routers with routing time gamma (Yuan ch.4)", super::models::multihop::OPTIONS, &["logical=torus", "logical=allxy"], super::models::multihop::build),
    entry("compiled", "compiled communication: connections scheduled off line into TDM configurations, reconfigured per phase (Yuan ch.5)", super::models::compiled::OPTIONS, &[""], super::models::compiled::build),
    entry("warp", "unscheduled baseline of Eberhart's WARP simulator: unit steps, a random winner per contested link, blocked messages hold their path back to the source (App. B)", super::models::warp::OPTIONS, &[""], super::models::warp::build),
    entry("pms", "predictive multiplexed switching: TDM crossbar with slot tables, reactive/preloaded set-up, eviction predictor (Ding et al.)", super::models::pms::OPTIONS, &["", "preload=4"], super::models::pms::build),
];

/// Looks a model up by name.
pub fn find(name: &str) -> Option<&'static ModelEntry> {
    MODELS.iter().find(|m| m.name == name)
}

/// Builds a model from a spec: its name followed by options, `wormhole vc=2 buf=4`
/// (`wormhole:vc=2,buf=4` also works).
pub fn build(spec: &str, ctx: &ModelContext<'_>) -> Result<Box<dyn NetworkModel>, ModelError> {
    let spec = spec.trim();
    let (name, rest) = match spec.find([' ', ':']) {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    };
    build_with(name, rest.split_whitespace(), ctx)
}

/// Builds model `name` from option words.
pub fn build_with<'a>(
    name: &str,
    words: impl IntoIterator<Item = &'a str>,
    ctx: &ModelContext<'_>,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let entry = known(name).map_err(ModelError)?;
    let mut opts = ModelOptions::parse(entry.name, entry.options, words)?;
    (entry.build)(ctx, &mut opts)
}

/// The model list for `--help`: name, options, summary.
pub fn help() -> String {
    let mut s = String::new();
    for m in MODELS {
        s.push_str(&format!(
            "  {:<16} {}\n  {:<16}   options: {}\n",
            m.name,
            m.summary,
            "",
            super::options::describe(m.options)
        ));
    }
    s
}

/// The model list with every option explained, for `--help` (long form).
pub fn help_long() -> String {
    let mut s = String::new();
    for m in MODELS {
        s.push_str(&format!("  {}  {}\n", m.name, m.summary));
        for line in super::options::describe_long(m.options).lines() {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s
}

/// Every spec `compare` runs by default, in table order: `["wormhole", "path-reservation d=4", …]`.
/// `name` if it is a registered model; else why not, with the closest name.
pub fn known(name: &str) -> Result<&'static ModelEntry, String> {
    find(name).ok_or_else(|| {
        let names = MODELS.iter().map(|m| m.name);
        match ttdl_ir::settings::did_you_mean(name, names.clone()) {
            Some(m) => format!("unknown model `{name}`: did you mean `{m}`?"),
            None => format!(
                "unknown model `{name}`; known models: {}",
                names.collect::<Vec<_>>().join(", ")
            ),
        }
    })
}

pub fn compare_specs() -> Vec<String> {
    let mut out = Vec::new();
    for m in MODELS {
        for opts in m.compare {
            if opts.is_empty() {
                out.push(m.name.to_string());
            } else {
                out.push(format!("{} {}", m.name, opts));
            }
        }
    }
    out
}
