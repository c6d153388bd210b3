//! Switch programs: what each node's switch does on every cycle (Minsky Fig 5-9).
