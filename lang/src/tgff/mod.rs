//! Importing TGFF task graphs (Dick, Rhodes and Wolf's generator, and the E3S benchmarks written
//! in its format) as TTDL programs: one task per TGFF task, one message per arc, its size from a
//! column of the arc types' table, each task's compute time from a column of the task types'
//! table. What `ttdl import tgff` prints.

mod emit;
pub mod parse;

use crate::diagnostic::Diagnostic;
use crate::span::FileId;

/// How the TGFF tables become message sizes and compute times.
#[derive(Clone, Debug, PartialEq)]
pub struct TgffOptions {
    /// The table of arc types, `NAME` or `NAME:ID` (default: the first table whose name starts
    /// with `COMMUN`, e.g. `@COMMUN_QUANT 0`; with none, every message is one word).
    pub arc_table: Option<String>,
    /// Its column giving an arc type's quantity (default: the first column that is neither
    /// `type` nor `version`).
    pub arc_column: Option<String>,
    /// Words per unit of that column: a message has `ceil(quantity × size_scale)` words, at
    /// least one.
    pub size_scale: f64,
    /// The table of task types, `NAME` or `NAME:ID` (default: the first table with a
    /// `task_column` column; with none, tasks do not compute).
    pub task_table: Option<String>,
    /// Its column giving a task type's execution time (the first row of each type is used).
    pub task_column: String,
    /// Cycles per unit of that column: a task computes `ceil(time × compute_scale)` cycles.
    pub compute_scale: f64,
    /// How many times every task graph runs (its periods, one after another).
    pub iterations: u64,
}

impl Default for TgffOptions {
    fn default() -> Self {
        TgffOptions {
            arc_table: None,
            arc_column: None,
            size_scale: 1.0,
            task_table: None,
            task_column: "exec_time".to_string(),
            compute_scale: 1.0,
            iterations: 1,
        }
    }
}

/// The TTDL program equivalent to the TGFF file `text` (read from `name`, whose spans carry
/// file id `file`), or a diagnostic pointing at what is wrong in it.
pub fn import(
    file: FileId,
    name: &str,
    text: &str,
    options: &TgffOptions,
) -> Result<String, Diagnostic> {
    let parsed = parse::parse(file, text)?;
    emit::program(name, &parsed, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "# comment\n@HYPERPERIOD 10\n\n@TASK_GRAPH 3 {\n  PERIOD 10\n  \
                         TASK src TYPE 0 host 1\n  TASK dst TYPE 1\n  \
                         ARC a FROM src to dst TYPE 7\n  HARD_DEADLINE d ON dst AT 9\n}\n\n\
                         @COMMUN_QUANT 0 {\n  7 5E1\n}\n\n@PE 0 {\n# type version exec_time\n  \
                         0 0 2.5\n  1 0 3\n  1 1 1\n}\n";

    #[test]
    fn reads_graphs_and_tables_in_any_case() {
        let f = parse::parse(0, SMALL).expect("parses");
        assert_eq!(f.graphs.len(), 1);
        let g = &f.graphs[0];
        assert_eq!(g.id.text, "3");
        assert_eq!(g.tasks.len(), 2);
        assert_eq!(
            (g.arcs[0].from.text.as_str(), g.arcs[0].to.text.as_str()),
            ("src", "dst")
        );
        assert_eq!(g.deadlines.len(), 1);
        assert_eq!(f.tables.len(), 2);
        assert_eq!(f.tables[0].rows[0].columns, ["type", "value"]);
        assert_eq!(f.tables[1].rows.len(), 3);
    }

    #[test]
    fn sizes_and_compute_come_from_the_tables() {
        let p = import(0, "small.tgff", SMALL, &TgffOptions::default()).expect("imports");
        assert!(p.contains("(list (list (task \"3/dst\") 50))"), "{p}");
        // Type 0 computes 2.5 cycles, rounded up; type 1 takes its first row (3).
        assert!(p.contains("'()\n           3\n"), "{p}");
        assert!(p.contains("           3\n           '()"), "{p}");
        let half = TgffOptions {
            size_scale: 0.5,
            ..TgffOptions::default()
        };
        let p = import(0, "small.tgff", SMALL, &half).expect("imports");
        assert!(p.contains("(task \"3/dst\") 25)"), "{p}");
    }

    #[test]
    fn errors_point_into_the_file() {
        // Each bad file, and the text its diagnostic's first label starts at.
        for (text, at) in [
            ("@TASK_GRAPH 0 {\n  TASK a TYPE 0\n", "{\n"),
            ("@TASK_GRAPH 0 {\n  NODE a\n}\n", "NODE"),
            ("@TASK_GRAPH 0 {\n  TASK a TYPE 0\n  TASK a TYPE 1\n}\n", "a TYPE 1"),
            ("@TASK_GRAPH 0 {\n  ARC x FROM a TYPE 0\n}\n", "TYPE 0\n}"),
            ("@TASK_GRAPH 0 {\n  TASK a TYPE 0\n  ARC x FROM a TO a TYPE 0\n}\n", "x FROM"),
            ("@X 0 {\n# type size\n0 big\n}\n@TASK_GRAPH 0 {\n  TASK a TYPE 0\n  TASK b TYPE 0\n  \
              ARC x FROM a TO b TYPE 0\n}\n", "big"),
        ] {
            let o = TgffOptions {
                arc_table: text.starts_with("@X").then(|| "X".to_string()),
                ..TgffOptions::default()
            };
            let d = import(0, "t", text, &o).expect_err(text);
            let start = d.labels[0].span.start;
            assert!(text[start..].starts_with(at), "{text:?}: {d:?}");
        }
    }
}
