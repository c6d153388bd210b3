//! A parsed TGFF file written out as a TTDL program.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::parse::{Table, TaskGraph, TgffFile, Word};
use super::TgffOptions;
use crate::diagnostic::Diagnostic;

/// An arc as (source task, destination task, words), tasks by their index in their graph.
type Edge = (usize, usize, u64);

/// The most words a message, or cycles a compute, may be given (far above what the backend
/// plans; it keeps the conversion from floats exact and the numbers readable).
const MOST: f64 = 1e12;

fn error(w: &Word, message: impl Into<String>, label: &str) -> Diagnostic {
    Diagnostic::new("tgff", message).with_label(w.span, label)
}

fn table_title(t: &Table) -> String {
    format!("@{} {}", t.name.text, t.id.text)
}

/// The table a `NAME` or `NAME:ID` option names.
fn named_table<'a>(tables: &'a [Table], spec: &str, flag: &str) -> Result<&'a Table, Diagnostic> {
    let (name, id) = match spec.split_once(':') {
        Some((n, i)) => (n, Some(i)),
        None => (spec, None),
    };
    let name = name.trim_start_matches('@');
    tables
        .iter()
        .find(|t| t.name.text.eq_ignore_ascii_case(name) && id.is_none_or(|i| t.id.text == i))
        .ok_or_else(|| {
            let known: Vec<String> = tables.iter().map(table_title).collect();
            Diagnostic::new(
                "tgff",
                format!("{flag} `{spec}`: the file has no such table"),
            )
            .with_note(if known.is_empty() {
                "the file has no tables".to_string()
            } else {
                format!("its tables: {}", known.join(", "))
            })
        })
}

/// A column of a table: the value of the first row of type `kind` that has the column.
fn lookup<'a>(table: &'a Table, kind: &str, column: &str) -> Option<&'a Word> {
    table.rows.iter().find_map(|row| {
        let at = |c: &str| row.columns.iter().position(|x| x == c);
        let t = row.values.get(at("type")?)?;
        let same = t.text == kind
            || matches!((t.text.parse::<f64>(), kind.parse::<f64>()), (Ok(a), Ok(b)) if a == b);
        same.then(|| row.values.get(at(column)?)).flatten()
    })
}

/// `column` of `table`, or an error at the table when no row of it has that column beside a
/// `type` column.
fn checked_column(table: &Table, column: String) -> Result<Column<'_>, Diagnostic> {
    if !has_column(table, &column) {
        return Err(error(
            &table.name,
            format!(
                "{} has no column `{column}` with a `type` column",
                table_title(table)
            ),
            "this table",
        ));
    }
    Ok(Column { table, column })
}

fn has_column(table: &Table, column: &str) -> bool {
    table
        .rows
        .iter()
        .any(|r| r.columns.iter().any(|c| c == column) && r.columns.iter().any(|c| c == "type"))
}

/// `ceil(value × scale)` as a whole number, or an error at the value.
fn scaled(w: &Word, scale: f64, what: &str, least: u64) -> Result<u64, Diagnostic> {
    let v: f64 = w.text.parse().map_err(|_| {
        error(
            w,
            format!("{what}: `{}` is not a number", w.text),
            "expected a number",
        )
    })?;
    let x = (v * scale).ceil();
    if !(x.is_finite() && (0.0..=MOST).contains(&x)) {
        return Err(error(
            w,
            format!("{what}: {} × {scale} is not between 0 and {MOST}", w.text),
            "this value",
        )
        .with_help("choose a scale that brings it into range"));
    }
    Ok((x as u64).max(least))
}

/// How one of the two tables is used.
struct Column<'a> {
    table: &'a Table,
    column: String,
}

fn arc_column<'a>(file: &'a TgffFile, o: &TgffOptions) -> Result<Option<Column<'a>>, Diagnostic> {
    let table = match &o.arc_table {
        Some(spec) => named_table(&file.tables, spec, "--arc-table")?,
        None => match file
            .tables
            .iter()
            .find(|t| t.name.text.to_ascii_uppercase().starts_with("COMMUN"))
        {
            Some(t) => t,
            None => return Ok(None),
        },
    };
    let column = match &o.arc_column {
        Some(c) => c.to_ascii_lowercase(),
        None => table
            .rows
            .iter()
            .flat_map(|r| r.columns.iter())
            .find(|c| *c != "type" && *c != "version")
            .cloned()
            .ok_or_else(|| {
                error(
                    &table.name,
                    format!("{} has no value column", table_title(table)),
                    "this table",
                )
            })?,
    };
    checked_column(table, column).map(Some)
}

fn task_column<'a>(file: &'a TgffFile, o: &TgffOptions) -> Result<Option<Column<'a>>, Diagnostic> {
    let column = o.task_column.to_ascii_lowercase();
    let table = match &o.task_table {
        Some(spec) => named_table(&file.tables, spec, "--task-table")?,
        None => match file.tables.iter().find(|t| has_column(t, &column)) {
            Some(t) => t,
            None => return Ok(None),
        },
    };
    checked_column(table, column).map(Some)
}

/// A TTDL string literal naming task `task` of graph `graph`.
fn task_name(graph: &Word, task: &Word) -> String {
    let name = format!("{}/{}", graph.text, task.text);
    let escaped: String = name
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("(task \"{escaped}\")")
}

/// The TTDL program for a parsed TGFF file.
pub fn program(name: &str, file: &TgffFile, o: &TgffOptions) -> Result<String, Diagnostic> {
    if file.graphs.is_empty() {
        return Err(
            Diagnostic::new("tgff", format!("{name} has no `@TASK_GRAPH` block"))
                .with_help("a TGFF file describes its task graphs as `@TASK_GRAPH n { … }`"),
        );
    }
    let size_ok = o.size_scale.is_finite() && o.size_scale > 0.0;
    let compute_ok = o.compute_scale.is_finite() && o.compute_scale >= 0.0;
    if !(size_ok && compute_ok) {
        return Err(Diagnostic::new(
            "tgff",
            "the size scale must be positive and the compute scale not negative",
        ));
    }
    let arcs = arc_column(file, o)?;
    let tasks = task_column(file, o)?;
    let (ntasks, narcs) = file
        .graphs
        .iter()
        .fold((0, 0), |(t, a), g| (t + g.tasks.len(), a + g.arcs.len()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        ";;; Imported from {name} (a TGFF file) by `ttdl import tgff`.\n\
         ;;; {} task graph(s), {ntasks} tasks, {narcs} arcs.",
        file.graphs.len()
    );
    out.push_str(";;; One task per TGFF task, named GRAPH/TASK; one message per arc.\n");
    match &arcs {
        Some(c) => {
            let _ = writeln!(
                out,
                ";;; Message size: column `{}` of {} for the arc's type, x {} word(s), rounded up.",
                c.column,
                table_title(c.table),
                o.size_scale
            );
        }
        None => out.push_str(";;; Message size: one word (the file has no table of arc types).\n"),
    }
    match &tasks {
        Some(c) => {
            let _ = writeln!(
                out,
                ";;; Compute: column `{}` of {} for the task's type (its first row), x {} cycle(s), \
                 rounded up.",
                c.column,
                table_title(c.table),
                o.compute_scale
            );
        }
        None => out.push_str(";;; Compute: none (the file has no table of task types).\n"),
    }
    out.push_str(
        ";;; Each task reads its inputs, computes, then writes its outputs, once per iteration.\n\
         ;;; TGFF's periods and deadlines are kept as comments.\n\n\
         (define-comm tgff-task (self inputs cycles outputs n)\n  \
         (iterate\n    \
         (dolist (i inputs) (read-stream (second i) (first i)))\n    \
         (when (> cycles 0) (compute cycles))\n    \
         (dolist (o outputs) (write-stream (second o) (first o)))\n    \
         n))\n\n",
    );
    let _ = writeln!(out, "(defvar iterations {})", o.iterations);
    for g in &file.graphs {
        graph(&mut out, g, arcs.as_ref(), tasks.as_ref(), o)?;
    }
    Ok(out)
}

fn graph(
    out: &mut String,
    g: &TaskGraph,
    arcs: Option<&Column>,
    tasks: Option<&Column>,
    o: &TgffOptions,
) -> Result<(), Diagnostic> {
    // Task names, in order, with their first declaration.
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in g.tasks.iter().enumerate() {
        if let Some(&j) = index.get(t.name.text.as_str()) {
            return Err(error(
                &t.name,
                format!("task `{}` is declared twice", t.name.text),
                "again",
            )
            .with_label(g.tasks[j].name.span, "first declared here"));
        }
        index.insert(&t.name.text, i);
    }
    let find = |w: &Word| {
        index.get(w.text.as_str()).copied().ok_or_else(|| {
            error(
                w,
                format!("task graph {} has no task `{}`", g.id.text, w.text),
                "not a task of this graph",
            )
        })
    };
    let mut edges = Vec::new();
    for a in &g.arcs {
        let words = match arcs {
            Some(c) => {
                let v = lookup(c.table, &a.kind.text, &c.column).ok_or_else(|| {
                    error(
                        &a.kind,
                        format!(
                            "arc type {} is not in {} (column `{}`)",
                            a.kind.text,
                            table_title(c.table),
                            c.column
                        ),
                        "this type",
                    )
                })?;
                scaled(v, o.size_scale, "message size", 1)?
            }
            None => 1,
        };
        edges.push((find(&a.from)?, find(&a.to)?, words));
    }
    if let Some(at) = cycle(g.tasks.len(), &edges) {
        let a = &g.arcs[at];
        return Err(error(
            &a.name,
            format!(
                "task graph {} has a cycle through arc {}",
                g.id.text, a.name.text
            ),
            "this arc closes a cycle",
        )
        .with_help("TGFF task graphs are acyclic; every task would wait for itself"));
    }
    let _ = write!(out, "\n;; @TASK_GRAPH {}", g.id.text);
    if let Some(p) = &g.period {
        let _ = write!(out, ": PERIOD {}", p.text);
    }
    out.push('\n');
    for d in &g.deadlines {
        let kind = if d.hard {
            "HARD_DEADLINE"
        } else {
            "SOFT_DEADLINE"
        };
        find(&d.task)?;
        let _ = writeln!(
            out,
            ";; {kind} {} ON {} AT {}",
            d.name.text, d.task.text, d.at.text
        );
    }
    for (i, t) in g.tasks.iter().enumerate() {
        let cycles = match tasks {
            Some(c) => match lookup(c.table, &t.kind.text, &c.column) {
                Some(v) => scaled(v, o.compute_scale, "compute time", 0)?,
                None => {
                    return Err(error(
                        &t.kind,
                        format!(
                            "task type {} is not in {} (column `{}`)",
                            t.kind.text,
                            table_title(c.table),
                            c.column
                        ),
                        "this type",
                    ))
                }
            },
            None => 0,
        };
        let list = |pick: &dyn Fn(&Edge) -> Option<usize>| {
            let items: Vec<String> = edges
                .iter()
                .filter_map(|e| {
                    pick(e).map(|peer| {
                        format!("(list {} {})", task_name(&g.id, &g.tasks[peer].name), e.2)
                    })
                })
                .collect();
            if items.is_empty() {
                "'()".to_string()
            } else {
                format!("(list {})", items.join(" "))
            }
        };
        let inputs = list(&|e| (e.1 == i).then_some(e.0));
        let outputs = list(&|e| (e.0 == i).then_some(e.1));
        let _ = writeln!(
            out,
            "(tgff-task {}\n           {inputs}\n           {cycles}\n           {outputs}\n           \
             iterations)",
            task_name(&g.id, &t.name)
        );
    }
    Ok(())
}

/// The index of an edge that closes a cycle, if the graph has one.
fn cycle(n: usize, edges: &[Edge]) -> Option<usize> {
    // Kahn's algorithm; an edge between two tasks left over lies on or after a cycle, and the
    // first such edge whose source is also left over is reported.
    let mut indegree = vec![0usize; n];
    let mut successors = vec![Vec::new(); n];
    for e in edges {
        indegree[e.1] += 1;
        successors[e.0].push(e.1);
    }
    let mut ready: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    let mut done = vec![false; n];
    while let Some(v) = ready.pop() {
        done[v] = true;
        for &w in &successors[v] {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(w);
            }
        }
    }
    edges.iter().position(|e| !done[e.0] && !done[e.1])
}
