//! Sessions that share the process's virtual clock advance in lock-step,
//! frame by frame; a stall injected into one session's own clock cannot
//! be followed there, and is refused with the way to run it instead.

use tandem_config::parse_run_config;
use tandem_models::plants::PROFILES;
use tandem_session::watch::Watched;
use tandem_session::{bind, ClockMode, Session};

#[test]
fn a_watched_virtual_session_refuses_stalls_of_its_own_clock() {
    let dir = std::env::temp_dir().join(format!("tandem-watched-stalls-{}", std::process::id()));
    let text = "model = \"ev\"\nduration = \"1s\"\n[inputs]\nprofile = \"ev-drive-cycle\"\n\
                [[virtual_clock.stalls]]\nat = \"100ms\"\nduration = \"60ms\"\n";
    let config = parse_run_config(text, &dir.join("run.toml"), PROFILES).unwrap();
    let session = Session::new(bind(config).unwrap(), Watched::options(ClockMode::Virtual, &dir)).unwrap();
    let refused = Watched::start(session).err().expect("refused");
    assert_eq!(
        refused.to_string(),
        "virtual_clock.stalls stop one session's own clock, which sessions sharing the process's virtual clock in \
         lock-step cannot follow; run this configuration with `tandem run --virtual-clock`, or without its stalls"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
