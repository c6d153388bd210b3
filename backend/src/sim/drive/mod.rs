//! What drives a model: a program's tasks (the execution-driven core), synthetic traffic at an
//! offered load, Poisson arrivals with uniform destinations (Yuan's optical models), or Ding's
//! command files.

pub mod command_file;
pub mod poisson;
pub mod program;
pub mod synthetic;
