//! The interactive loop. Its core is a plain function from session + line to output.
