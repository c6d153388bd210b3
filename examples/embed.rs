//! Embedding TTDL: evaluate a script with the standard library, plan it with the defaults (or
//! the script's `target`), and print the plan as the JSON document of `ttdl run --format json`.
//!
//! `cargo run --release --example embed -- examples/jacobi-2d.ttdl`

use std::process::ExitCode;

use ttdl::session::Session;
use ttdl_backend::pipeline::Settings;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: embed FILE.ttdl");
        return ExitCode::from(2);
    };
    let run = || -> Result<String, String> {
        let mut session = Session::new().map_err(|e| e.to_string())?;
        session.load_file(&path).map_err(|e| e.to_string())?;
        // What the script printed goes to stderr: stdout is one JSON document.
        eprint!("{}", session.take_output());
        let plan = session
            .plan(&Settings::default())
            .map_err(|e| e.to_string())?;
        plan.to_json().map_err(|e| e.to_string())
    };
    match run() {
        Ok(json) => {
            print!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
