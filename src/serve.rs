//! `tandem serve`: the web front end's server.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use tandem_serve::{Limits, Options};

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
    /// The token every request must carry (Authorization: Bearer TOKEN).
    #[arg(long, env = "TANDEM_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Offline simulations running at once, at most.
    #[arg(long, default_value_t = Limits::default().simulations)]
    pub max_simulations: usize,
}

impl ServeArgs {
    /// The server's options.
    pub fn options(&self) -> Options {
        Options {
            token: self.token.clone(),
            limits: Limits {
                simulations: self.max_simulations.max(1),
                ..Limits::default()
            },
            ..Options::new(self.listen, self.folder.clone())
        }
    }
}

/// Runs `tandem serve` until interrupted.
pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    tandem_serve::serve(args.options(), |address| say!("listening on http://{address}"))?;
    Ok(())
}
