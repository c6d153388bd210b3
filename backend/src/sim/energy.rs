//! Energy of a run from per-event costs (SPEC §5): every model counts what its hardware did —
//! flits written into and read out of input buffers, crossbar traversals (and where in the
//! crossbar they entered and left), switch grants, flits over channels, steps of a switch
//! program — and this module prices the counts with one technology table, adding the per-cycle
//! costs of what is powered whether used or not (clock and leakage).
//!
//! The costs are the equations of BookSim2's power module (`src/power/power_module.cpp`,
//! Jiang et al., ISPASS 2013; an Orion-style model of repeated channel wires with retiming
//! flip-flops, SRAM input buffers, a matrix crossbar and output stages), rewritten as energies:
//! BookSim reports each component as a power `C·V²·f·a` with `a` the events per cycle, so one event
//! costs `C·V²` and a run costs `Σ events · C·V² + cycles · P_static · t_clk`. With the default
//! table (BookSim2's `techfile.txt`) the `router` model's energy on BookSim2's 8×8 mesh runs agrees
//! with BookSim2's power module (see `backend/examples/bench_energy.rs` and the README).
//!
//! Two expressions of the reference are kept as they are so that the figures agree: the crossbar
//! leakage `½(I_offN + 2·I_offP)·W·C/C_i` has no supply-voltage factor, and the SRAM word-line
//! pre-decoder term multiplies two capacitances; the bit-cell write term `½·C_cc·V²` of the
//! reference is not multiplied by the clock frequency there, which makes it vanish (below 10⁻⁹
//! of the write energy), so it is left out here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Technology constants: one table, defaults from BookSim2's `src/power/techfile.txt` ("2007 ITRS
/// predictions for a 32nm high-performance library", 70 °C), plus the flit width, BookSim2's
/// `channel_width` default. Capacitances in farads (per µm of device width, or per mm of wire),
/// currents in amperes per µm, lengths in mm unless said.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Technology {
    /// Supply voltage [V] (techfile `Vdd`).
    pub vdd: f64,
    /// Output resistance of a 1 µm inverter [Ω] (techfile `R`).
    pub r: f64,
    /// Leakage of a two-port SRAM cell's bit lines [A] (techfile `IoffSRAM`).
    pub ioff_sram: f64,
    /// Sub-threshold leakage of PMOS and NMOS devices [A/µm] (techfile `IoffP`, `IoffN`).
    pub ioff_p: f64,
    pub ioff_n: f64,
    /// Gate and drain capacitance for power [F/µm] (techfile `Cg_pwr`, `Cd_pwr`).
    pub cg_pwr: f64,
    pub cd_pwr: f64,
    /// Gate, gate-drain overlap and drain capacitance for delay [F/µm] (techfile `Cg`, `Cgdl`, `Cd`).
    pub cg: f64,
    pub cgdl: f64,
    pub cd: f64,
    /// Feature size [µm per λ] (techfile `LAMBDA`).
    pub lambda: f64,
    /// Metal pitch [mm] (techfile `MetalPitch`).
    pub metal_pitch: f64,
    /// Wire resistance [Ω/mm] (techfile `Rw`).
    pub rw: f64,
    /// Wire capacitance to ground and to each neighbour [F/mm] (techfile `Cw_gnd`, `Cw_cpl`).
    pub cw_gnd: f64,
    pub cw_cpl: f64,
    /// Length of a link that takes one cycle [mm] (techfile `wire_length`).
    pub wire_length: f64,
    /// Height of a flip-flop cell in metal pitches (techfile `H_DFQD1`); sets the clock wiring.
    pub h_dff: f64,
    /// Bits per flit (word) (BookSim2's `channel_width` default).
    pub flit_bits: f64,
}

impl Default for Technology {
    fn default() -> Self {
        Technology {
            vdd: 0.9,
            r: 606.321,
            ioff_sram: 0.000_000_32,
            ioff_p: 0.000_001_02,
            ioff_n: 0.000_001_02,
            cg_pwr: 0.534e-15,
            cd_pwr: 0.267e-15,
            cg: 0.534e-15,
            cgdl: 0.1068e-15,
            cd: 0.267e-15,
            lambda: 0.016,
            metal_pitch: 0.000_080,
            rw: 0.720_044,
            cw_gnd: 0.267_339e-12,
            cw_cpl: 0.267_339e-12,
            wire_length: 2.0,
            h_dff: 8.0,
            flit_bits: 128.0,
        }
    }
}

/// Quantities every cost derives from.
#[derive(Clone, Copy, Debug)]
struct Derived {
    /// Wire capacitance [F/mm], both neighbours and both planes.
    cw: f64,
    /// Inverter input/output capacitance for delay and for power [F].
    ci_delay: f64,
    co_delay: f64,
    ci: f64,
    co: f64,
    /// Clock period [s]: 20 fan-out-of-4 delays.
    t_clk: f64,
    /// Wire pitch of channels and crossbars [mm]: two metal pitches.
    pitch: f64,
    v2: f64,
}

impl Technology {
    fn derived(&self) -> Derived {
        let fo4 = self.r * (3.0 * self.cd + 12.0 * self.cg + 12.0 * self.cgdl);
        Derived {
            cw: 2.0 * self.cw_cpl + 2.0 * self.cw_gnd,
            ci_delay: 3.0 * (self.cg + self.cgdl),
            co_delay: 3.0 * self.cd,
            ci: 3.0 * self.cg_pwr,
            co: 3.0 * self.cd_pwr,
            t_clk: 20.0 * fo4,
            pitch: 2.0 * self.metal_pitch,
            v2: self.vdd * self.vdd,
        }
    }

    /// The clock period [s] the technology runs at (20 FO4).
    pub fn clock_period(&self) -> f64 {
        self.derived().t_clk
    }
}

/// What a model's hardware consists of: the static costs scale with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Routers (switches), one per node.
    pub routers: u64,
    /// Input and output ports per router, the node's own ports included.
    pub inputs: u64,
    pub outputs: u64,
    /// Flits of input buffering per input port (all its virtual channels); 0 when bufferless.
    pub buffer_flits: u64,
    /// Channels: network links plus one injection and one ejection channel per node.
    pub channels: u64,
    /// Cycles a flit spends on a network link (its length in `wire_length` units).
    pub link_cycles: u64,
}

impl Hardware {
    /// A router per node of `network` with as many ports as the busiest node has links out,
    /// plus its own; `buffer_flits` of input buffering per port; one-cycle links.
    pub fn of_network(network: &crate::topology::Network, buffer_flits: u64) -> Hardware {
        let nodes = network.nodes() as u64;
        let degree = network.out.iter().map(Vec::len).max().unwrap_or(0) as u64;
        Hardware {
            routers: nodes,
            inputs: degree + 1,
            outputs: degree + 1,
            buffer_flits,
            channels: network.links.len() as u64 + 2 * nodes,
            link_cycles: 1,
        }
    }
}

/// What a model's hardware did during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Flits written into and read out of input buffers.
    pub buffer_writes: u64,
    pub buffer_reads: u64,
    /// Flits through a crossbar; of them, those entering by an input port in the lower half of
    /// the crossbar, and those leaving by an output port in its lower half (their wires are
    /// driven over half the length).
    pub crossbar: u64,
    pub crossbar_near_in: u64,
    pub crossbar_near_out: u64,
    /// Switch grants (the allocator and crossbar control, one per flit through a crossbar).
    pub allocations: u64,
    /// Flits over network links (word × hop) and over injection and ejection channels.
    pub link_flits: u64,
    pub port_flits: u64,
    /// Steps of a switch program (the scheduled model: one per configuration loaded).
    pub switch_steps: u64,
}

/// A run's energy, as the reports show it (SPEC §5).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Energy {
    pub total_pj: f64,
    /// Per-event energy: buffers, crossbar, allocation, links, output stages, switch steps.
    pub dynamic_pj: f64,
    /// Per-cycle energy: clock and leakage.
    pub static_pj: f64,
    /// pJ by component (sorted by name).
    pub by_component: BTreeMap<String, f64>,
}

/// One event's or one cycle's cost of each part, in joules, for a given hardware.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// Per flit over a network link: repeated wire, and its retiming flip-flops.
    pub link_wire: f64,
    pub link_dff: f64,
    /// Per flit over an injection or ejection channel (one `wire_length`).
    pub port_wire: f64,
    pub port_dff: f64,
    pub buffer_write: f64,
    pub buffer_read: f64,
    /// Per flit through the crossbar, entering and leaving by far ports; the savings when the
    /// input or the output port is in the lower half.
    pub crossbar: f64,
    pub crossbar_near_in: f64,
    pub crossbar_near_out: f64,
    /// Per switch grant: crossbar control.
    pub allocation: f64,
    /// Per flit leaving a router: the output stage's flip-flops and enable.
    pub output: f64,
    /// Per switch-program step: loading one configuration into the crossbar's control.
    pub switch_step: f64,
    /// Per cycle: clock of one link, of one injection/ejection channel, of one output stage.
    pub link_clock: f64,
    pub port_clock: f64,
    pub output_clock: f64,
    /// Per cycle: leakage of one link, one injection/ejection channel, one input buffer, one
    /// crossbar.
    pub link_leak: f64,
    pub port_leak: f64,
    pub buffer_leak: f64,
    pub crossbar_leak: f64,
}

/// A repeated wire: `k` the repeater size, `m` flip-flop stages, `n` repeaters per stage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Wire {
    length: f64,
    k: f64,
    m: f64,
    n: f64,
}

impl Technology {
    /// Energy [J] of one bit over a repeated wire.
    fn wire_bit(&self, d: &Derived, w: Wire) -> f64 {
        let segments = w.m * w.n;
        let ca = w.k * (d.ci + d.co) + d.cw * (w.length / segments);
        0.5 * ca * d.v2 * segments
    }

    /// Leakage power [W] of one bit of a repeated wire.
    fn wire_leak_bit(&self, w: Wire) -> f64 {
        w.k * 0.5 * (self.ioff_n + 2.0 * self.ioff_p) * self.vdd * w.m * w.n
    }

    /// Clock energy [J per cycle] of `m` banks of `width` flip-flops.
    fn clock(&self, d: &Derived, m: f64, width: f64) -> f64 {
        let columns = self.h_dff * self.metal_pitch / d.pitch;
        let length = width * d.pitch;
        let c = (1.0 + 5.0 / 16.0 * (1.0 + d.co_delay / d.ci_delay))
            * (length * d.cw * columns + width * d.ci_delay);
        m * c * d.v2
    }

    /// Energy [J] of `m` banks of `width` flip-flops taking one flit (activity one).
    fn dff(&self, d: &Derived, m: f64, width: f64) -> f64 {
        let c_din = 2.0 * 0.8 * (d.ci + d.co) + 2.0 * (2.0 / 3.0 * 0.8 * d.co);
        let c_clk = 2.0 * 0.8 * (d.ci + d.co) + 2.0 * (2.0 / 3.0 * 0.8 * self.cg_pwr);
        (0.5 * c_din + c_clk) * m * width * d.v2
    }

    /// The repeated wire for a channel of `length` mm: the repeater size `k` (1 to 10 by 0.1),
    /// repeaters per stage `n` and flip-flop stages `m` (1 to 39) that meet 80% of the clock
    /// period per stage and minimize `m⁴ ·` energy at activity 0.2 on 64 bits, BookSim2's
    /// `wireOptimize`.
    fn wire(&self, d: &Derived, length: f64) -> Wire {
        let mut best = (
            f64::INFINITY,
            Wire {
                length,
                k: 1.0,
                m: 1.0,
                n: 1.0,
            },
        );
        let k0 = self.r * (d.co_delay + d.ci_delay);
        let k2 = 0.5 * self.rw * d.cw;
        // The grid as the reference steps it (repeated additions of 0.1).
        let mut k = 1.0;
        while k < 10.0 {
            let k1 = self.r / k * d.cw + k * self.rw * d.ci_delay;
            for n in 1..40 {
                for m in 1..40 {
                    let (n, m) = (n as f64, m as f64);
                    let l = length / (n * m);
                    let tw = k0 + k1 * l + k2 * l * l;
                    if n * tw >= 0.8 * d.t_clk {
                        continue;
                    }
                    let w = Wire { length, k, m, n };
                    let energy = 0.2 * 64.0 * self.wire_bit(d, w) + 0.2 * self.dff(d, m, 64.0);
                    let metric = m * m * m * m * energy;
                    if metric < best.0 {
                        best = (metric, w);
                    }
                }
            }
            k += 0.1;
        }
        best.1
    }

    /// Energy [J] of driving an SRAM word line and its bit-line circuits, BookSim2's
    /// `powerWordLine` (width in bits, depth in words).
    fn word_line(&self, d: &Derived, width: f64, depth: f64) -> f64 {
        let mp = self.metal_pitch;
        let c_cell = 2.0 * (4.0 * self.lambda) * self.cg_pwr + 6.0 * mp * d.cw;
        let c_wl = width * c_cell;
        let w_array = 8.0 * mp + depth;
        let x = 1.0 + (5.0 / 16.0) * (1.0 + d.co / d.ci);
        let c_predecode = x * (d.cw * w_array * d.ci);
        let c_decode = x * c_wl;
        let h_array = 6.0 * width * mp;
        let y = (1.0 + 0.25) * (1.0 + d.co / d.ci);
        let c_precharge = y * (d.cw * h_array + 3.0 * width * d.ci);
        let c_wren = y * (d.cw * h_array + 2.0 * width * d.ci);
        (c_precharge + c_wren + 2.0 * c_predecode + c_decode) * d.v2
    }

    /// Energy [J] of one bit line of `depth` cells switching.
    fn bit_line(&self, d: &Derived, depth: f64) -> f64 {
        let c_cell = 4.0 * self.lambda * self.cd_pwr + 8.0 * self.metal_pitch * d.cw;
        depth * c_cell * d.v2
    }

    /// The per-event and per-cycle costs of `hw`'s parts.
    pub fn costs(&self, hw: &Hardware) -> Costs {
        let d = self.derived();
        let width = self.flit_bits;
        let (inputs, outputs) = (hw.inputs as f64, hw.outputs as f64);
        let port = self.wire(&d, self.wire_length);
        let link = if hw.link_cycles <= 1 {
            port
        } else {
            self.wire(&d, hw.link_cycles as f64 * self.wire_length)
        };
        let depth = hw.buffer_flits as f64;
        let word_line = self.word_line(&d, width, depth);
        let bit_line = self.bit_line(&d, depth);

        // Crossbar: input rows span the outputs, output columns span the inputs.
        let wx = width * outputs * d.pitch;
        let hx = width * inputs * d.pitch;
        let (cw_in, cw_out) = (wx * d.cw, hx * d.cw);
        let cxi = cw_out / 16.0;
        let cxo = 4.0 * cxi * (d.co_delay / d.ci_delay);
        let cti = cw_in / 16.0;
        let cto = 4.0 * cti * (d.co_delay / d.ci_delay);
        let c_driver = 5.0 / 16.0 * (1.0 + d.co_delay / d.ci_delay) * (0.5 * d.cw * wx + cti);
        let c_in = c_driver + cw_in + cti + outputs * cxi;
        let c_out = cw_out + cto + inputs * cxo;
        let xbar = |c: f64| 0.5 * c * d.v2 * width;
        // Control: one enable per cross-point column plus the wires across.
        let cti_ctrl = 5.0 / 16.0 * cw_in;
        let c_ctrl = width * cti_ctrl + (wx + hx) * d.cw;
        let c_drive = 5.0 / 16.0 * (1.0 + d.co_delay / d.ci_delay) * c_ctrl;
        let allocation = (c_drive + c_ctrl) * d.v2;
        // Output stage enable.
        let c_enable =
            (1.0 + 5.0 / 16.0) * (1.0 + d.co / d.ci) * (width * d.pitch * d.cw + width * d.ci);

        let t = d.t_clk;
        Costs {
            link_wire: width * self.wire_bit(&d, link),
            link_dff: self.dff(&d, link.m, width),
            port_wire: width * self.wire_bit(&d, port),
            port_dff: self.dff(&d, port.m, width),
            buffer_write: word_line + width * bit_line,
            buffer_read: word_line + width * bit_line,
            crossbar: xbar(c_in + c_out),
            crossbar_near_in: xbar(0.5 * cw_out + inputs / 2.0 * cxo),
            crossbar_near_out: xbar(0.5 * cw_in + outputs / 2.0 * cxi),
            allocation,
            output: self.dff(&d, 1.0, width) + c_enable * d.v2,
            switch_step: allocation,
            link_clock: self.clock(&d, link.m, width),
            port_clock: self.clock(&d, port.m, width),
            output_clock: self.clock(&d, 1.0, width),
            link_leak: self.wire_leak_bit(link) * width * t,
            port_leak: self.wire_leak_bit(port) * width * t,
            buffer_leak: depth * self.ioff_sram * self.vdd * width * t,
            crossbar_leak: 0.5
                * (self.ioff_n + 2.0 * self.ioff_p)
                * width
                * (inputs * outputs * cxi + inputs * cti + outputs * cti)
                / d.ci
                * t,
        }
    }

    /// The energy of a run of `cycles` cycles on `hw` that did `act`.
    pub fn energy(&self, hw: &Hardware, act: &Activity, cycles: u64) -> Energy {
        let c = self.costs(hw);
        let pj = 1e12;
        let n = |x: u64| x as f64;
        let nodes = n(hw.routers);
        let links = n(hw.channels.saturating_sub(2 * hw.routers));
        let ports = n(hw.channels.min(2 * hw.routers));
        let cyc = n(cycles);
        let crossbar = n(act.crossbar) * c.crossbar
            - n(act.crossbar_near_in) * c.crossbar_near_in
            - n(act.crossbar_near_out) * c.crossbar_near_out;
        let dynamic = [
            ("buffer_write", n(act.buffer_writes) * c.buffer_write),
            ("buffer_read", n(act.buffer_reads) * c.buffer_read),
            ("crossbar", crossbar),
            ("allocation", n(act.allocations) * c.allocation),
            ("output", n(act.crossbar) * c.output),
            (
                "link",
                n(act.link_flits) * (c.link_wire + c.link_dff)
                    + n(act.port_flits) * (c.port_wire + c.port_dff),
            ),
            ("switch_step", n(act.switch_steps) * c.switch_step),
        ];
        let clock = cyc
            * (links * c.link_clock
                + ports * c.port_clock
                + nodes * n(hw.outputs) * c.output_clock);
        let leakage = cyc
            * (links * c.link_leak
                + ports * c.port_leak
                + nodes * n(hw.inputs) * c.buffer_leak
                + nodes * c.crossbar_leak);
        let mut by_component = BTreeMap::new();
        let mut dynamic_pj = 0.0;
        for (k, v) in dynamic {
            dynamic_pj += v * pj;
            by_component.insert(k.to_string(), v * pj);
        }
        by_component.insert("clock".to_string(), clock * pj);
        by_component.insert("leakage".to_string(), leakage * pj);
        let static_pj = (clock + leakage) * pj;
        Energy {
            total_pj: dynamic_pj + static_pj,
            dynamic_pj,
            static_pj,
            by_component,
        }
    }
}

/// The hardware and activity a model that counts only the words its links carried implies: each
/// word crossed the crossbar of every router on its path (one more than its hops), with a switch
/// grant each time, and — in a buffered model, `buffer_flits > 0` — was written into and read out
/// of the input buffer of each; `words` is what the model delivered, each over one injection and
/// one ejection channel.
pub fn from_links(hw: Hardware, link_words: u64, words: u64) -> Activity {
    let crossings = link_words + words;
    let buffered = if hw.buffer_flits > 0 { crossings } else { 0 };
    Activity {
        buffer_writes: buffered,
        buffer_reads: buffered,
        crossbar: crossings,
        crossbar_near_in: 0,
        crossbar_near_out: 0,
        allocations: crossings,
        link_flits: link_words,
        port_flits: 2 * words,
        switch_steps: 0,
    }
}

/// An energy for tables: pJ, nJ, µJ or mJ with three significant digits or more (`12.3 nJ`).
pub fn format_pj(pj: f64) -> String {
    let (v, unit) = if pj.abs() >= 1e9 {
        (pj / 1e9, "mJ")
    } else if pj.abs() >= 1e6 {
        (pj / 1e6, "µJ")
    } else if pj.abs() >= 1e3 {
        (pj / 1e3, "nJ")
    } else {
        (pj, "pJ")
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// The energy of a model's run of `cycles` cycles that carried `words` words into and out of the
/// network, `min_hops` word-hops had each taken a shortest path, priced with the default
/// technology. A model that counts neither its events nor its links' words is taken to have
/// sent every word along a shortest path.
pub fn of_run(
    model: &dyn super::NetworkModel,
    network: &crate::topology::Network,
    (words, min_hops): (u64, u64),
    cycles: u64,
) -> Energy {
    let hw = model.hardware(network);
    let act = model.activity().unwrap_or_else(|| {
        let busy = model.link_busy();
        let hops = if busy.is_empty() {
            min_hops
        } else {
            busy.iter().sum()
        };
        from_links(hw, hops, words)
    });
    Technology::default().energy(&hw, &act, cycles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh8() -> Hardware {
        Hardware {
            routers: 64,
            inputs: 5,
            outputs: 5,
            buffer_flits: 16,
            channels: 224 + 128,
            link_cycles: 1,
        }
    }

    #[test]
    fn wire_search_finds_the_reference_repeaters() {
        // BookSim2 prints `L = 2 K = 8.1 M = 2 N = 1` for its 2 mm channels.
        let t = Technology::default();
        let w = t.wire(&t.derived(), 2.0);
        assert!((w.k - 8.1).abs() < 1e-9, "{w:?}");
        assert_eq!((w.m, w.n), (2.0, 1.0));
    }

    #[test]
    fn static_power_matches_the_reference_per_part() {
        // BookSim2, 8×8 mesh, 2 VCs × 8 flits, 128-bit flits: per-router and per-channel static
        // powers (its 5 output clocks per router: 1.21188 W over 64 routers; input leakage
        // 0.188744 W; crossbar leakage 1.87408 W; 384 channels: clock 2.9085 W, leakage
        // 1.09645 W).
        let t = Technology::default();
        let c = t.costs(&mesh8());
        let w = |e: f64| e / t.clock_period();
        let close = |a: f64, b: f64| (a - b).abs() / b < 1e-4;
        assert!(close(w(c.output_clock) * 64.0 * 5.0, 1.21188));
        assert!(close(w(c.buffer_leak) * 64.0 * 5.0, 0.188744));
        assert!(close(w(c.crossbar_leak) * 64.0, 1.87408));
        assert!(close(w(c.link_clock) * 384.0, 2.9085));
        assert!(close(w(c.link_leak) * 384.0, 1.09645));
    }

    #[test]
    fn energy_adds_up_and_grows_with_activity() {
        let t = Technology::default();
        let hw = mesh8();
        let idle = t.energy(&hw, &Activity::default(), 1000);
        assert_eq!(idle.dynamic_pj, 0.0);
        assert!(idle.static_pj > 0.0);
        let busy = t.energy(&hw, &from_links(hw, 100, 40), 1000);
        assert!(busy.dynamic_pj > 0.0);
        assert_eq!(busy.static_pj, idle.static_pj);
        let sum: f64 = busy.by_component.values().sum();
        assert!((sum - busy.total_pj).abs() < 1e-6 * busy.total_pj);
        // A near port saves energy; a bufferless model spends none on buffers.
        let c = t.costs(&hw);
        assert!(c.crossbar_near_in > 0.0 && c.crossbar_near_out > 0.0);
        assert!(c.crossbar > c.crossbar_near_in + c.crossbar_near_out);
        let bufferless = Hardware {
            buffer_flits: 0,
            ..hw
        };
        let e = t.energy(&bufferless, &from_links(bufferless, 100, 40), 1000);
        assert_eq!(e.by_component["buffer_write"], 0.0);
    }
}
