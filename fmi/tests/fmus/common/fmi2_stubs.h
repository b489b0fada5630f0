/* The FMI 2.0 functions a test FMU does not implement itself, so that its
 * binary exports the full function set of its interface, as the standard
 * requires and importers such as FMPy check when they load the binary: all
 * functions of the common part and those of the Model Exchange or the
 * Co-Simulation part.
 *
 * Each FMU's C file includes this header once, after its own functions,
 * having defined:
 *
 *   - exactly one of FMI2_MODEL_EXCHANGE and FMI2_CO_SIMULATION: the
 *     interface the FMU implements (its own fmi2Instantiate ... fmi2SetReal,
 *     and the Model Exchange functions or fmi2DoStep);
 *   - FMI2_FMU_STATE if it implements fmi2GetFMUstate, fmi2SetFMUstate and
 *     fmi2FreeFMUstate itself (canGetAndSetFMUstate="true");
 *   - FMI2_SERIALIZED_STATE if it implements fmi2SerializedFMUstateSize,
 *     fmi2SerializeFMUstate and fmi2DeSerializeFMUstate itself
 *     (canSerializeFMUstate="true");
 *   - `fail` (from fmi2_instance.h, included after its Instance typedef), which logs
 *     `message` with fmi2Error through the instance's logger and returns
 *     fmi2Error.
 *
 * Generated here:
 *
 *   - fmi2GetTypesPlatform ("default"), fmi2GetVersion ("2.0") and
 *     fmi2SetDebugLogging (accepted; the test FMUs log errors only);
 *   - unless FMI2_ALL_TYPES is defined, the accessors of the Integer,
 *     Boolean and String variables, which the
 *     test FMUs have none of: an empty call succeeds, any other fails;
 *   - for Model Exchange, fmi2GetNominalsOfContinuousStates (1.0 for every
 *     state, which the standard says an FMU without nominals returns);
 *   - as "not supported" stubs, returning fmi2Error with a logged message:
 *     fmi2Reset, the serialized states without FMI2_SERIALIZED_STATE,
 *     fmi2GetDirectionalDerivative
 *     (providesDirectionalDerivative is false), the FMU state functions
 *     without FMI2_FMU_STATE and, for Co-Simulation, input and output
 *     derivatives (canInterpolateInputs is false, maxOutputDerivativeOrder
 *     0), fmi2CancelStep (no asynchronous steps) and the status queries. */
#ifndef TANDEM_FMI2_STUBS_H
#define TANDEM_FMI2_STUBS_H

#include "fmi2_api.h"

#if defined(FMI2_MODEL_EXCHANGE) == defined(FMI2_CO_SIMULATION)
#error "define exactly one of FMI2_MODEL_EXCHANGE and FMI2_CO_SIMULATION before including fmi2_stubs.h"
#endif

/* The stubs ignore their arguments. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* The body of a function this FMU does not support. */
#define FMI2_NOT_SUPPORTED(c, function) return fail((c), function ": not supported by this FMU")

/* The body of an accessor of a type the FMU has no variable of. */
#define FMI2_NO_VARIABLE(c, nvr, function, type)                                                                   \
    return (nvr) > 0 ? fail((c), function ": the model has no " type " variable") : fmi2OK

/* Inquiring the platform and version, and logging. */

FMI2_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }

FMI2_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI2_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                                           const fmi2String categories[]) {
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Reset(fmi2Component c) { FMI2_NOT_SUPPORTED(c, "fmi2Reset"); }

/* The variables of the types the test FMUs have none of (an FMU that
 * defines FMI2_ALL_TYPES implements these itself). */

#ifndef FMI2_ALL_TYPES

FMI2_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      fmi2Integer value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2GetInteger", "Integer");
}

FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Integer value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2SetInteger", "Integer");
}

FMI2_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      fmi2Boolean value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2GetBoolean", "Boolean");
}

FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Boolean value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2SetBoolean", "Boolean");
}

FMI2_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                     fmi2String value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2GetString", "String");
}

FMI2_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                     const fmi2String value[]) {
    FMI2_NO_VARIABLE(c, nvr, "fmi2SetString", "String");
}
#endif

/* Saving and restoring the state. */

#ifndef FMI2_FMU_STATE
FMI2_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetFMUstate");
}

FMI2_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    FMI2_NOT_SUPPORTED(c, "fmi2SetFMUstate");
}

FMI2_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    FMI2_NOT_SUPPORTED(c, "fmi2FreeFMUstate");
}
#endif

#ifndef FMI2_SERIALIZED_STATE
FMI2_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    FMI2_NOT_SUPPORTED(c, "fmi2SerializedFMUstateSize");
}

FMI2_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte serializedState[],
                                             size_t size) {
    FMI2_NOT_SUPPORTED(c, "fmi2SerializeFMUstate");
}

FMI2_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                               fmi2FMUstate *state) {
    FMI2_NOT_SUPPORTED(c, "fmi2DeSerializeFMUstate");
}
#endif

/* Partial derivatives. */

FMI2_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                                    size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                                    size_t nKnown, const fmi2Real dvKnown[], fmi2Real dvUnknown[]) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetDirectionalDerivative");
}

#ifdef FMI2_MODEL_EXCHANGE

/* Model Exchange: the nominal values of the states, which the test FMUs
 * do not know. */
FMI2_EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
    for (size_t i = 0; i < nx; i++) {
        x_nominal[i] = 1.0;
    }
    return fmi2OK;
}

#endif

#ifdef FMI2_CO_SIMULATION

/* Co-Simulation: input and output derivatives, asynchronous steps and the
 * status queries (fmi2GetRealStatus and fmi2GetBooleanStatus implemented
 * by an FMU that defines FMI2_STATUS_QUERIES). */

FMI2_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                                   const fmi2Integer order[], const fmi2Real value[]) {
    FMI2_NOT_SUPPORTED(c, "fmi2SetRealInputDerivatives");
}

FMI2_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                                    const fmi2Integer order[], fmi2Real value[]) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetRealOutputDerivatives");
}

FMI2_EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { FMI2_NOT_SUPPORTED(c, "fmi2CancelStep"); }

FMI2_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetStatus");
}

#ifndef FMI2_STATUS_QUERIES
FMI2_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetRealStatus");
}

FMI2_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetBooleanStatus");
}
#endif

FMI2_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetIntegerStatus");
}

FMI2_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    FMI2_NOT_SUPPORTED(c, "fmi2GetStringStatus");
}

#endif

#undef FMI2_NOT_SUPPORTED
#undef FMI2_NO_VARIABLE

#pragma GCC diagnostic pop

#endif
