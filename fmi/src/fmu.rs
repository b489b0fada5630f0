//! An opened FMU: unpacked, described, its binary loaded and its functions
//! resolved (or, opened for out-of-process loading, its binary left to the
//! processes its instances run in). Models and slaves share it through an
//! `Arc`: the library stays loaded and the unpacked files stay on disk
//! until the last instance is gone.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use libloading::Library;
use tempfile::TempDir;

use crate::archive::{read_description, unpack, unpack_cached, Unpack};
use crate::description::{FmiVersion, Interface, InterfaceKind, ModelDescription};
use crate::error::FmuError;
use crate::isolate::Host;
use crate::library::{load, Group};
use crate::{ffi2, ffi3};

/// The functions of one interface of one FMI version: those of both
/// interfaces, those of this one, state saving when declared, and the
/// serialization of saved states when that is declared too.
#[derive(Clone, Copy)]
pub(crate) struct Functions<C, K, S, Z> {
    pub common: C,
    pub kind: K,
    pub states: Option<S>,
    pub serialization: Option<Z>,
}

/// The functions of an FMI 2 interface whose own functions are `K`.
pub(crate) type Functions2<K> = Functions<ffi2::Common, K, ffi2::States, ffi2::Serialization>;

/// The functions of an FMI 3 interface whose own functions are `K`.
pub(crate) type Functions3<K> = Functions<ffi3::Common, K, ffi3::States, ffi3::Serialization>;

impl<C: Group, K: Group, S: Group, Z: Group> Functions<C, K, S, Z> {
    /// Resolves them in `library`: state saving when `states`, the
    /// serialization of states when `serialization` too.
    ///
    /// # Safety
    /// The groups' signatures must be those of the library's functions.
    unsafe fn load(library: &Library, states: bool, serialization: bool) -> Result<Self, &'static str> {
        // SAFETY: as the caller promises.
        unsafe {
            Ok(Functions {
                common: C::load(library)?,
                kind: K::load(library)?,
                states: if states { Some(S::load(library)?) } else { None },
                serialization: if states && serialization {
                    Some(Z::load(library)?)
                } else {
                    None
                },
            })
        }
    }
}

/// The functions of an interface, by FMI version.
#[derive(Clone, Copy)]
pub(crate) enum Api<K2, K3> {
    V2(Functions2<K2>),
    V3(Functions3<K3>),
}

type ModelExchangeApi = Api<ffi2::ModelExchange, ffi3::ModelExchange>;
type CoSimulationApi = Api<ffi2::CoSimulation, ffi3::CoSimulation>;

/// Where an FMU is unpacked.
enum Folder {
    /// A temporary directory of its own, removed with it.
    Own(TempDir),
    /// A folder of the cache, kept.
    Cached(PathBuf),
    /// A directory another process unpacked it into and removes (an
    /// out-of-process instance's).
    Lent(PathBuf),
}

impl Folder {
    fn path(&self) -> &Path {
        match self {
            Folder::Own(dir) => dir.path(),
            Folder::Cached(path) | Folder::Lent(path) => path,
        }
    }
}

/// Everything instances share.
pub(crate) struct Loaded {
    /// The FMU file, for messages.
    pub file: PathBuf,
    pub description: ModelDescription,
    model_exchange: Option<ModelExchangeApi>,
    co_simulation: Option<CoSimulationApi>,
    /// The program instances run in when the FMU is loaded out of process
    /// (then its binary is not loaded here).
    pub isolation: Option<Host>,
    /// Instances alive (for `canBeInstantiatedOnlyOncePerProcess`).
    pub live: AtomicUsize,
    /// Kept loaded while the function pointers above are used; dropped
    /// before the directory holding them.
    _libraries: Vec<Library>,
    dir: Folder,
}

impl Loaded {
    /// The unpacked `resources` folder.
    pub(crate) fn resources(&self) -> PathBuf {
        self.dir.path().join("resources")
    }

    /// The folder the FMU is unpacked in.
    pub(crate) fn directory(&self) -> &Path {
        self.dir.path()
    }

    /// The interface of `kind`, or the error of its absence.
    pub(crate) fn interface(&self, kind: InterfaceKind) -> Result<&Interface, FmuError> {
        self.description.interface(kind).ok_or_else(|| self.no_interface(kind))
    }

    pub(crate) fn model_exchange(&self) -> Result<ModelExchangeApi, FmuError> {
        self.model_exchange
            .ok_or_else(|| self.no_interface(InterfaceKind::ModelExchange))
    }

    pub(crate) fn co_simulation(&self) -> Result<CoSimulationApi, FmuError> {
        self.co_simulation
            .ok_or_else(|| self.no_interface(InterfaceKind::CoSimulation))
    }

    fn no_interface(&self, wanted: InterfaceKind) -> FmuError {
        FmuError::NoInterface {
            fmu: self.description.model_name.clone(),
            wanted: wanted.name(),
            available: self.description.interfaces(),
            help: match wanted {
                InterfaceKind::ModelExchange => {
                    "run it as a co-simulation slave (FmuSlave), or export it with Model Exchange"
                }
                InterfaceKind::CoSimulation => "run it as a model (FmuModel), or export it with Co-Simulation",
            },
        }
    }
}

/// The FMU at `file` unpacked where `place` says (a temporary directory
/// when the cache cannot be written), and its model description's text.
fn unpacked(file: &Path, place: &Unpack) -> Result<(Folder, String), FmuError> {
    if let Unpack::Cache(cache) = place {
        if let Some((folder, text)) = unpack_cached(file, cache)? {
            return Ok((Folder::Cached(folder), text));
        }
    }
    let unpacked = unpack(file)?;
    Ok((Folder::Own(unpacked.dir), unpacked.description))
}

/// An opened FMU, ready to be instantiated as a model ([`crate::FmuModel`])
/// or a co-simulation slave ([`crate::FmuSlave`]).
#[derive(Clone)]
pub struct Fmu {
    pub(crate) loaded: Arc<Loaded>,
}

impl Fmu {
    /// Unpacks the FMU at `path` into a temporary directory, reads its
    /// model description, loads the binary of each interface it declares
    /// for this platform and resolves every function those interfaces
    /// need.
    pub fn open(path: impl AsRef<Path>) -> Result<Fmu, FmuError> {
        Fmu::open_with(path, &Unpack::default_place())
    }

    /// As [`Fmu::open`], unpacked where `place` says.
    pub fn open_with(path: impl AsRef<Path>, place: &Unpack) -> Result<Fmu, FmuError> {
        let file = path.as_ref();
        let (folder, text) = unpacked(file, place)?;
        let description = ModelDescription::parse(&text, file)?;
        Fmu::loading(file, description, folder)
    }

    /// Unpacks and describes the FMU at `path` as [`Fmu::open`] does, but
    /// leaves its binary unloaded here: each instance runs in a process of
    /// its own, the program `host` describes, and a crash in the FMU's code
    /// is an error naming the FMU, the FMI call and the signal instead of
    /// this process's end (see [`crate::isolate`]).
    pub fn open_isolated(path: impl AsRef<Path>, host: Host) -> Result<Fmu, FmuError> {
        let file = path.as_ref();
        let (folder, text) = unpacked(file, &Unpack::default_place())?;
        let description = ModelDescription::parse(&text, file)?;
        Ok(Fmu {
            loaded: Arc::new(Loaded {
                file: file.to_path_buf(),
                description,
                model_exchange: None,
                co_simulation: None,
                isolation: Some(host),
                live: AtomicUsize::new(0),
                _libraries: Vec::new(),
                dir: folder,
            }),
        })
    }

    /// The FMU `file` another process unpacked into `dir` (which it
    /// removes), loaded here: an out-of-process instance's.
    pub(crate) fn open_unpacked(file: &Path, dir: &Path) -> Result<Fmu, FmuError> {
        let text = read_description(file, &dir.join("modelDescription.xml"))?;
        let description = ModelDescription::parse(&text, file)?;
        Fmu::loading(file, description, Folder::Lent(dir.to_path_buf()))
    }

    /// The FMU unpacked in `dir`, its binary of each interface loaded and
    /// its functions resolved.
    fn loading(file: &Path, description: ModelDescription, dir: Folder) -> Result<Fmu, FmuError> {
        let mut libraries: Vec<(String, Library, String)> = Vec::new();
        let mut model_exchange = None;
        let mut co_simulation = None;
        for kind in [InterfaceKind::ModelExchange, InterfaceKind::CoSimulation] {
            let Some(interface) = description.interface(kind) else {
                continue;
            };
            let id = &interface.model_identifier;
            let position = match libraries.iter().position(|(name, _, _)| name == id) {
                Some(i) => i,
                None => {
                    let (library, relative) = load(file, dir.path(), description.version, id)?;
                    libraries.push((id.clone(), library, relative));
                    libraries.len() - 1
                }
            };
            let (_, library, relative) = &libraries[position];
            let (states, serialization) = (interface.can_get_and_set_state, interface.can_serialize_state);
            // SAFETY: the groups are declared from the standard's headers.
            let resolved = unsafe {
                match (kind, description.version) {
                    (InterfaceKind::ModelExchange, FmiVersion::V2) => {
                        Functions::load(library, states, serialization).map(|f| model_exchange = Some(Api::V2(f)))
                    }
                    (InterfaceKind::ModelExchange, FmiVersion::V3) => {
                        Functions::load(library, states, serialization).map(|f| model_exchange = Some(Api::V3(f)))
                    }
                    (InterfaceKind::CoSimulation, FmiVersion::V2) => {
                        Functions::load(library, states, serialization).map(|f| co_simulation = Some(Api::V2(f)))
                    }
                    (InterfaceKind::CoSimulation, FmiVersion::V3) => {
                        Functions::load(library, states, serialization).map(|f| co_simulation = Some(Api::V3(f)))
                    }
                }
            };
            resolved.map_err(|symbol| FmuError::MissingSymbol {
                file: file.to_path_buf(),
                library: relative.clone(),
                symbol: symbol.to_string(),
                interface: kind.name(),
            })?;
        }
        Ok(Fmu {
            loaded: Arc::new(Loaded {
                file: file.to_path_buf(),
                description,
                model_exchange,
                co_simulation,
                isolation: None,
                live: AtomicUsize::new(0),
                _libraries: libraries.into_iter().map(|(_, library, _)| library).collect(),
                dir,
            }),
        })
    }

    /// What `modelDescription.xml` says.
    pub fn description(&self) -> &ModelDescription {
        &self.loaded.description
    }

    /// The FMU file it was opened from.
    pub fn file(&self) -> &Path {
        &self.loaded.file
    }

    /// The folder it is unpacked in: a folder of the cache, or a temporary
    /// directory removed when the last user of the FMU is dropped.
    pub fn directory(&self) -> &Path {
        self.loaded.directory()
    }

    /// Whether its instances run out of process ([`Fmu::open_isolated`]).
    pub fn is_isolated(&self) -> bool {
        self.loaded.isolation.is_some()
    }
}
