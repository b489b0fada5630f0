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
    /// A double: FMI 2 `Real`, FMI 3 `Float64`.
    Float64,
    /// FMI 3 `Float32`.
    Float32,
    /// A 32-bit signed integer: FMI 2 `Integer`, FMI 3 `Int32`.
    Int32,
    /// FMI 3's other integers (`Int8`, `UInt64`, ...), by name.
    OtherInteger(String),
    /// An enumeration (an integer of FMI 2 `Integer` / FMI 3 `Int64` width).
    Enumeration,
    /// A Boolean.
    Boolean,
    /// A string.
    String,
    /// Another FMI 3 type (`Binary`, `Clock`), by name.
    Other(String),
}

impl fmt::Display for VariableType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VariableType::Float64 => f.write_str("Real/Float64"),
            VariableType::Float32 => f.write_str("Float32"),
            VariableType::Int32 => f.write_str("Integer/Int32"),
            VariableType::OtherInteger(name) | VariableType::Other(name) => f.write_str(name),
            VariableType::Enumeration => f.write_str("Enumeration"),
            VariableType::Boolean => f.write_str("Boolean"),
            VariableType::String => f.write_str("String"),
        }
    }
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
    /// Its start value as a number (Booleans as 0 or 1), when it has one.
    pub start: Option<f64>,
    /// Its unit, from the variable or its declared type.
    pub unit: Option<String>,
    /// Its minimum, from the variable or its declared type.
    pub min: Option<f64>,
    /// Its maximum, from the variable or its declared type.
    pub max: Option<f64>,
    /// For a derivative, the index of the variable it is the derivative of.
    pub derivative_of: Option<usize>,
    /// Whether it is an FMI 3 array (it has `Dimension` elements).
    pub array: bool,
    /// The line of `modelDescription.xml` declaring it.
    pub line: u32,
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

    /// The variable called `name`.
    pub fn variable(&self, name: &str) -> Option<&ScalarVariable> {
        self.variables.iter().find(|v| v.name == name)
    }

    /// The names of the variables whose value reference is `vr`.
    pub fn names_of(&self, vr: u32) -> impl Iterator<Item = &str> {
        self.variables
            .iter()
            .filter(move |v| v.value_reference == vr)
            .map(|v| v.name.as_str())
    }
}
