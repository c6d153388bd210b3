use std::time::Instant;
use ttdl_backend::sim::yuan_aapc::{aapc_phases, check_phases, ring_groups};
use ttdl_backend::sim::yuan_torus::Torus;
fn main() {
    for n in [8usize, 16] {
        let t0 = Instant::now();
        let g = ring_groups(n);
        println!(
            "ring {n}: {:?} groups in {:?}",
            g.as_ref().map(|g| g.len()),
            t0.elapsed()
        );
        if n <= 16 {
            let t = Torus::new(n, n);
            let p = aapc_phases(&t);
            println!(
                "torus {n}: {} phases, check {:?}, pairs {}",
                p.len(),
                check_phases(&t, &p),
                p.iter().map(Vec::len).sum::<usize>()
            );
        }
    }
}
