//! The subtask DAG (petgraph): intra-task and inter-task edges (Minsky §4.1.2).
