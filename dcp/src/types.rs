//! The enumerations of DCP 1.0 as they go on the wire: slave states,
//! operating modes, data types, transport protocols, scopes and error
//! codes.

use std::fmt;

/// Declares a `u8`-coded enumeration with its wire values and names.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident : $repr:ty { $($(#[$vdoc:meta])* $variant:ident = $value:expr, $text:expr;)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant = $value,)*
        }

        impl $name {
            /// Every value, in wire order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The value for wire code `code`, if it is one.
            pub fn from_code(code: $repr) -> Option<$name> {
                match code {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// The wire code.
            pub fn code(self) -> $repr {
                self as $repr
            }

            /// The specification's name.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_enum! {
    /// A slave's state.
    State: u8 {
        /// Started, not registered.
        Alive = 0x00, "ALIVE";
        /// Registered, taking configuration.
        Configuration = 0x01, "CONFIGURATION";
        /// Checking the configuration, opening data ports.
        Preparing = 0x02, "PREPARING";
        /// Ports open.
        Prepared = 0x03, "PREPARED";
        /// Loading the model.
        Configuring = 0x04, "CONFIGURING";
        /// Ready to initialise or run.
        Configured = 0x05, "CONFIGURED";
        /// Computing initial outputs.
        Initializing = 0x06, "INITIALIZING";
        /// Initial outputs computed.
        Initialized = 0x07, "INITIALIZED";
        /// Sending initial outputs.
        SendingI = 0x08, "SENDING_I";
        /// Started; exchanging data.
        Synchronizing = 0x09, "SYNCHRONIZING";
        /// Ready to run.
        Synchronized = 0x0A, "SYNCHRONIZED";
        /// Running.
        Running = 0x0B, "RUNNING";
        /// Taking a step (non-real-time).
        Computing = 0x0C, "COMPUTING";
        /// Step taken (non-real-time).
        Computed = 0x0D, "COMPUTED";
        /// Sending the step's outputs (non-real-time).
        SendingD = 0x0E, "SENDING_D";
        /// Stopping.
        Stopping = 0x0F, "STOPPING";
        /// Stopped.
        Stopped = 0x10, "STOPPED";
        /// Handling an error.
        ErrorHandling = 0x11, "ERRORHANDLING";
        /// An error handled, the slave safe.
        ErrorResolved = 0x12, "ERRORRESOLVED";
    }
}

impl State {
    /// Whether `STC_stop` is accepted.
    pub fn stoppable(self) -> bool {
        (State::Preparing.code()..=State::SendingD.code()).contains(&self.code())
    }

    /// Whether the state is one of the Run superstate (simulation time
    /// may pass).
    pub fn runs(self) -> bool {
        matches!(self, State::Synchronizing | State::Synchronized | State::Running)
    }
}

wire_enum! {
    /// How a slave's time relates to wall-clock time.
    OpMode: u8 {
        /// Hard real time: a missed deadline is an error.
        HardRealTime = 0x00, "HRT";
        /// Soft real time: deadlines are aimed at, misses counted.
        SoftRealTime = 0x01, "SRT";
        /// Non-real-time: each step granted by the master.
        NonRealTime = 0x02, "NRT";
    }
}

wire_enum! {
    /// The type of a value on the wire.
    DataType: u8 {
        /// Unsigned 8 bits.
        Uint8 = 0x0, "uint8";
        /// Unsigned 16 bits.
        Uint16 = 0x1, "uint16";
        /// Unsigned 32 bits.
        Uint32 = 0x2, "uint32";
        /// Unsigned 64 bits.
        Uint64 = 0x3, "uint64";
        /// Signed 8 bits.
        Int8 = 0x4, "int8";
        /// Signed 16 bits.
        Int16 = 0x5, "int16";
        /// Signed 32 bits.
        Int32 = 0x6, "int32";
        /// Signed 64 bits.
        Int64 = 0x7, "int64";
        /// IEEE 754 binary32.
        Float32 = 0x8, "float32";
        /// IEEE 754 binary64.
        Float64 = 0x9, "float64";
        /// UTF-8 text with a u32 length.
        String = 0xA, "string";
        /// Bytes with a u32 length.
        Binary = 0xB, "binary";
    }
}

impl DataType {
    /// The type a value of this type converts to without loss, per the
    /// specification's table of allowed conversions (widening only).
    pub fn converts_to(self, to: DataType) -> bool {
        use DataType::*;
        if self == to {
            return true;
        }
        match self {
            Uint8 => matches!(to, Uint16 | Uint32 | Uint64 | Int16 | Int32 | Int64 | Float32 | Float64),
            Uint16 => matches!(to, Uint32 | Uint64 | Int32 | Int64 | Float32 | Float64),
            Uint32 => matches!(to, Uint64 | Int64 | Float64),
            Int8 => matches!(to, Int16 | Int32 | Int64 | Float32 | Float64),
            Int16 => matches!(to, Int32 | Int64 | Float32 | Float64),
            Int32 => matches!(to, Int64 | Float64),
            Float32 => matches!(to, Float64),
            Uint64 | Int64 | Float64 | String | Binary => false,
        }
    }

    /// The element name of the slave description (`Float64`, `Uint8`, …).
    pub fn element(self) -> &'static str {
        match self {
            DataType::Uint8 => "Uint8",
            DataType::Uint16 => "Uint16",
            DataType::Uint32 => "Uint32",
            DataType::Uint64 => "Uint64",
            DataType::Int8 => "Int8",
            DataType::Int16 => "Int16",
            DataType::Int32 => "Int32",
            DataType::Int64 => "Int64",
            DataType::Float32 => "Float32",
            DataType::Float64 => "Float64",
            DataType::String => "String",
            DataType::Binary => "Binary",
        }
    }

    /// The type named `name` as in a slave file (`float64`, `int8`, …) or
    /// as a description's element (`Float64`, `Int8`, …).
    pub fn parse(name: &str) -> Option<DataType> {
        DataType::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name || t.element() == name)
    }
}

wire_enum! {
    /// The transport of a network information PDU.
    Transport: u8 {
        /// UDP over IPv4.
        UdpIpv4 = 0x00, "UDP_IPv4";
        /// Bluetooth RFCOMM.
        Bluetooth = 0x01, "Bluetooth";
        /// CAN.
        Can = 0x02, "CAN";
        /// USB 2.0.
        Usb = 0x03, "USB";
        /// TCP over IPv4.
        TcpIpv4 = 0x04, "TCP_IPv4";
    }
}

wire_enum! {
    /// When a data id's configuration is in force.
    Scope: u8 {
        /// Initialisation, run and non-real-time steps.
        All = 0x0, "initialization, run and non-real-time";
        /// Initialisation only.
        Initialization = 0x1, "initialization";
        /// Run and non-real-time steps only.
        Run = 0x2, "run and non-real-time";
    }
}

wire_enum! {
    /// An error code of `RSP_nack` and `RSP_error_ack`.
    ErrorCode: u16 {
        /// No error.
        None = 0x0000, "NONE";
        /// An error not named elsewhere.
        Generic = 0x1001, "PROTOCOL_ERROR_GENERIC";
        /// No `INF_state` heartbeat within the interval.
        HeartbeatMissed = 0x1002, "PROTOCOL_ERROR_HEARTBEAT_MISSED";
        /// The PDU is not allowed in the slave's state.
        NotAllowedInState = 0x1003, "PROTOCOL_ERROR_PDU_NOT_ALLOWED_IN_THIS_STATE";
        /// A variable's property (min, max) violated.
        PropertyViolated = 0x1004, "PROTOCOL_ERROR_PROPERTY_VIOLATED";
        /// A transition acknowledged is still under way.
        TransitionInProgress = 0x1005, "PROTOCOL_ERROR_STATE_TRANSITION_IN_PROGRESS";
        /// A known PDU type of the wrong length.
        InvalidLength = 0x2001, "INVALID_LENGTH";
        /// Unknown log category.
        InvalidLogCategory = 0x2002, "INVALID_LOG_CATEGORY";
        /// Unknown log level.
        InvalidLogLevel = 0x2003, "INVALID_LOG_LEVEL";
        /// Unknown log mode.
        InvalidLogMode = 0x2004, "INVALID_LOG_MODE";
        /// A major version the slave does not speak.
        InvalidMajorVersion = 0x2005, "INVALID_MAJOR_VERSION";
        /// A minor version the slave does not speak.
        InvalidMinorVersion = 0x2006, "INVALID_MINOR_VERSION";
        /// Unusable network information.
        InvalidNetworkInformation = 0x2007, "INVALID_NETWORK_INFORMATION";
        /// An operating mode the slave does not support.
        InvalidOpMode = 0x2008, "INVALID_OP_MODE";
        /// A string or binary beyond its maximum size.
        InvalidPayload = 0x2009, "INVALID_PAYLOAD";
        /// Unknown scope.
        InvalidScope = 0x200A, "INVALID_SCOPE";
        /// A source type that does not convert to the variable's type.
        InvalidSourceDataType = 0x200B, "INVALID_SOURCE_DATA_TYPE";
        /// A start time in the past.
        InvalidStartTime = 0x200C, "INVALID_START_TIME";
        /// The state the master names is not the slave's.
        InvalidStateId = 0x200D, "INVALID_STATE_ID";
        /// Unsupported steps.
        InvalidSteps = 0x200E, "INVALID_STEPS";
        /// Unusable time resolution.
        InvalidTimeResolution = 0x200F, "INVALID_TIME_RESOLUTION";
        /// Unknown transport.
        InvalidTransportProtocol = 0x2010, "INVALID_TRANSPORT_PROTOCOL";
        /// Not this slave's UUID.
        InvalidUuid = 0x2011, "INVALID_UUID";
        /// A value reference the slave does not have (or of the wrong causality).
        InvalidValueReference = 0x2012, "INVALID_VALUE_REFERENCE";
        /// A sequence id other than the one expected.
        InvalidSequenceId = 0x2013, "INVALID_SEQUENCE_ID";
        /// A gap among the input positions of a data id.
        GapInputPos = 0x3001, "INCOMPLETE_CONFIG_GAP_INPUT_POS";
        /// A gap among the output positions of a data id.
        GapOutputPos = 0x3002, "INCOMPLETE_CONFIG_GAP_OUTPUT_POS";
        /// A gap among the tunable parameter positions.
        GapTunablePos = 0x3003, "INCOMPLETE_CONFIG_GAP_TUNABLE_POS";
        /// An input data id without source network information.
        NetworkInfoInput = 0x3004, "INCOMPLETE_CONFIG_NW_INFO_INPUT";
        /// An output data id without target network information.
        NetworkInfoOutput = 0x3005, "INCOMPLETE_CONFIG_NW_INFO_OUTPUT";
        /// A tunable parameter id without network information.
        NetworkInfoTunable = 0x3006, "INCOMPLETE_CONFIG_NW_INFO_TUNABLE";
        /// A data id without scope.
        IncompleteScope = 0x3007, "INCOMPLETE_CONFIG_SCOPE";
        /// An output data id without steps.
        IncompleteSteps = 0x3008, "INCOMPLETE_CONFIG_STEPS";
        /// No time resolution.
        IncompleteTimeResolution = 0x3009, "INCOMPLETE_CONFIG_TIME_RESOLUTION";
        /// The configuration is incomplete.
        IncompleteConfiguration = 0x300A, "INCOMPLETE_CONFIGURATION";
        /// Log on notification not supported.
        NoLogOnNotification = 0x4001, "NOT_SUPPORTED_LOG_ON_NOTIFICATION";
        /// Log on request not supported.
        NoLogOnRequest = 0x4002, "NOT_SUPPORTED_LOG_ON_REQUEST";
        /// Variable steps not supported.
        NoVariableSteps = 0x4003, "NOT_SUPPORTED_VARIABLE_STEPS";
        /// Transport not supported.
        NoTransportProtocol = 0x4004, "NOT_SUPPORTED_TRANSPORT_PROTOCOL";
        /// A PDU this slave does not support.
        NotSupportedPdu = 0x4005, "NOT_SUPPORTED_PDU";
        /// A data PDU beyond the transport's size.
        NotSupportedPduSize = 0x4006, "NOT_SUPPORTED_PDU_SIZE";
    }
}

/// The DCP version this crate speaks.
pub const VERSION: (u8, u8) = (1, 0);

/// The largest UDP payload over IPv4: the most a PDU takes here.
pub const MAX_PDU: usize = 65507;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        for s in State::ALL {
            assert_eq!(State::from_code(s.code()), Some(*s));
        }
        assert_eq!(State::from_code(0x13), None);
        assert_eq!(OpMode::from_code(2), Some(OpMode::NonRealTime));
        assert_eq!(ErrorCode::from_code(0x2013), Some(ErrorCode::InvalidSequenceId));
        assert_eq!(ErrorCode::from_code(0x2014), None);
        assert_eq!(DataType::parse("Float64"), Some(DataType::Float64));
        assert_eq!(DataType::parse("int8"), Some(DataType::Int8));
        assert_eq!(DataType::parse("double"), None);
    }

    #[test]
    fn conversions_widen_only() {
        assert!(DataType::Uint8.converts_to(DataType::Float64));
        assert!(DataType::Float32.converts_to(DataType::Float64));
        assert!(!DataType::Float64.converts_to(DataType::Float32));
        assert!(!DataType::Int32.converts_to(DataType::Float32));
        assert!(!DataType::Binary.converts_to(DataType::String));
    }

    #[test]
    fn stoppable_states_are_preparing_to_sending_d() {
        let stoppable: Vec<_> = State::ALL.iter().filter(|s| s.stoppable()).collect();
        assert_eq!(stoppable.len(), 13);
        assert!(!State::Configuration.stoppable() && !State::Stopped.stoppable());
    }
}
