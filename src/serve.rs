//! `tandem serve`: the web front end's server.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use tandem_serve::{Limits, Options, Page};

use crate::out::say;

/// Arguments of `tandem serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Where to listen; an address other than loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The folder the page may open and save models in, and whose
    /// configurations it may run (results go to its results/).
    #[arg(long, default_value = ".")]
    pub folder: PathBuf,
    /// The token every request must carry (Authorization: Bearer TOKEN):
    /// at least 16 printable ASCII characters, or `generate` for a random
    /// one, printed.
    #[arg(long, env = "TANDEM_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A name the server is reached by besides its address (and localhost
    /// on loopback); requests naming any other host are refused. Repeat
    /// for more names.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub hosts: Vec<String>,
    /// Offline simulations running at once, at most.
    #[arg(long, default_value_t = Limits::default().simulations)]
    pub max_simulations: usize,
    /// Models compiled at once (checks, and the starts of simulations and
    /// runs), at most.
    #[arg(long, default_value_t = Limits::default().checks)]
    pub max_checks: usize,
    /// The memory the rows of simulations and runs may take in all, in
    /// MiB: the rows of the oldest ended ones are dropped beyond it (their
    /// status says so), and a simulation that would not fit is refused.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory >> 20)]
    pub memory_budget: usize,
    /// A serial device a run started through the server may open (besides
    /// those the folder's configurations name when it starts). Repeat for
    /// more devices.
    #[arg(long = "device", value_name = "PATH")]
    pub devices: Vec<PathBuf>,
    /// Serve the built page in this folder (read at start-up) instead of
    /// the one built into the binary: for work on the page, after `npm run
    /// build` in web/.
    #[arg(long, value_name = "DIR")]
    pub page: Option<PathBuf>,
}

/// The token given as `--token`: `generate` makes a random one and
/// prints it.
pub fn token(given: Option<&str>) -> anyhow::Result<Option<String>> {
    match given {
        Some("generate") => {
            let token = tandem_serve::generate_token()?;
            say!("token: {token}");
            Ok(Some(token))
        }
        other => Ok(other.map(str::to_string)),
    }
}

impl ServeArgs {
    /// The server's options.
    pub fn options(&self) -> anyhow::Result<Options> {
        Ok(Options {
            token: token(self.token.as_deref())?,
            hosts: self.hosts.clone(),
            devices: self.devices.clone(),
            limits: Limits {
                simulations: self.max_simulations.max(1),
                checks: self.max_checks.max(1),
                memory: self.memory_budget.max(1).saturating_mul(1 << 20),
                ..Limits::default()
            },
            page: match &self.page {
                Some(folder) => Page::load(folder)?,
                None => Page::Embedded,
            },
            ..Options::new(self.listen, self.folder.clone())
        })
    }
}

/// Runs `tandem serve` until interrupted.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    tandem_serve::serve(args.options()?, |address| say!("listening on http://{address}"))?;
    Ok(())
}
