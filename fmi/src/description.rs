//! What `modelDescription.xml` says, in one form for FMI 2.0 and 3.0.
//!
//! FMI 2 refers to variables by their 1-based index in `ModelVariables`,
//! FMI 3 by value reference; here every reference is an index into
//! [`ModelDescription::variables`].

use std::fmt;

/// The FMI version of a model description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    /// FMI 2.0.
    V2,
    /// FMI 3.0.
    V3,
}

impl fmt::Display for FmiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FmiVersion::V2 => "FMI 2.0",
            FmiVersion::V3 => "FMI 3.0",
        })
    }
}

/// The two ways of running an FMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterfaceKind {
    /// The importer integrates the FMU's derivatives.
    ModelExchange,
    /// The FMU integrates itself between communication points.
    CoSimulation,
}

impl InterfaceKind {
    /// The name the standard gives it.
    pub fn name(self) -> &'static str {
        match self {
            InterfaceKind::ModelExchange => "Model Exchange",
            InterfaceKind::CoSimulation => "Co-Simulation",
        }
    }
}

/// An interface (Model Exchange or Co-Simulation) the FMU implements, with
/// its capability flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Interface {
    /// Name of the binary, without extension, and prefix of nothing (FMUs
    /// built as shared libraries export unprefixed names).
    pub model_identifier: String,
    /// `canGetAndSetFMUstate` (FMI 2) / `canGetAndSetFMUState` (FMI 3).
    pub can_get_and_set_state: bool,
    /// `canSerializeFMUstate` (FMI 2) / `canSerializeFMUState` (FMI 3):
    /// a saved state can be written as bytes and read back.
    pub can_serialize_state: bool,
    /// `canHandleVariableCommunicationStepSize` (Co-Simulation).
    pub can_handle_variable_step: bool,
    /// `canBeInstantiatedOnlyOncePerProcess`.
    pub once_per_process: bool,
    /// Whether `CompletedIntegratorStep` must be called after every step
    /// (FMI 2: not `completedIntegratorStepNotNeeded`; FMI 3:
    /// `needsCompletedIntegratorStep`).
    pub needs_completed_integrator_step: bool,
    /// `providesDirectionalDerivative` (FMI 2) / `providesDirectionalDerivatives` (FMI 3).
    pub provides_directional_derivatives: bool,
}

/// `DefaultExperiment`: what the FMU's author suggests for a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DefaultExperiment {
    /// Start time (s).
    pub start: Option<f64>,
    /// Stop time (s).
    pub stop: Option<f64>,
    /// Relative tolerance.
    pub tolerance: Option<f64>,
    /// Step size (s).
    pub step: Option<f64>,
}

/// What a variable is to the outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    /// Set from outside, constant during a run (or between events when tunable).
    Parameter,
    /// Computed from parameters.
    CalculatedParameter,
    /// Set from outside during a run.
    Input,
    /// Read from outside.
    Output,
    /// Internal.
    Local,
    /// The independent variable (time).
    Independent,
    /// An FMI 3 parameter that changes the structure (array sizes).
    StructuralParameter,
}

impl Causality {
    /// The name in `modelDescription.xml`.
    pub fn name(self) -> &'static str {
        match self {
            Causality::Parameter => "parameter",
            Causality::CalculatedParameter => "calculatedParameter",
            Causality::Input => "input",
            Causality::Output => "output",
            Causality::Local => "local",
            Causality::Independent => "independent",
            Causality::StructuralParameter => "structuralParameter",
        }
    }
}

/// When a variable's value may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variability {
    /// Never.
    Constant,
    /// After initialisation, never.
    Fixed,
    /// Only at events, when set from outside.
    Tunable,
    /// Only at events.
    Discrete,
    /// At any time.
    Continuous,
}

impl Variability {
    /// The name in `modelDescription.xml`.
    pub fn name(self) -> &'static str {
        match self {
            Variability::Constant => "constant",
            Variability::Fixed => "fixed",
            Variability::Tunable => "tunable",
            Variability::Discrete => "discrete",
            Variability::Continuous => "continuous",
        }
    }
}

/// The type of a variable's values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VariableType {
    /// A number: a float, an integer of any width, or a Boolean (FMI 2
    /// `Real`, `Integer` and `Boolean`; FMI 3 `Float32` to `UInt64` and
    /// `Boolean`).
    Number(Numeric),
    /// An enumeration (read and written as FMI 2 `Integer` / FMI 3 `Int64`).
    Enumeration,
    /// A string.
    String,
    /// FMI 3 `Binary`: a byte string.
    Binary,
    /// FMI 3 `Clock`.
    Clock,
    /// A type element this importer does not know, by name.
    Other(String),
}

impl VariableType {
    /// The type of a variable from the name of its type element, in the
    /// FMI version's schema (FMI 2's `Integer` is FMI 3's `Int32`).
    pub fn from_element(tag: &str) -> VariableType {
        match tag {
            "Real" => VariableType::Number(Numeric::Float64),
            "Integer" => VariableType::Number(Numeric::Int32),
            "Enumeration" => VariableType::Enumeration,
            "String" => VariableType::String,
            "Binary" => VariableType::Binary,
            "Clock" => VariableType::Clock,
            other => match Numeric::ALL.into_iter().find(|n| n.element() == other) {
                Some(numeric) => VariableType::Number(numeric),
                None => VariableType::Other(other.to_string()),
            },
        }
    }

    /// The numeric type its values are read and written as, for a type
    /// whose values are numbers (Booleans as 0 and 1, enumerations as
    /// their integers); `None` for strings, binaries, clocks and unknown
    /// types. `version` decides an enumeration's width.
    pub fn numeric(&self, version: FmiVersion) -> Option<Numeric> {
        match self {
            VariableType::Number(numeric) => Some(*numeric),
            VariableType::Enumeration if version == FmiVersion::V2 => Some(Numeric::Int32),
            VariableType::Enumeration => Some(Numeric::Int64),
            _ => None,
        }
    }

    /// The name of its type element in the schema of `version`.
    pub fn element(&self, version: FmiVersion) -> &str {
        match (version, self) {
            (FmiVersion::V2, VariableType::Number(Numeric::Float64)) => "Real",
            (FmiVersion::V2, VariableType::Number(Numeric::Int32)) => "Integer",
            (_, VariableType::Number(numeric)) => numeric.element(),
            (_, VariableType::Enumeration) => "Enumeration",
            (_, VariableType::String) => "String",
            (_, VariableType::Binary) => "Binary",
            (_, VariableType::Clock) => "Clock",
            (_, VariableType::Other(name)) => name,
        }
    }
}

impl fmt::Display for VariableType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariableType::Number(Numeric::Float64) => f.write_str("Real/Float64"),
            VariableType::Number(Numeric::Int32) => f.write_str("Integer/Int32"),
            other => f.write_str(other.element(FmiVersion::V3)),
        }
    }
}

/// How values of a numeric variable travel through the FMI calls; Tandem
/// holds each as an `f64` (exact for every type but 64-bit integers beyond
/// 2^53 in magnitude, which round to the nearest `f64`, and Float32, whose
/// every value an `f64` holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Numeric {
    /// `fmi2Real` / `fmi3Float64`.
    Float64,
    /// `fmi3Float32`.
    Float32,
    /// `fmi3Int8`.
    Int8,
    /// `fmi3UInt8`.
    UInt8,
    /// `fmi3Int16`.
    Int16,
    /// `fmi3UInt16`.
    UInt16,
    /// `fmi2Integer` / `fmi3Int32` (and FMI 2 enumerations).
    Int32,
    /// `fmi3UInt32`.
    UInt32,
    /// `fmi3Int64` (and FMI 3 enumerations).
    Int64,
    /// `fmi3UInt64`.
    UInt64,
    /// `fmi2Boolean` / `fmi3Boolean`, as 0 or 1.
    Boolean,
}

impl Numeric {
    /// Every numeric type.
    pub const ALL: [Numeric; 11] = [
        Numeric::Float64,
        Numeric::Float32,
        Numeric::Int8,
        Numeric::UInt8,
        Numeric::Int16,
        Numeric::UInt16,
        Numeric::Int32,
        Numeric::UInt32,
        Numeric::Int64,
        Numeric::UInt64,
        Numeric::Boolean,
    ];

    /// `value` as this type holds it: integers rounded toward zero and
    /// clamped to the type's range (NaN to 0), Booleans as 1 for any value
    /// other than 0, Float32 rounded to the nearest.
    pub fn coerce(self, value: f64) -> f64 {
        match self {
            Numeric::Float64 => value,
            Numeric::Float32 => f64::from(value as f32),
            Numeric::Int8 => f64::from(value as i8),
            Numeric::UInt8 => f64::from(value as u8),
            Numeric::Int16 => f64::from(value as i16),
            Numeric::UInt16 => f64::from(value as u16),
            Numeric::Int32 => f64::from(value as i32),
            Numeric::UInt32 => f64::from(value as u32),
            Numeric::Int64 => value as i64 as f64,
            Numeric::UInt64 => value as u64 as f64,
            Numeric::Boolean => f64::from(u8::from(value != 0.0)),
        }
    }

    /// The name of its type element in FMI 3 (`Float64`, `Int8`, ...,
    /// `Boolean`).
    pub fn element(self) -> &'static str {
        match self {
            Numeric::Float64 => "Float64",
            Numeric::Float32 => "Float32",
            Numeric::Int8 => "Int8",
            Numeric::UInt8 => "UInt8",
            Numeric::Int16 => "Int16",
            Numeric::UInt16 => "UInt16",
            Numeric::Int32 => "Int32",
            Numeric::UInt32 => "UInt32",
            Numeric::Int64 => "Int64",
            Numeric::UInt64 => "UInt64",
            Numeric::Boolean => "Boolean",
        }
    }

    /// Whether the type's values are whole numbers (integers, Booleans).
    pub fn is_integer(self) -> bool {
        !matches!(self, Numeric::Float64 | Numeric::Float32)
    }
}

/// The `initial` attribute: how a variable's start value is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initial {
    /// The start value is the initial value.
    Exact,
    /// The start value is a guess for an iteration.
    Approx,
    /// The FMU computes the initial value (a start value is ignored).
    Calculated,
}

/// One dimension of an FMI 3 array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// A fixed size (`start`).
    Fixed(u64),
    /// The size a structural parameter holds, by its index in
    /// [`ModelDescription::variables`].
    Parameter(usize),
}

/// An FMI 3 `<Alias>`: another name for the variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The alias's name.
    pub name: String,
    /// Its display unit, when it has its own.
    pub display_unit: Option<String>,
}

/// One variable of `ModelVariables`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarVariable {
    /// Unique name.
    pub name: String,
    /// The handle the FMI functions take.
    pub value_reference: u32,
    /// What it is to the outside.
    pub causality: Causality,
    /// When it may change.
    pub variability: Variability,
    /// Its type.
    pub kind: VariableType,
    /// Its `initial` attribute, when given.
    pub initial: Option<Initial>,
    /// Its start value as a number (Booleans as 0 or 1; of an array, its
    /// first element), when it has one.
    pub start: Option<f64>,
    /// Its start value as written (every element of an array; a String's
    /// text, a Binary's hexadecimal digits), when it has one.
    pub start_text: Option<String>,
    /// Its unit, from the variable or its declared type.
    pub unit: Option<String>,
    /// Its display unit, from the variable or its declared type.
    pub display_unit: Option<String>,
    /// Its minimum, from the variable or its declared type.
    pub min: Option<f64>,
    /// Its maximum, from the variable or its declared type.
    pub max: Option<f64>,
    /// For a derivative, the index of the variable it is the derivative of.
    pub derivative_of: Option<usize>,
    /// Whether it is an FMI 3 array (it has `Dimension` elements).
    pub array: bool,
    /// An FMI 3 array's dimensions, outermost first (empty for a scalar).
    pub dimensions: Vec<Dimension>,
    /// Its FMI 3 aliases.
    pub aliases: Vec<Alias>,
    /// The FMI 3 clocks it belongs to (indices of their variables).
    pub clocks: Vec<usize>,
    /// The line of `modelDescription.xml` declaring it.
    pub line: u32,
}

impl ScalarVariable {
    /// Whether it is called `name`, by its name or an alias.
    pub fn is_called(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a.name == name)
    }
}

/// An unknown of `ModelStructure` and what it depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct Unknown {
    /// Index of the variable.
    pub variable: usize,
    /// Indices of the variables it depends on, when stated (`None`: on
    /// everything).
    pub dependencies: Option<Vec<usize>>,
}

/// `ModelStructure`: outputs, state derivatives, initial unknowns and
/// event indicators.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelStructure {
    /// The outputs, in order.
    pub outputs: Vec<Unknown>,
    /// The derivatives of the continuous states, in the order of the state
    /// vector.
    pub derivatives: Vec<Unknown>,
    /// The unknowns computed during initialisation.
    pub initial_unknowns: Vec<Unknown>,
    /// The number of event indicators (FMI 2 `numberOfEventIndicators`,
    /// FMI 3 `EventIndicator` elements).
    pub event_indicators: usize,
}

/// The most values one array variable may hold.
pub const MAX_ELEMENTS: usize = 1 << 24;

/// The parsed `modelDescription.xml`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDescription {
    /// The FMI version.
    pub version: FmiVersion,
    /// `modelName`.
    pub model_name: String,
    /// FMI 2 `guid` / FMI 3 `instantiationToken`, checked by the binary.
    pub token: String,
    /// The Model Exchange interface, when declared.
    pub model_exchange: Option<Interface>,
    /// The Co-Simulation interface, when declared.
    pub co_simulation: Option<Interface>,
    /// Whether FMI 3 Scheduled Execution is declared (Tandem does not run
    /// it).
    pub scheduled_execution: bool,
    /// The suggested run.
    pub default_experiment: DefaultExperiment,
    /// Every variable, in declaration order.
    pub variables: Vec<ScalarVariable>,
    /// Outputs, derivatives and their dependencies.
    pub structure: ModelStructure,
}

impl ModelDescription {
    /// The interface of `kind`, when declared.
    pub fn interface(&self, kind: InterfaceKind) -> Option<&Interface> {
        match kind {
            InterfaceKind::ModelExchange => self.model_exchange.as_ref(),
            InterfaceKind::CoSimulation => self.co_simulation.as_ref(),
        }
    }

    /// The interfaces declared, by name.
    pub fn interfaces(&self) -> Vec<&'static str> {
        [InterfaceKind::ModelExchange, InterfaceKind::CoSimulation]
            .into_iter()
            .filter(|&k| self.interface(k).is_some())
            .map(InterfaceKind::name)
            .collect()
    }

    /// The continuous states, in the order of the state vector: the index
    /// of the variable each listed derivative is the derivative of.
    pub fn states(&self) -> Vec<usize> {
        self.structure
            .derivatives
            .iter()
            .filter_map(|d| self.variables[d.variable].derivative_of)
            .collect()
    }

    /// The variable called `name` (by its name or an FMI 3 alias).
    pub fn variable(&self, name: &str) -> Option<&ScalarVariable> {
        self.variables
            .iter()
            .find(|v| v.name == name)
            .or_else(|| self.variables.iter().find(|v| v.is_called(name)))
    }

    /// The index of the variable called `name` (by its name or an alias).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.variables
            .iter()
            .position(|v| v.name == name)
            .or_else(|| self.variables.iter().position(|v| v.is_called(name)))
    }

    /// The sizes of the dimensions of variable `i`, outermost first (none
    /// for a scalar): a structural parameter's size is its start value.
    /// `None` when a size cannot be known (a structural parameter without
    /// a whole, non-negative start value).
    pub fn shape(&self, i: usize) -> Option<Vec<usize>> {
        self.variables[i]
            .dimensions
            .iter()
            .map(|d| match *d {
                Dimension::Fixed(n) => usize::try_from(n).ok(),
                Dimension::Parameter(p) => self.variables[p]
                    .start
                    .filter(|s| *s >= 0.0 && s.fract() == 0.0 && *s <= MAX_ELEMENTS as f64)
                    .map(|s| s as usize),
            })
            .collect()
    }

    /// How many values variable `i` holds (1 for a scalar), when known and
    /// at most [`MAX_ELEMENTS`].
    pub fn elements(&self, i: usize) -> Option<usize> {
        let shape = self.shape(i)?;
        shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= MAX_ELEMENTS)
    }

    /// The names of the values of variable `i`: its name for a scalar, else
    /// one per element in row-major order (the order the FMI calls use),
    /// `name[1,2]` with 1-based indices as Modelica writes them. `None`
    /// when its size is not known.
    pub fn element_names(&self, i: usize) -> Option<Vec<String>> {
        let shape = self.shape(i)?;
        let name = &self.variables[i].name;
        if shape.is_empty() {
            return Some(vec![name.clone()]);
        }
        let count = self.elements(i)?;
        let mut names = Vec::with_capacity(count);
        let mut index = vec![0usize; shape.len()];
        for _ in 0..count {
            let parts: Vec<String> = index.iter().map(|k| (k + 1).to_string()).collect();
            names.push(format!("{name}[{}]", parts.join(",")));
            for d in (0..shape.len()).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Some(names)
    }

    /// The names of the variables whose value reference is `vr`.
    pub fn names_of(&self, vr: u32) -> impl Iterator<Item = &str> {
        self.variables
            .iter()
            .filter(move |v| v.value_reference == vr)
            .map(|v| v.name.as_str())
    }
}
