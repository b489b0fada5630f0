//! `tandem serve`: the web front end's server. It serves the page (built
//! from `web/` and embedded in the binary) and an HTTP and WebSocket API
//! (`serve/API.md`): the block library, model checks, offline
//! simulations streamed while they run, and real-time runs with their
//! live statistics, outputs and changes.
//!
//! It depends on the session, the configuration, the runtime and the
//! models; only the binary and the benchmarks depend on it.
//!
//! It answers only requests that name it in their `Host` and, from a
//! browser, only its own page (`guard.rs`); its folder is opened once and
//! every file is resolved beneath it by the kernel (`confine.rs`), the
//! paths a run configuration names included (`runconfig.rs`).
//! What a peer can take is bounded: the rows of simulations and runs by a
//! memory budget (the oldest ended ones dropped, `state.rs`), compilations
//! by slots taken once a body has arrived, half of them per client, and
//! half the budget (`slots.rs`), a body by 5 s (`body.rs`), a run's serial
//! devices by those the server was started to allow (`devices.rs`).
//!
//! The work is done by Tandem's libraries on threads of their own: a
//! simulation on a worker thread, a run by its session (whose real-time
//! threads never wait for the server: the server reads the lock-free
//! metrics and the rows the session drains). The async side only moves
//! bytes.
//!
//! ```no_run
//! use tandem_serve::{serve, Options};
//! let options = Options::new("127.0.0.1:8080".parse().unwrap(), ".".into());
//! serve(options, |address| println!("listening on http://{address}")).unwrap();
//! ```

mod app;
mod body;
mod confine;
mod devices;
mod error;
mod folder;
mod guard;
mod hosts;
mod job;
mod library;
mod live;
mod page;
mod registry;
mod runconfig;
mod runs;
mod simulations;
mod slots;
mod state;
mod table;
mod token;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::confine::Root;
use crate::devices::Devices;
use crate::hosts::Hosts;
use crate::state::App;

pub use live::{attach, LiveRun, RunObserver};
pub use page::{Page, PageError, MAX_PAGE_BYTES, MAX_PAGE_FILES};
pub use state::Limits;
pub use token::{check_token, generate_token, TokenError, MIN_TOKEN_CHARS};

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where it listens.
    pub listen: SocketAddr,
    /// The only folder the API reads and writes.
    pub folder: PathBuf,
    /// The token every API request must carry; required when `listen` is
    /// not a loopback address (see [`check_token`]).
    pub token: Option<String>,
    /// Names the server answers to besides its address (and `localhost`
    /// on loopback): a request's `Host` must give one of them.
    pub hosts: Vec<String>,
    /// Its bounds.
    pub limits: Limits,
    /// Serial devices a run started through it may open (`--device`),
    /// besides those named by the folder's run configurations when it
    /// starts.
    pub devices: Vec<PathBuf>,
    /// The page it serves: the one built in, or one read from a folder.
    pub page: Page,
}

impl Options {
    /// Listening on `listen`, serving `folder`, with no token, no device
    /// allowed but those its configurations name, and the default limits.
    pub fn new(listen: SocketAddr, folder: PathBuf) -> Self {
        Options {
            listen,
            folder,
            token: None,
            hosts: Vec::new(),
            limits: Limits::default(),
            devices: Vec::new(),
            page: Page::Embedded,
        }
    }
}

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "--listen {0}: listening on an address other than loopback needs a token; give --token (or TANDEM_TOKEN), \
         or listen on 127.0.0.1"
    )]
    TokenRequired(SocketAddr),
    /// The token cannot be used.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The folder cannot be used.
    #[error("--folder {}: {cause}; give an existing folder", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The address cannot be bound, or the server failed.
    #[error("{what}: {cause}")]
    Io {
        /// What was being done.
        what: String,
        /// What the system said.
        cause: std::io::Error,
    },
}

/// Serves until the process ends, calling `ready` with the bound address
/// once it listens. `runs` are real-time runs started elsewhere (the
/// command line's) to show beside the server's own.
pub fn serve(options: Options, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    serve_with(options, Vec::new(), ready)
}

/// As [`serve`], with `runs` already going (see [`attach`]).
pub fn serve_with(options: Options, runs: Vec<Arc<LiveRun>>, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    if options.token.is_none() && !options.listen.ip().is_loopback() {
        return Err(ServeError::TokenRequired(options.listen));
    }
    if let Some(token) = &options.token {
        check_token(token)?;
    }
    let root = Root::open(&options.folder).map_err(|cause| ServeError::Folder {
        path: options.folder.clone(),
        cause,
    })?;
    let io = |what: String| move |cause| ServeError::Io { what, cause };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("cannot start the server's threads".into()))?;
    let listen = options.listen;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(io(format!("cannot listen on {listen}")))?;
        let address = listener
            .local_addr()
            .map_err(io("cannot read the bound address".into()))?;
        let hosts = Hosts::new(listen.ip(), &options.hosts);
        let devices = Devices::gather(&options.devices, root.path());
        let app = App::new(root, hosts, options.token, options.limits, devices);
        let page = options.page;
        for run in runs {
            // Runs started elsewhere are not this server's to limit.
            let _ = app.runs.add(run, usize::MAX);
        }
        ready(address);
        axum::serve(
            listener,
            app::router(app, page).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .map_err(io("the server stopped".into()))
    })
}
