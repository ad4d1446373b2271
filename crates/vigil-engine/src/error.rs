use std::fmt;

/// Why a run could not start or had to stop.
#[derive(Debug)]
pub enum EngineError {
    /// The configuration could not be loaded, or (with `--init-errors-fatal`) had errors.
    Config(Vec<String>),
    /// A command-line option vigil cannot honour.
    Usage(String),
    /// Output files could not be created or written.
    Output { path: String, error: std::io::Error },
    /// No capture could be read at all.
    Input(String),
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Config(errs) => {
                write!(f, "configuration error")?;
                for e in errs {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
            EngineError::Usage(s) => write!(f, "{s}"),
            EngineError::Output { path, error } => write!(f, "{path}: {error}"),
            EngineError::Input(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for EngineError {}
