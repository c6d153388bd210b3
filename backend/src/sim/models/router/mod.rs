//! An input-queued virtual-channel router per node, cycle by cycle, as BookSim2's `iq_router`
//! models one (Jiang et al., ISPASS 2013; Dally & Towles ch. 16, 19): the router BookSim users
//! compare against, so that its latency-against-load curves can be set beside theirs.
//!
//! Each node's router has one input port per incoming link plus the injection port, each with
//! `vcs` virtual channels of `vc_buf` flits, and one output port per outgoing link plus the
//! ejection port. A head flit goes through the pipeline stages
//!
//! 1. routing computation (`routing_delay` cycles; 0 = lookahead routing): dimension order (on
//!    networks without one, such as anynet files, up*/down* tables), the ejection port at the
//!    destination; on tori the VCs split into two dateline classes as in
//!    the wormhole model (so `vcs ≥ 2`);
//! 2. VC allocation (`vc_alloc_delay`): the head asks for every free VC of its class on its output;
//! 3. switch allocation (`sw_alloc_delay`): each input port sends one flit per cycle, each output
//!    port takes one; a VC bids only with a credit for its downstream VC; with `speculative=1`
//!    heads bid in parallel with their VC allocation, behind non-speculative bids of the same
//!    input (a speculative grant is used only if the VC allocation succeeded the same cycle);
//! 4. switch traversal (`st_delay`), then link traversal (`link_delay`);
//!
//! body flits only switch allocation and traversal. Flow control is credit based: a credit goes
//! back when a flit leaves an input buffer, crosses the link back in `link_delay` and is usable
//! `credit_delay` cycles later. An output VC is free again once the tail has left (BookSim's
//! default), or with `wait_for_tail_credit=1` once the tail's credit has come back. Allocators:
//! [`alloc`] (iSLIP with `iters` iterations, separable input-first / output-first, oldest-first).
//!
//! Sources queue packets without bound and send one flit per cycle over a one-cycle injection
//! channel into the injection port's VCs (round-robin over the free ones, as BookSim's traffic
//! manager); ejection takes one flit per cycle over a one-cycle channel and never refuses.
//!
//! Timing, exactly as BookSim2 counts it: a lone packet of `L` flits over `D` hops arrives after
//! `P·(D+1) + 2 + (L−1)` cycles with `P = routing_delay + vc_alloc_delay + sw_alloc_delay +
//! st_delay + link_delay` — 5 with the `booksim` preset, 3 with `min` (no routing stage,
//! speculation) — when the allocators take one cycle. A VC bids again only once its last
//! allocation is over, as in BookSim2, so with `sw_alloc_delay = s` its flits follow every `s`
//! cycles; unlike BookSim2, whose allocator with a delay above one starts no new round before
//! the last one ends, rounds of different VCs overlap here.
//!
//! Each cycle visits only routers with a busy VC and, inside them, only the busy VCs (bit masks
//! over `(port, vc)`); flits and credits in flight wait on a timing wheel. Nothing is sorted.

pub mod alloc;
mod pipeline;

pub use alloc::AllocKind;
pub use pipeline::{Router, RouterStats};

use crate::sim::options::{
    choice, choice_enum, int, int_depends, Choice, ModelError, ModelOptions, OptionSpec,
};

choice_enum! {
    /// Where the router's defaults come from.
    pub enum Preset {
        /// BookSim2's defaults.
        Booksim = "booksim",
        /// Its shortest pipeline (routing_delay=0 speculative=1).
        Min = "min",
    }
}
use crate::sim::registry::ModelContext;
use crate::sim::NetworkModel;

pub const OPTIONS: &[OptionSpec] = &[
    choice(
        "preset",
        "booksim",
        Preset::WORDS,
        "BookSim2's defaults, or its shortest pipeline (routing_delay=0 speculative=1)",
    ),
    int("vcs", "2", 1, 64, "virtual channels per port"),
    int(
        "vc_buf",
        "8",
        1,
        1 << 16,
        "flit buffers per virtual channel",
    ),
    int_depends(
        "routing_delay",
        "1; min: 0",
        0,
        1 << 16,
        "cycles of routing computation (0 = lookahead routing)",
    ),
    int("vc_alloc_delay", "1", 1, 1 << 16, "cycles of VC allocation"),
    int(
        "sw_alloc_delay",
        "1",
        1,
        1 << 16,
        "cycles of switch allocation",
    ),
    int("st_delay", "1", 1, 1 << 16, "cycles of switch traversal"),
    int(
        "link_delay",
        "1",
        1,
        1 << 16,
        "cycles a flit or credit spends on a link",
    ),
    int(
        "credit_delay",
        "0",
        0,
        1 << 16,
        "cycles before a received credit can be used",
    ),
    int_depends(
        "speculative",
        "0; min: 1",
        0,
        1,
        "1: switch allocation in parallel with VC allocation",
    ),
    int(
        "wait_for_tail_credit",
        "0",
        0,
        1,
        "1: an output VC is freed when the tail's credit returns, not when the tail leaves",
    ),
    choice("vc_alloc", "islip", AllocKind::WORDS, "VC allocator"),
    choice("sw_alloc", "islip", AllocKind::WORDS, "switch allocator"),
    int("iters", "1", 1, 16, "iSLIP iterations"),
    crate::sim::packets::OPTION,
];

/// The router's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouterConfig {
    pub vcs: usize,
    pub vc_buf: u32,
    pub routing_delay: u64,
    pub vc_alloc_delay: u64,
    pub sw_alloc_delay: u64,
    pub st_delay: u64,
    pub link_delay: u64,
    pub credit_delay: u64,
    pub speculative: bool,
    pub wait_for_tail_credit: bool,
    pub vc_alloc: AllocKind,
    pub sw_alloc: AllocKind,
    pub iters: usize,
}

impl RouterConfig {
    /// BookSim2's defaults: 2 VCs × 8 flits, iSLIP with one iteration, every stage one cycle,
    /// no speculation, credits used as they arrive, VCs freed when the tail leaves.
    pub fn booksim() -> Self {
        RouterConfig {
            vcs: 2,
            vc_buf: 8,
            routing_delay: 1,
            vc_alloc_delay: 1,
            sw_alloc_delay: 1,
            st_delay: 1,
            link_delay: 1,
            credit_delay: 0,
            speculative: false,
            wait_for_tail_credit: false,
            vc_alloc: AllocKind::Islip,
            sw_alloc: AllocKind::Islip,
            iters: 1,
        }
    }

    /// BookSim2's shortest pipeline: lookahead routing and speculative switch allocation.
    pub fn min() -> Self {
        RouterConfig {
            routing_delay: 0,
            speculative: true,
            ..Self::booksim()
        }
    }

    /// Cycles per hop of a lone head flit.
    pub fn per_hop(&self) -> u64 {
        let alloc = if self.speculative {
            self.vc_alloc_delay.max(self.sw_alloc_delay)
        } else {
            self.vc_alloc_delay + self.sw_alloc_delay
        };
        self.routing_delay + alloc + self.st_delay + self.link_delay
    }

    /// `key=value` for every setting that differs from `base`.
    fn differences(&self, base: &RouterConfig) -> Vec<String> {
        let mut s = Vec::new();
        let mut num = |k: &str, a: u64, b: u64| {
            if a != b {
                s.push(format!("{k}={a}"));
            }
        };
        num("vcs", self.vcs as u64, base.vcs as u64);
        num("vc_buf", self.vc_buf as u64, base.vc_buf as u64);
        num("routing_delay", self.routing_delay, base.routing_delay);
        num("vc_alloc_delay", self.vc_alloc_delay, base.vc_alloc_delay);
        num("sw_alloc_delay", self.sw_alloc_delay, base.sw_alloc_delay);
        num("st_delay", self.st_delay, base.st_delay);
        num("link_delay", self.link_delay, base.link_delay);
        num("credit_delay", self.credit_delay, base.credit_delay);
        num(
            "speculative",
            self.speculative as u64,
            base.speculative as u64,
        );
        num(
            "wait_for_tail_credit",
            self.wait_for_tail_credit as u64,
            base.wait_for_tail_credit as u64,
        );
        num("iters", self.iters as u64, base.iters as u64);
        if self.vc_alloc != base.vc_alloc {
            s.push(format!("vc_alloc={}", self.vc_alloc.name()));
        }
        if self.sw_alloc != base.sw_alloc {
            s.push(format!("sw_alloc={}", self.sw_alloc.name()));
        }
        s
    }

    /// The name tables show: `router`, `router preset=min`, `router vcs=4 …`.
    pub fn name(&self) -> String {
        let (preset, base) = if self.speculative && self.routing_delay == 0 {
            (" preset=min", RouterConfig::min())
        } else {
            ("", RouterConfig::booksim())
        };
        let mut s = format!("router{preset}");
        for d in self.differences(&base) {
            s.push(' ');
            s.push_str(&d);
        }
        s
    }
}

/// Builds the model from registry options.
pub fn build(
    ctx: &ModelContext<'_>,
    opts: &mut ModelOptions,
) -> Result<Box<dyn NetworkModel>, ModelError> {
    let base = match opts.chosen("preset")? {
        Preset::Min => RouterConfig::min(),
        Preset::Booksim => RouterConfig::booksim(),
    };
    let cfg = RouterConfig {
        vcs: opts.int("vcs")? as usize,
        vc_buf: opts.int("vc_buf")? as u32,
        routing_delay: opts.int_or("routing_delay", base.routing_delay)?,
        vc_alloc_delay: opts.int("vc_alloc_delay")?,
        sw_alloc_delay: opts.int("sw_alloc_delay")?,
        st_delay: opts.int("st_delay")?,
        link_delay: opts.int("link_delay")?,
        credit_delay: opts.int("credit_delay")?,
        speculative: opts.int_or("speculative", base.speculative as u64)? == 1,
        wait_for_tail_credit: opts.int("wait_for_tail_credit")? == 1,
        vc_alloc: opts.chosen("vc_alloc")?,
        sw_alloc: opts.chosen("sw_alloc")?,
        iters: opts.int("iters")? as usize,
    };
    let model = Box::new(Router::new(ctx.network, cfg)?);
    Ok(crate::sim::packets::limit(model, opts.int("packet")?))
}
