/* The FMI 3.0 functions a test FMU does not implement itself, so that its
 * binary exports every function of the API, as the standard requires (also
 * those of the interface types and capabilities the FMU does not support)
 * and importers such as FMPy check when they load the binary.
 *
 * Each FMU's C file includes this header once, after its own functions,
 * having defined:
 *
 *   - FMI3_MODEL_EXCHANGE if it implements the Model Exchange interface:
 *     fmi3InstantiateModelExchange, fmi3EnterEventMode,
 *     fmi3UpdateDiscreteStates, fmi3EnterContinuousTimeMode,
 *     fmi3CompletedIntegratorStep, fmi3SetTime, fmi3SetContinuousStates,
 *     fmi3GetContinuousStates, fmi3GetContinuousStateDerivatives and
 *     fmi3GetEventIndicators; then also FMI3_NUMBER_OF_CONTINUOUS_STATES and
 *     FMI3_NUMBER_OF_EVENT_INDICATORS, its numbers of states and of event
 *     indicators;
 *   - FMI3_CO_SIMULATION if it implements the Co-Simulation interface
 *     without Event Mode: fmi3InstantiateCoSimulation and fmi3DoStep;
 *   - FMI3_FMU_STATE if it implements fmi3GetFMUState, fmi3SetFMUState and
 *     fmi3FreeFMUState itself (canGetAndSetFMUState="true");
 *   - `fail` (from fmi3_instance.h, included after its Instance typedef), which logs
 *     `message` with fmi3Error through the instance's logger and returns
 *     fmi3Error;
 *
 * and its own fmi3EnterInitializationMode, fmi3ExitInitializationMode,
 * fmi3GetFloat64 and fmi3SetFloat64 (fmi3FreeInstance and fmi3Terminate come
 * from fmi3_instance.h).
 *
 * Generated here:
 *
 *   - fmi3GetVersion ("3.0") and fmi3SetDebugLogging (accepted; the test
 *     FMUs log errors only);
 *   - unless FMI3_ALL_TYPES is defined, the accessors of the variable
 *     types other than Float64, which the test FMUs have none of: an empty
 *     call succeeds, any other fails;
 *   - for Model Exchange, fmi3GetNominalsOfContinuousStates (1.0 for every
 *     state, which the standard says an FMU without nominals returns) and
 *     the numbers of states and event indicators;
 *   - the instantiation functions of the interfaces the FMU does not have,
 *     which log that and return NULL;
 *   - as "not supported" stubs, returning fmi3Error with a logged message:
 *     the other functions of the interfaces the FMU does not have (Event
 *     Mode coming with Model Exchange: the Co-Simulation FMUs have none),
 *     fmi3Reset, variable dependencies, the FMU state functions without
 *     FMI3_FMU_STATE, serialized states, directional and adjoint
 *     derivatives, Configuration Mode, clocks, fmi3EvaluateDiscreteStates,
 *     fmi3EnterStepMode and fmi3GetOutputDerivatives (no Event Mode,
 *     maxOutputDerivativeOrder 0) and fmi3ActivateModelPartition (no
 *     Scheduled Execution). */
#ifndef TANDEM_FMI3_STUBS_H
#define TANDEM_FMI3_STUBS_H

#include "fmi3_api.h"

#if !defined(FMI3_MODEL_EXCHANGE) && !defined(FMI3_CO_SIMULATION)
#error "define FMI3_MODEL_EXCHANGE or FMI3_CO_SIMULATION before including fmi3_stubs.h"
#endif
#if defined(FMI3_MODEL_EXCHANGE) && (!defined(FMI3_NUMBER_OF_CONTINUOUS_STATES) || !defined(FMI3_NUMBER_OF_EVENT_INDICATORS))
#error "a Model Exchange FMU defines FMI3_NUMBER_OF_CONTINUOUS_STATES and FMI3_NUMBER_OF_EVENT_INDICATORS"
#endif

/* The stubs ignore their arguments. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* The body of a function this FMU does not support. */
#define FMI3_NOT_SUPPORTED(instance, function) return fail((instance), function ": not supported by this FMU")

/* The body of an instantiation function of an interface the FMU does not
 * have: it has no instance to log through, so it logs through the callback
 * it is given. */
#define FMI3_NO_INTERFACE(env, log, function, interface)                                                           \
    do {                                                                                                           \
        if (log) {                                                                                                 \
            (log)((env), fmi3Error, "logStatusError",                                                              \
                  function ": not supported by this FMU, which has no " interface " interface");                   \
        }                                                                                                          \
        return NULL;                                                                                               \
    } while (0)

/* An accessor of a type the FMU has no variable of. */
#define FMI3_NO_VARIABLE_GET(type)                                                                                 \
    FMI3_EXPORT fmi3Status fmi3Get##type(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,        \
                                         fmi3##type values[], size_t nValues) {                                    \
        return nvr > 0 ? fail(instance, "fmi3Get" #type ": the model has no " #type " variable") : fmi3OK;        \
    }
#define FMI3_NO_VARIABLE_SET(type)                                                                                 \
    FMI3_EXPORT fmi3Status fmi3Set##type(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,        \
                                         const fmi3##type values[], size_t nValues) {                              \
        return nvr > 0 ? fail(instance, "fmi3Set" #type ": the model has no " #type " variable") : fmi3OK;        \
    }
#define FMI3_NO_VARIABLE(type) FMI3_NO_VARIABLE_GET(type) FMI3_NO_VARIABLE_SET(type)

/* Inquiring the version, and logging. */

FMI3_EXPORT const char *fmi3GetVersion(void) { return "3.0"; }

FMI3_EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                                           const fmi3String categories[]) {
    return fmi3OK;
}

/* Instantiation of the interfaces the FMU does not have. */

#ifndef FMI3_MODEL_EXCHANGE
FMI3_EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                                      fmi3String resourcePath, fmi3Boolean visible,
                                                      fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                                      fmi3LogMessageCallback logMessage) {
    FMI3_NO_INTERFACE(instanceEnvironment, logMessage, "fmi3InstantiateModelExchange", "Model Exchange");
}
#endif

#ifndef FMI3_CO_SIMULATION
FMI3_EXPORT fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference requiredIntermediateVariables[], size_t nRequiredIntermediateVariables,
    fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3IntermediateUpdateCallback intermediateUpdate) {
    FMI3_NO_INTERFACE(instanceEnvironment, logMessage, "fmi3InstantiateCoSimulation", "Co-Simulation");
}
#endif

FMI3_EXPORT fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lockPreemption,
    fmi3UnlockPreemptionCallback unlockPreemption) {
    FMI3_NO_INTERFACE(instanceEnvironment, logMessage, "fmi3InstantiateScheduledExecution", "Scheduled Execution");
}

FMI3_EXPORT fmi3Status fmi3Reset(fmi3Instance instance) { FMI3_NOT_SUPPORTED(instance, "fmi3Reset"); }

/* The variables of the types the test FMUs have none of (an FMU that
 * defines FMI3_ALL_TYPES implements these itself). */

#ifndef FMI3_ALL_TYPES

FMI3_NO_VARIABLE(Float32)
FMI3_NO_VARIABLE(Int8)
FMI3_NO_VARIABLE(UInt8)
FMI3_NO_VARIABLE(Int16)
FMI3_NO_VARIABLE(UInt16)
FMI3_NO_VARIABLE(Int32)
FMI3_NO_VARIABLE(UInt32)
FMI3_NO_VARIABLE(Int64)
FMI3_NO_VARIABLE(UInt64)
FMI3_NO_VARIABLE(Boolean)
FMI3_NO_VARIABLE(String)

FMI3_EXPORT fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                     size_t valueSizes[], fmi3Binary values[], size_t nValues) {
    return nvr > 0 ? fail(instance, "fmi3GetBinary: the model has no Binary variable") : fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                     const size_t valueSizes[], const fmi3Binary values[], size_t nValues) {
    return nvr > 0 ? fail(instance, "fmi3SetBinary: the model has no Binary variable") : fmi3OK;
}
#endif

FMI3_EXPORT fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                    fmi3Clock values[]) {
    return nvr > 0 ? fail(instance, "fmi3GetClock: the model has no Clock variable") : fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Clock values[]) {
    return nvr > 0 ? fail(instance, "fmi3SetClock: the model has no Clock variable") : fmi3OK;
}

/* Variable dependencies. */

FMI3_EXPORT fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                                           size_t *nDependencies) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetNumberOfVariableDependencies");
}

FMI3_EXPORT fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                                   size_t elementIndicesOfDependent[],
                                                   fmi3ValueReference independents[],
                                                   size_t elementIndicesOfIndependents[],
                                                   fmi3DependencyKind dependencyKinds[], size_t nDependencies) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetVariableDependencies");
}

/* Saving and restoring the state. */

#ifndef FMI3_FMU_STATE
FMI3_EXPORT fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *state) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetFMUState");
}

FMI3_EXPORT fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState state) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetFMUState");
}

FMI3_EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *state) {
    FMI3_NOT_SUPPORTED(instance, "fmi3FreeFMUState");
}
#endif

FMI3_EXPORT fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState state, size_t *size) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SerializedFMUStateSize");
}

FMI3_EXPORT fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState state, fmi3Byte serializedState[],
                                             size_t size) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SerializeFMUState");
}

FMI3_EXPORT fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                               fmi3FMUState *state) {
    FMI3_NOT_SUPPORTED(instance, "fmi3DeserializeFMUState");
}

/* Partial derivatives. */

FMI3_EXPORT fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                                    fmi3Float64 sensitivity[], size_t nSensitivity) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetDirectionalDerivative");
}

FMI3_EXPORT fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                                size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                                const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                                size_t nSensitivity) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetAdjointDerivative");
}

/* Configuration Mode. */

FMI3_EXPORT fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
    FMI3_NOT_SUPPORTED(instance, "fmi3EnterConfigurationMode");
}

FMI3_EXPORT fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
    FMI3_NOT_SUPPORTED(instance, "fmi3ExitConfigurationMode");
}

/* Clocks. */

FMI3_EXPORT fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                              fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetIntervalDecimal");
}

FMI3_EXPORT fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                               fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                               fmi3IntervalQualifier qualifiers[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetIntervalFraction");
}

FMI3_EXPORT fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                           fmi3Float64 shifts[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetShiftDecimal");
}

FMI3_EXPORT fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                            fmi3UInt64 counters[], fmi3UInt64 resolutions[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetShiftFraction");
}

FMI3_EXPORT fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                              const fmi3Float64 intervals[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetIntervalDecimal");
}

FMI3_EXPORT fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                               const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetIntervalFraction");
}

FMI3_EXPORT fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                           const fmi3Float64 shifts[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetShiftDecimal");
}

FMI3_EXPORT fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                            const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetShiftFraction");
}

FMI3_EXPORT fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
    FMI3_NOT_SUPPORTED(instance, "fmi3EvaluateDiscreteStates");
}

#ifdef FMI3_MODEL_EXCHANGE

/* Model Exchange: the nominal values of the states, which the test FMUs
 * do not know, and the numbers of states and event indicators, which no
 * structural parameter changes. */

FMI3_EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                                         size_t nContinuousStates) {
    if (nContinuousStates != FMI3_NUMBER_OF_CONTINUOUS_STATES) {
        return fail(instance, "fmi3GetNominalsOfContinuousStates: wrong number of states");
    }
    for (size_t i = 0; i < nContinuousStates; i++) {
        nominals[i] = 1.0;
    }
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    *nContinuousStates = FMI3_NUMBER_OF_CONTINUOUS_STATES;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    *nEventIndicators = FMI3_NUMBER_OF_EVENT_INDICATORS;
    return fmi3OK;
}

#else

/* Model Exchange, and Event Mode, which the Co-Simulation FMUs do not have
 * either. */

FMI3_EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    FMI3_NOT_SUPPORTED(instance, "fmi3EnterEventMode");
}

FMI3_EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                                fmi3Boolean *terminateSimulation,
                                                fmi3Boolean *nominalsOfContinuousStatesChanged,
                                                fmi3Boolean *valuesOfContinuousStatesChanged,
                                                fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    FMI3_NOT_SUPPORTED(instance, "fmi3UpdateDiscreteStates");
}

FMI3_EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    FMI3_NOT_SUPPORTED(instance, "fmi3EnterContinuousTimeMode");
}

FMI3_EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation) {
    FMI3_NOT_SUPPORTED(instance, "fmi3CompletedIntegratorStep");
}

FMI3_EXPORT fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetTime");
}

FMI3_EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                               size_t nContinuousStates) {
    FMI3_NOT_SUPPORTED(instance, "fmi3SetContinuousStates");
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                                         size_t nContinuousStates) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetContinuousStateDerivatives");
}

FMI3_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                              size_t nEventIndicators) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetEventIndicators");
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                               size_t nContinuousStates) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetContinuousStates");
}

FMI3_EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                                         size_t nContinuousStates) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetNominalsOfContinuousStates");
}

FMI3_EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetNumberOfEventIndicators");
}

FMI3_EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetNumberOfContinuousStates");
}

#endif

/* Co-Simulation: Step Mode and output derivatives (no Event Mode,
 * maxOutputDerivativeOrder 0), and fmi3DoStep without the interface. */

FMI3_EXPORT fmi3Status fmi3EnterStepMode(fmi3Instance instance) { FMI3_NOT_SUPPORTED(instance, "fmi3EnterStepMode"); }

FMI3_EXPORT fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                                const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues) {
    FMI3_NOT_SUPPORTED(instance, "fmi3GetOutputDerivatives");
}

#ifndef FMI3_CO_SIMULATION
FMI3_EXPORT fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                                  fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    FMI3_NOT_SUPPORTED(instance, "fmi3DoStep");
}
#endif

/* Scheduled Execution. */

FMI3_EXPORT fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                                  fmi3Float64 activationTime) {
    FMI3_NOT_SUPPORTED(instance, "fmi3ActivateModelPartition");
}

#undef FMI3_NOT_SUPPORTED
#undef FMI3_NO_INTERFACE
#undef FMI3_NO_VARIABLE_GET
#undef FMI3_NO_VARIABLE_SET
#undef FMI3_NO_VARIABLE

#pragma GCC diagnostic pop

#endif
