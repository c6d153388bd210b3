//! Release and deadline times (Minsky Fig 4-3), critical path, period lower bound (SPEC §2).
