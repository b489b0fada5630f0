//! The FMU binary called through its C interface, as an importer loads it,
//! with what importers get wrong: a step that is not a multiple of the
//! model's, a missing resources folder, a foreign token, unknown value
//! references, calls out of order, unsupported functions. Each returns an
//! error and logs a message naming the call and what to do.

mod support;

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use libloading::Library;
use support::*;
use tandem_fmu::{ExportReport, FmiVersion};

const OK: i32 = 0;
const ERROR: i32 = 3;

type LogMessage = unsafe extern "C" fn(*mut c_void, i32, *const c_char, *const c_char);
type Instantiate = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    bool,
    bool,
    bool,
    bool,
    *const u32,
    usize,
    *mut c_void,
    Option<LogMessage>,
    *mut c_void,
) -> *mut c_void;
type InstantiateModelExchange = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    *const c_char,
    bool,
    bool,
    *mut c_void,
    Option<LogMessage>,
) -> *mut c_void;
type EnterInitializationMode = unsafe extern "C" fn(*mut c_void, bool, f64, f64, bool, f64) -> i32;
type Call = unsafe extern "C" fn(*mut c_void) -> i32;
type DoStep = unsafe extern "C" fn(*mut c_void, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> i32;
type GetFloat64 = unsafe extern "C" fn(*mut c_void, *const u32, usize, *mut f64, usize) -> i32;
type SetFloat64 = unsafe extern "C" fn(*mut c_void, *const u32, usize, *const f64, usize) -> i32;
type GetFloat32 = unsafe extern "C" fn(*mut c_void, *const u32, usize, *mut f32, usize) -> i32;
type FmuState = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> i32;
type SetFmuState = unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32;
type FreeInstance = unsafe extern "C" fn(*mut c_void);

/// Collects what the FMU logs into the `RefCell<Vec<String>>` its
/// environment points to.
unsafe extern "C" fn collect(env: *mut c_void, status: i32, category: *const c_char, message: *const c_char) {
    let messages = &*env.cast::<RefCell<Vec<String>>>();
    let category = CStr::from_ptr(category).to_string_lossy();
    let message = CStr::from_ptr(message).to_string_lossy();
    messages.borrow_mut().push(format!("{status} {category}: {message}"));
}

/// The FMU binary, an exported example's unpacked resources folder and its
/// token, and a log.
struct Fixture {
    library: Library,
    resources: PathBuf,
    token: String,
    log: Box<RefCell<Vec<String>>>,
}

/// The FMU of the example `file`, unpacked once for all tests: its folder
/// and its export's report.
fn unpacked(file: &str) -> (PathBuf, ExportReport) {
    static UNPACKED: Mutex<Vec<(String, PathBuf, ExportReport)>> = Mutex::new(Vec::new());
    let mut unpacked = UNPACKED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, folder, report)) = unpacked.iter().find(|(name, _, _)| name == file) {
        return (folder.clone(), report.clone());
    }
    let report = export_fmu(&example(file), FmiVersion::Fmi3);
    let folder = scratch().join(format!("unpacked_{}", file.trim_end_matches(".json")));
    let _ = std::fs::remove_dir_all(&folder);
    zip::ZipArchive::new(std::fs::File::open(&report.path).unwrap())
        .unwrap()
        .extract(&folder)
        .unwrap();
    unpacked.push((file.to_string(), folder.clone(), report.clone()));
    (folder, report)
}

impl Fixture {
    /// The cruise control's.
    fn new() -> Fixture {
        Fixture::of("cruise_control.json")
    }

    /// The example `file`'s.
    fn of(file: &str) -> Fixture {
        let (folder, report) = unpacked(file);
        let platform = std::fs::read_dir(folder.join("binaries"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let binary = platform
            .path()
            .join(format!("{}{}", report.model_identifier, std::env::consts::DLL_SUFFIX));
        assert!(binary.is_file(), "{} is in the FMU", binary.display());
        // SAFETY: the FMU binary has no initializers beyond Rust's own.
        let library = unsafe { Library::new(&binary) }.unwrap();
        Fixture {
            library,
            resources: folder.join("resources"),
            token: report.token.clone(),
            log: Box::new(RefCell::new(Vec::new())),
        }
    }

    fn function<T: Copy>(&self, name: &str) -> T {
        // SAFETY: each test names the function with its FMI 3 signature.
        unsafe { *self.library.get::<T>(name.as_bytes()).unwrap() }
    }

    fn env(&self) -> *mut c_void {
        (&*self.log as *const RefCell<Vec<String>>).cast_mut().cast()
    }

    /// Instantiates with `resources` and `token`.
    fn instantiate(&self, resources: &Path, token: &str) -> *mut c_void {
        let instantiate: Instantiate = self.function("fmi3InstantiateCoSimulation");
        let name = CString::new("test").unwrap();
        let token = CString::new(token).unwrap();
        let path = CString::new(format!("{}/", resources.display())).unwrap();
        // SAFETY: the arguments are valid for the call; the log outlives
        // the instance.
        unsafe {
            instantiate(
                name.as_ptr(),
                token.as_ptr(),
                path.as_ptr(),
                false,
                false,
                false,
                false,
                null(),
                0,
                self.env(),
                Some(collect),
                null_mut(),
            )
        }
    }

    /// An instance in Step Mode.
    fn stepping(&self) -> *mut c_void {
        let instance = self.instantiate(&self.resources, &self.token);
        assert!(!instance.is_null(), "{:?}", self.log.borrow());
        self.initialize(instance);
        instance
    }

    /// Initializes an instance (stop time 1 s) for Step Mode.
    fn initialize(&self, instance: *mut c_void) {
        let enter: EnterInitializationMode = self.function("fmi3EnterInitializationMode");
        let exit: Call = self.function("fmi3ExitInitializationMode");
        // SAFETY: a live instance.
        unsafe {
            assert_eq!(enter(instance, false, 0.0, 0.0, true, 1.0), OK);
            assert_eq!(exit(instance), OK);
        }
    }

    fn do_step(&self, instance: *mut c_void, t: f64, h: f64) -> (i32, f64) {
        let do_step: DoStep = self.function("fmi3DoStep");
        let (mut event, mut terminate, mut early, mut last) = (true, true, true, f64::NAN);
        // SAFETY: a live instance and valid out-pointers.
        let status = unsafe { do_step(instance, t, h, true, &mut event, &mut terminate, &mut early, &mut last) };
        assert!(!event && !terminate && !early);
        (status, last)
    }

    fn get(&self, instance: *mut c_void, vrs: &[u32]) -> (i32, Vec<f64>) {
        let get: GetFloat64 = self.function("fmi3GetFloat64");
        let mut values = vec![f64::NAN; vrs.len()];
        // SAFETY: a live instance and arrays of the lengths given.
        let status = unsafe { get(instance, vrs.as_ptr(), vrs.len(), values.as_mut_ptr(), values.len()) };
        (status, values)
    }

    fn set(&self, instance: *mut c_void, vrs: &[u32], values: &[f64]) -> i32 {
        let set: SetFloat64 = self.function("fmi3SetFloat64");
        // SAFETY: a live instance and arrays of the lengths given.
        unsafe { set(instance, vrs.as_ptr(), vrs.len(), values.as_ptr(), values.len()) }
    }

    fn free(&self, instance: *mut c_void) {
        let free: FreeInstance = self.function("fmi3FreeInstance");
        // SAFETY: a live instance, not used again.
        unsafe { free(instance) }
    }

    /// The messages logged since the last call, emptied.
    fn logged(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.borrow_mut())
    }
}

#[test]
fn a_step_ending_between_grid_points_ends_there_and_the_grid_stays() {
    let f = Fixture::new();
    let instance = f.stepping();
    let odd = f.stepping();
    // 0.015 s: one step of the model's 0.01 s and one of 0.005 s; then
    // 0.005 s more completes the grid step at 0.02 s.
    assert_eq!(f.do_step(odd, 0.0, 0.015), (OK, 0.015));
    assert_eq!(f.get(odd, &[0]), (OK, vec![0.015]));
    assert_eq!(f.do_step(odd, 0.015, 0.005), (OK, 0.02));
    assert!(f.logged().is_empty());
    // The controller samples at 0.02 s on either; the speed after the split
    // step differs from the whole one by the integrator's error only.
    assert_eq!(f.do_step(instance, 0.0, 0.02), (OK, 0.02));
    let ((_, whole), (_, split)) = (f.get(instance, &[2, 4]), f.get(odd, &[2, 4]));
    assert_eq!(whole[1], split[1], "the force sampled at 0.02 s");
    assert!(
        (whole[0] - split[0]).abs() < 1e-12 * whole[0].abs().max(1.0),
        "{whole:?} {split:?}"
    );
    f.free(instance);
    f.free(odd);
}

#[test]
fn a_step_of_no_length_is_refused_naming_the_fix() {
    let f = Fixture::new();
    let instance = f.stepping();
    for h in [0.0, -0.01, f64::NAN, f64::INFINITY] {
        assert_eq!(f.do_step(instance, 0.0, h), (ERROR, 0.0));
        assert_eq!(
            f.logged(),
            [format!(
                "3 logStatusError: fmi3DoStep: communicationStepSize {h} s: give a positive, finite step"
            )]
        );
    }
    // The refused steps changed nothing: a good one goes on from t = 0.
    assert_eq!(f.do_step(instance, 0.0, 0.02), (OK, 0.02));
    assert_eq!(f.get(instance, &[0]), (OK, vec![0.02]));
    f.free(instance);
}

#[test]
fn a_missing_resources_folder_gives_no_instance_and_says_why() {
    let f = Fixture::new();
    let missing = f.resources.with_file_name("elsewhere");
    assert!(f.instantiate(&missing, &f.token).is_null());
    let logged = f.logged();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(
        logged[0].starts_with("3 logStatusError: fmi3InstantiateCoSimulation: ")
            && logged[0].contains("elsewhere/: neither model.json nor builtin is there"),
        "{logged:?}"
    );
}

#[test]
fn a_foreign_token_gives_no_instance() {
    let f = Fixture::new();
    assert!(f.instantiate(&f.resources, "{another}").is_null());
    let logged = f.logged();
    assert!(
        logged[0].contains(&format!(
            "the instantiation token {{another}} is not this FMU's ({})",
            f.token
        )),
        "{logged:?}"
    );
}

#[test]
fn model_exchange_is_refused() {
    let f = Fixture::new();
    let instantiate: InstantiateModelExchange = f.function("fmi3InstantiateModelExchange");
    let token = CString::new(f.token.clone()).unwrap();
    // SAFETY: valid arguments; no resources path is read.
    let instance = unsafe {
        instantiate(
            c"me".as_ptr(),
            token.as_ptr(),
            null(),
            false,
            false,
            f.env(),
            Some(collect),
        )
    };
    assert!(instance.is_null());
    assert_eq!(
        f.logged(),
        ["3 logStatusError: fmi3InstantiateModelExchange: Tandem's FMUs are Co-Simulation FMUs only; instantiate them for Co-Simulation (fmi3InstantiateCoSimulation)"]
    );
}

#[test]
fn variables_are_read_and_set_by_value_reference_and_mistakes_are_named() {
    let f = Fixture::new();
    let instance = f.stepping();
    // Time, the pedal (its default), v, v_ref (50 × pedal), force; then
    // the parameters, the speed map's gain first.
    let (status, values) = f.get(instance, &[0, 1, 3, 5]);
    assert_eq!((status, values), (OK, vec![0.0, 0.5, 25.0, 50.0]));
    assert_eq!(f.set(instance, &[1], &[0.2]), OK);
    assert_eq!(f.get(instance, &[3, 1]), (OK, vec![10.0, 0.2]));
    assert_eq!(f.get(instance, &[12]).0, ERROR);
    assert_eq!(f.set(instance, &[2], &[1.0]), ERROR);
    assert_eq!(f.set(instance, &[0], &[1.0]), ERROR);
    assert_eq!(f.set(instance, &[1], &[f64::NAN]), ERROR);
    assert_eq!(f.set(instance, &[1, 5], &[0.3, f64::INFINITY]), ERROR);
    assert_eq!(
        f.logged(),
        [
            "3 logStatusError: fmi3GetFloat64: value reference 12 is not a variable of this FMU; its value references are 0 (time), 1 (inputs), 2 to 4 (outputs), 5 to 11 (parameters)",
            "3 logStatusError: fmi3SetFloat64: variable \"v\" (value reference 2) is an output: only inputs and parameters can be set",
            "3 logStatusError: fmi3SetFloat64: variable \"time\" (value reference 0) is the independent variable: only inputs and parameters can be set",
            "3 logStatusError: fmi3SetFloat64: input \"pedal\" (value reference 1) cannot be set to NaN: give a finite number",
            "3 logStatusError: fmi3SetFloat64: parameter \"speed_map.gain\" (value reference 5) cannot be set to inf: give a finite number",
        ]
    );
    // A refused set changed nothing.
    assert_eq!(f.get(instance, &[1, 5]), (OK, vec![0.2, 50.0]));
    // A tunable parameter changes the running model at once.
    assert_eq!(f.set(instance, &[5], &[40.0]), OK);
    assert_eq!(f.get(instance, &[3, 5]), (OK, vec![8.0, 40.0]));
    f.free(instance);
}

#[test]
fn calls_out_of_order_and_past_the_stop_time_are_refused() {
    let f = Fixture::new();
    let instance = f.instantiate(&f.resources, &f.token);
    assert_eq!(f.do_step(instance, 0.0, 0.01).0, ERROR);
    assert_eq!(
        f.logged(),
        ["3 logStatusError: fmi3DoStep: not allowed in Instantiated mode (before initialization); allowed in Step Mode (after initialization)"]
    );
    f.free(instance);
    let instance = f.stepping();
    assert_eq!(f.do_step(instance, 0.5, 0.01).0, ERROR);
    assert_eq!(f.do_step(instance, 0.0, 1.01).0, ERROR);
    assert_eq!(
        f.logged(),
        [
            "3 logStatusError: fmi3DoStep: currentCommunicationPoint 0.5 s is not the instance's time 0 s: step on from where the last step ended (or restore the FMU state of that time)",
            "3 logStatusError: fmi3DoStep: a step to t = 1.01 s passes the stop time 1 s given at initialization (without one, Tandem's bound of 1000000000 s)",
        ]
    );
    assert_eq!(f.do_step(instance, 0.0, 1.0), (OK, 1.0));
    f.free(instance);
}

#[test]
fn saved_states_are_restored_and_unsupported_functions_say_so() {
    let f = Fixture::new();
    let instance = f.stepping();
    let get_state: FmuState = f.function("fmi3GetFMUState");
    let set_state: SetFmuState = f.function("fmi3SetFMUState");
    let free_state: FmuState = f.function("fmi3FreeFMUState");
    assert_eq!(f.do_step(instance, 0.0, 0.1).0, OK);
    let mut state = null_mut();
    // SAFETY: a live instance and a state made by it.
    unsafe { assert_eq!(get_state(instance, &mut state), OK) };
    assert_eq!(f.do_step(instance, 0.1, 0.3).0, OK);
    let (_, at_four_tenths) = f.get(instance, &[0, 2, 4]);
    // SAFETY: as above.
    unsafe {
        assert_eq!(get_state(instance, &mut state), OK, "overwrites the state");
        assert_eq!(f.do_step(instance, 0.4, 0.1).0, OK);
        assert_eq!(set_state(instance, state), OK);
    }
    assert_eq!(f.get(instance, &[0, 2, 4]).1, at_four_tenths);
    // SAFETY: as above; the state is freed and set to NULL.
    unsafe {
        assert_eq!(free_state(instance, &mut state), OK);
        assert!(state.is_null());
    }
    let get_float32: GetFloat32 = f.function("fmi3GetFloat32");
    let mut value = 0.0f32;
    // SAFETY: a live instance and one value.
    assert_eq!(unsafe { get_float32(instance, &0, 1, &mut value, 1) }, ERROR);
    let logged = f.logged();
    assert_eq!(logged.len(), 1);
    assert!(
        logged[0].starts_with("3 logStatusError: fmi3GetFloat32: not supported by Tandem's FMUs"),
        "{logged:?}"
    );
    f.free(instance);
}

#[test]
fn fixed_parameters_are_set_before_initialization_only_and_a_bad_value_is_named() {
    let f = Fixture::of("abs_slip.json");
    let (_, report) = unpacked("abs_slip.json");
    assert_eq!((report.parameters, report.tunable), (4, 2), "{report}");
    // Value references: time, no inputs, the outputs s and mu, then the
    // parameters: increment.value, slip.initial, then branch.inputs (the
    // If block's input count), fixed.
    let branch = 1 + 2 + 2;
    let instance = f.instantiate(&f.resources, &f.token);
    assert_eq!(f.get(instance, &[branch]), (OK, vec![1.0]));
    assert_eq!(f.set(instance, &[branch], &[1.0]), OK);
    assert_eq!(f.set(instance, &[branch], &[2.0]), ERROR);
    let logged = f.logged();
    assert!(
        logged[0].starts_with(&format!(
            "3 logStatusError: fmi3SetFloat64: parameter \"branch.inputs\" (value reference {branch}) cannot be set to 2: "
        )) && logged[0].contains("block \"branch\""),
        "{logged:?}"
    );
    f.initialize(instance);
    assert_eq!(f.set(instance, &[branch], &[1.0]), ERROR);
    assert_eq!(
        f.logged(),
        [format!("3 logStatusError: fmi3SetFloat64: parameter \"branch.inputs\" (value reference {branch}) is fixed: set it before initialization (Instantiated or Initialization Mode, e.g. as a start value); a change while stepping would change the model's signals, states or rates")]
    );
    f.free(instance);
}

#[test]
fn a_restored_state_brings_back_the_parameters_it_was_saved_with() {
    let f = Fixture::new();
    let get_state: FmuState = f.function("fmi3GetFMUState");
    let set_state: SetFmuState = f.function("fmi3SetFMUState");
    let free_state: FmuState = f.function("fmi3FreeFMUState");
    // controller.kp: after the speed map's gain and the controller's kd
    // and ki.
    let kp = 8;
    let unchanged = f.stepping();
    assert_eq!(f.do_step(unchanged, 0.0, 0.2).0, OK);
    let (_, straight) = f.get(unchanged, &[2, 4]);
    let instance = f.stepping();
    assert_eq!(f.get(instance, &[kp]), (OK, vec![1.0]));
    assert_eq!(f.do_step(instance, 0.0, 0.1).0, OK);
    let mut state = null_mut();
    // SAFETY: a live instance and a state made by it.
    unsafe { assert_eq!(get_state(instance, &mut state), OK) };
    assert_eq!(f.set(instance, &[kp], &[4.0]), OK);
    assert_eq!(f.do_step(instance, 0.1, 0.1).0, OK);
    let (_, retuned) = f.get(instance, &[2, 4]);
    assert!(retuned[1] > 3.0 * straight[1], "{retuned:?} {straight:?}");
    // SAFETY: as above.
    unsafe { assert_eq!(set_state(instance, state), OK) };
    assert_eq!(f.get(instance, &[kp]), (OK, vec![1.0]));
    assert_eq!(f.do_step(instance, 0.1, 0.1).0, OK);
    assert_eq!(f.get(instance, &[2, 4]).1, straight, "as if kp had never changed");
    // SAFETY: as above.
    unsafe { assert_eq!(free_state(instance, &mut state), OK) };
    assert!(f.logged().is_empty());
    f.free(instance);
    f.free(unchanged);
}
