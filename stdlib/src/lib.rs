//! TTDL's standard library, written in TTDL and loaded before every script (SPEC §1.5): helpers,
//! canned mappings (Minsky §4.2.1) and communication patterns (Jacobi, pipelined FFT, Viterbi from
//! the thesis's chapter 5, and the classic permutations and collectives) and the benchmark core
//! graphs of the NoC mapping literature (VOPD, MPEG-4 decoder, MWD, PIP).

/// The library's source files in load order: (name, text).
pub const SOURCES: &[(&str, &str)] = &[
    ("stdlib/util.ttdl", include_str!("ttdl/util.ttdl")),
    ("stdlib/mappings.ttdl", include_str!("ttdl/mappings.ttdl")),
    ("stdlib/patterns.ttdl", include_str!("ttdl/patterns.ttdl")),
    ("stdlib/arrays.ttdl", include_str!("ttdl/arrays.ttdl")),
    (
        "stdlib/benchmarks.ttdl",
        include_str!("ttdl/benchmarks.ttdl"),
    ),
];

/// Every name the library defines at top level, sorted (for completion and documentation).
pub fn defined_names() -> Vec<String> {
    let mut names: Vec<String> = SOURCES
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| {
            let rest = [
                "(define (",
                "(define-comm ",
                "(define-mapping ",
                "(defvar ",
                "(define ",
            ]
            .iter()
            .find_map(|p| line.strip_prefix(p))?;
            let name: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != ')')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_the_thesis_patterns_and_mappings() {
        let names = super::defined_names();
        for n in [
            "identity",
            "row-major",
            "snake",
            "torus->mesh",
            "hypercube->mesh",
            "hypercube->mesh-gray",
            "jacobi-2d",
            "jacobi-3d",
            "pipelined-fft",
            "viterbi-pipeline",
            "nearest-neighbor-on",
            "ring-on",
            "shift-on",
            "transpose-on",
            "all-to-all-on",
            "hypercube-exchange-on",
            "shuffle-exchange-on",
            "bit-reversal-on",
            "scatter-from",
            "gather-to",
            "broadcast-from",
            "core-graph",
            "vopd",
            "mpeg4-decoder",
            "mwd",
            "pip",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
    }
}
