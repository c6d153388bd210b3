//! Integration tests of the backend: models, placement and routing, schedules, seeds' tables.
//!
//! One binary for the whole suite: one link instead of one per file. Run one part with
//! `cargo test -p ttdl-backend --test all <module>::`.

mod compiled_model;
mod compiled_sim;
mod compiled_tables;
mod dynsim_core;
mod dynsim_latency;
mod dynsim_synthetic;
mod netroute_anneal;
mod netroute_chittor;
mod netroute_common;
mod netroute_fft;
mod netroute_props;
mod netroute_reroute;
mod netroute_scale;
mod optical_aapc;
mod optical_analytic;
mod optical_multihop;
mod optical_path_reservation;
mod optical_rca;
mod pms_logic;
mod pms_model;
mod router_model;
mod sched_jacobi;
mod sched_periodic;
mod sched_props;
mod sched_verify;
mod support;
mod topology_anynet;
