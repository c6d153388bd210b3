//! Message combining inside a region (Eberhart §3.2.4): one-to-one (Alg 3) sends every
//! (source, destination) pair of a base pattern its own message; local gather/scatter (Alg 4)
//! first gathers onto fewer sources and scatters from fewer destinations, paying start-ups
//! and copies to save start-ups on the bottleneck channel; the hybrid (Alg 5) chooses how many
//! gather and scatter steps pay off for the number of regions sharing the bottleneck.

/// A combining plan: how many recursive-halving gather steps at the sources and scatter steps
/// at the destinations, and what it costs with α + Lβ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Combining {
    pub gathers: u32,
    pub scatters: u32,
    /// Start-ups and units of the gathers and scatters (paid once: regions combine in parallel).
    pub overhead_alpha: u64,
    pub overhead_beta: u64,
    /// Start-ups and units on the bottleneck channel, per region.
    pub transmit_alpha: u64,
    pub transmit_beta: u64,
}

impl Combining {
    pub fn overhead(&self, alpha: u64, beta: u64) -> u64 {
        self.overhead_alpha * alpha + self.overhead_beta * beta
    }

    pub fn transmission(&self, alpha: u64, beta: u64) -> u64 {
        self.transmit_alpha * alpha + self.transmit_beta * beta
    }

    /// Overhead plus `regions` transmissions over the one bottleneck channel.
    pub fn total(&self, regions: u64, alpha: u64, beta: u64) -> u64 {
        self.overhead(alpha, beta) + regions * self.transmission(alpha, beta)
    }
}

/// The cost of a base pattern of `sources → dests` nodes (powers of two), where every source
/// holds `units` for every destination, after `order` combining steps (`true` = gather).
///
/// A gather step halves the sources: each remaining source receives all its partner holds
/// (one start-up, the partner's units). A scatter step halves the destinations that receive
/// over the bottleneck: each then forwards half of what it received (one start-up, that half).
/// What crosses the bottleneck is one message per remaining (source, destination) pair,
/// carrying all the pattern's units.
pub fn combining(sources: u64, dests: u64, units: u64, order: &[bool]) -> Combining {
    let total = sources * dests * units;
    let (mut s, mut d) = (sources, dests);
    let mut c = Combining {
        gathers: 0,
        scatters: 0,
        overhead_alpha: 0,
        overhead_beta: 0,
        transmit_alpha: 0,
        transmit_beta: 0,
    };
    // Gathers happen before the transfer and scatters after it, whatever order they were
    // chosen in; each costs what the data held at that point weighs.
    for &gather in order {
        if gather && s > 1 {
            c.gathers += 1;
            c.overhead_alpha += 1;
            c.overhead_beta += total / s;
            s /= 2;
        }
    }
    for &gather in order {
        if !gather && d > 1 {
            c.scatters += 1;
            d /= 2;
            c.overhead_alpha += 1;
            c.overhead_beta += total / d / 2;
        }
    }
    c.transmit_alpha = s * d;
    c.transmit_beta = total;
    c
}

/// Alg 5: keep halving the larger side while one more combining step (α + the cheaper of the
/// two data moves) costs less than the start-ups it saves on the bottleneck over all regions
/// (half of them). Returns the chosen (gather, scatter) counts in the order taken.
pub fn hybrid_choice(regions: u64, sources: u64, dests: u64, alpha: u64, beta: u64) -> Vec<bool> {
    let (mut s, mut d) = (sources, dests);
    let (mut beta_s, mut beta_d) = (beta * dests, beta * sources);
    let mut order = Vec::new();
    loop {
        let save = regions * s * d * alpha / 2;
        let cost = alpha + beta_s.min(beta_d);
        if cost > save || (s == 1 && d == 1) {
            break;
        }
        if s > d {
            s /= 2;
            beta_s *= 2;
            order.push(true);
        } else {
            d /= 2;
            beta_d *= 2;
            order.push(false);
        }
    }
    order
}

/// The columns of the §3.2.4 table (Fig 3.13, the 4→2 pattern): a one-to-one; b one gather;
/// c one scatter; d gather + scatter; e two gathers; f two gathers + one scatter.
pub const TABLE_COLUMNS: [(&str, &[bool]); 6] = [
    ("a", &[]),
    ("b", &[true]),
    ("c", &[false]),
    ("d", &[true, false]),
    ("e", &[true, true]),
    ("f", &[true, true, false]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_section_3_2_4() {
        // 4 → 2, each source holds one unit for each destination, α = β = 1.
        let rows: Vec<_> = TABLE_COLUMNS
            .iter()
            .map(|(_, o)| {
                let c = combining(4, 2, 1, o);
                (
                    c.overhead_alpha,
                    c.overhead_beta,
                    c.transmit_alpha,
                    c.transmit_beta,
                    c.total(1, 1, 1),
                    c.total(4, 1, 1),
                    c.total(10, 1, 1),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (0, 0, 8, 8, 16, 64, 160),
                (1, 2, 4, 8, 15, 51, 123),
                (1, 4, 4, 8, 17, 53, 125),
                (2, 6, 2, 8, 18, 48, 108),
                (2, 6, 2, 8, 18, 48, 108),
                (3, 10, 1, 8, 22, 49, 103),
            ]
        );
        // Alg 5 picks b for 1 region, d for 4, f for 10: the best total each time.
        assert_eq!(hybrid_choice(1, 4, 2, 1, 1), vec![true]);
        assert_eq!(hybrid_choice(4, 4, 2, 1, 1), vec![true, false]);
        assert_eq!(hybrid_choice(10, 4, 2, 1, 1), vec![true, false, true]);
    }
}
