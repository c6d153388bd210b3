//! The evaluator: values, persistent environments, special forms, builtins, macros, tail calls.
