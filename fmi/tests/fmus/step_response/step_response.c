/* The response of a first-order lag to a step, as an FMI 3.0 Model
 * Exchange FMU with a time event: x' = (s - x) / tau, where s steps from 0
 * to `amplitude` at t = step_time (announced as the next time event and
 * switched in fmi3UpdateDiscreteStates). Output x. At t = end_time (a
 * second time event) it asks to terminate the simulation.
 * Value references: 0 time, 1 x, 2 der(x), 3 tau, 4 step_time, 5 amplitude,
 * 6 end_time. */
#include <stdlib.h>
#include <string.h>

#include "fmi3_api.h"

#define TOKEN "{9b8a7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c06}"

typedef struct {
    double time, x, tau, step_time, amplitude, end_time;
    bool stepped;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
} Instance;

static fmi3Status fail(Instance *m, const char *message) {
    if (m->log) {
        m->log(m->env, fmi3Error, "logStatusError", message);
    }
    return fmi3Error;
}

static double derivative(const Instance *m) { return ((m->stepped ? m->amplitude : 0.0) - m->x) / m->tau; }

FMI3_EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                                      fmi3Boolean visible, fmi3Boolean logging,
                                                      fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    (void)name, (void)resources, (void)visible, (void)logging;
    if (!token || strcmp(token, TOKEN) != 0) {
        return NULL;
    }
    Instance *m = calloc(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->env = env;
    m->log = log;
    m->tau = 0.2;
    m->step_time = 0.5;
    m->amplitude = 1.0;
    m->end_time = 1e300;
    return m;
}

FMI3_EXPORT void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

FMI3_EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                                   fmi3Float64 tolerance, fmi3Float64 startTime,
                                                   fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    ((Instance *)instance)->time = startTime;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) { (void)instance; return fmi3OK; }
FMI3_EXPORT fmi3Status fmi3Terminate(fmi3Instance instance) { (void)instance; return fmi3OK; }

FMI3_EXPORT fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                      fmi3Float64 values[], size_t nValues) {
    Instance *m = instance;
    if (nValues != nvr) {
        return fail(m, "fmi3GetFloat64: the variables are scalars");
    }
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 0: values[i] = m->time; break;
        case 1: values[i] = m->x; break;
        case 2: values[i] = derivative(m); break;
        case 3: values[i] = m->tau; break;
        case 4: values[i] = m->step_time; break;
        case 5: values[i] = m->amplitude; break;
        case 6: values[i] = m->end_time; break;
        default: return fail(m, "fmi3GetFloat64: unknown value reference");
        }
    }
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                      const fmi3Float64 values[], size_t nValues) {
    Instance *m = instance;
    if (nValues != nvr) {
        return fail(m, "fmi3SetFloat64: the variables are scalars");
    }
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 3: m->tau = values[i]; break;
        case 4: m->step_time = values[i]; break;
        case 5: m->amplitude = values[i]; break;
        case 6: m->end_time = values[i]; break;
        default: return fail(m, "fmi3SetFloat64: value reference not settable");
        }
    }
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 values[], size_t nValues) {
    (void)vr, (void)values, (void)nValues;
    return nvr > 0 ? fail(instance, "fmi3SetInt32: the model has no Int32 variable") : fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                      const fmi3Boolean values[], size_t nValues) {
    (void)vr, (void)values, (void)nValues;
    return nvr > 0 ? fail(instance, "fmi3SetBoolean: the model has no Boolean variable") : fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

FMI3_EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                                fmi3Boolean *terminateSimulation,
                                                fmi3Boolean *nominalsOfContinuousStatesChanged,
                                                fmi3Boolean *valuesOfContinuousStatesChanged,
                                                fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    Instance *m = instance;
    if (!m->stepped && m->time >= m->step_time) {
        m->stepped = true;
    }
    *discreteStatesNeedUpdate = false;
    *terminateSimulation = m->time >= m->end_time;
    if (*terminateSimulation && m->log) {
        m->log(m->env, fmi3OK, "logEvents", "end_time reached: the model is valid up to end_time only");
    }
    *nominalsOfContinuousStatesChanged = false;
    *valuesOfContinuousStatesChanged = false;
    *nextEventTimeDefined = true;
    *nextEventTime = m->stepped ? m->end_time : m->step_time;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) { (void)instance; return fmi3OK; }

FMI3_EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation) {
    (void)instance, (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = false;
    *terminateSimulation = false;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    ((Instance *)instance)->time = time;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[], size_t nx) {
    Instance *m = instance;
    if (nx != 1) {
        return fail(m, "fmi3SetContinuousStates: the model has 1 state");
    }
    m->x = x[0];
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx) {
    Instance *m = instance;
    if (nx != 1) {
        return fail(m, "fmi3GetContinuousStates: the model has 1 state");
    }
    x[0] = m->x;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 dx[], size_t nx) {
    Instance *m = instance;
    if (nx != 1) {
        return fail(m, "fmi3GetContinuousStateDerivatives: the model has 1 state");
    }
    dx[0] = derivative(m);
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 z[], size_t nz) {
    (void)z;
    return nz > 0 ? fail(instance, "fmi3GetEventIndicators: the model has no event indicator") : fmi3OK;
}
