//! The categories of mistakes in a model, shared by the block library and
//! the diagram compiler.

/// What kind of mistake a model error reports (a block's, or the
/// diagram's: [`crate::diagram::DiagramError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not valid JSON or does not have the model's shape.
    Syntax,
    /// A block `type` that the library does not have.
    UnknownBlockType,
    /// A parameter that is unknown, missing, mistyped or out of range.
    Parameter,
    /// Two blocks with the same id among siblings, or an id with `.` or `/`.
    DuplicateId,
    /// A link naming a block or port that does not exist.
    Link,
    /// An input port with no link into it.
    Unconnected,
    /// An input port with more than one link into it.
    MultiplyConnected,
    /// Connected ports of different widths.
    Dimension,
    /// A cycle of direct-feedthrough ports.
    AlgebraicLoop,
    /// A sample time that is malformed or does not fit the solver step.
    SampleTime,
}
