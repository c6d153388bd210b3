//! `ttdl`: scheduled routing for parallel machines and networks-on-chip.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
mod cli;

/// TTDL — describe a parallel program's communication in a small Lisp, then place, route and
/// time-schedule it on an interconnect so no two messages ever collide, and compare the plan with
/// dynamic networks.
#[derive(Parser)]
#[command(name = "ttdl", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate, build the task graph, time it, place, route, schedule, verify and summarize
    Run(cli::run::RunArgs),
    /// Evaluate only: tasks, messages, phases, critical path and period — or the diagnostics
    Check(cli::check::CheckArgs),
    /// Print the task graph (DOT or JSON)
    Dag(cli::dag::DagArgs),
    /// Run the program on one hardware model
    Simulate(cli::simulate::SimulateArgs),
    /// Every hardware model side by side on the same program
    Compare(cli::compare::CompareArgs),
    /// Latency against offered load for a model, as CSV and SVG
    Sweep(Box<cli::sweep::SweepArgs>),
    /// Yuan's analytic model of multi-hop TDM networks
    Model(cli::model::ModelArgs),
    /// Contention-free schedules for array operations on a 2-D mesh (Eberhart): shift,
    /// transpose, transfer
    Array(cli::array::ArrayArgs),
    /// The interactive loop
    Repl(cli::repl::ReplArgs),
    /// Another tool's task graphs as a TTDL program (`ttdl import tgff FILE`)
    Import(cli::import::ImportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(a) => cli::run::run(a),
        Command::Check(a) => cli::check::run(a),
        Command::Dag(a) => cli::dag::run(a),
        Command::Simulate(a) => cli::simulate::run(a),
        Command::Compare(a) => cli::compare::run(a),
        Command::Sweep(a) => cli::sweep::run(a),
        Command::Array(a) => cli::array::run(a),
        Command::Model(a) => cli::model::run(a),
        Command::Repl(a) => cli::repl::run(a),
        Command::Import(a) => cli::import::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(e.exit_code())
        }
    }
}
