/* The bouncing ball (ball.h) as an FMI 3.0 Model Exchange FMU.
 * Value references: 0 time, 1 h, 2 der(h), 3 v, 4 der(v), 5 g, 6 e. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ball.h"
#include "fmi3_api.h"

#define TOKEN "{5d1c3a52-8d7e-4f5e-9a51-3c0e6b7a3b02}"

typedef struct {
    Ball ball;
    double time;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
} Instance;

static fmi3Status fail(Instance *m, const char *message) {
    if (m->log) {
        m->log(m->env, fmi3Error, "logStatusError", message);
    }
    return fmi3Error;
}

FMI3_EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                                      fmi3Boolean visible, fmi3Boolean logging,
                                                      fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    (void)name, (void)resources, (void)visible, (void)logging;
    if (!token || strcmp(token, TOKEN) != 0) {
        if (log) {
            log(env, fmi3Error, "logStatusError", "wrong instantiationToken");
        }
        return NULL;
    }
    Instance *m = calloc(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->env = env;
    m->log = log;
    ball_init(&m->ball);
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
        case 1: values[i] = m->ball.h; break;
        case 2: values[i] = ball_der_h(&m->ball); break;
        case 3: values[i] = m->ball.v; break;
        case 4: values[i] = ball_der_v(&m->ball); break;
        case 5: values[i] = m->ball.g; break;
        case 6: values[i] = m->ball.e; break;
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
        case 1: m->ball.h = values[i]; break;
        case 3: m->ball.v = values[i]; break;
        case 5: m->ball.g = values[i]; break;
        case 6: m->ball.e = values[i]; break;
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
    *discreteStatesNeedUpdate = false;
    *terminateSimulation = false;
    *nominalsOfContinuousStatesChanged = false;
    *valuesOfContinuousStatesChanged = ball_event(&m->ball) != 0;
    *nextEventTimeDefined = false;
    *nextEventTime = 0.0;
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
    if (nx != 2) {
        return fail(m, "fmi3SetContinuousStates: the model has 2 states");
    }
    m->ball.h = x[0];
    m->ball.v = x[1];
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx) {
    Instance *m = instance;
    if (nx != 2) {
        return fail(m, "fmi3GetContinuousStates: the model has 2 states");
    }
    x[0] = m->ball.h;
    x[1] = m->ball.v;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 dx[], size_t nx) {
    Instance *m = instance;
    if (nx != 2) {
        return fail(m, "fmi3GetContinuousStateDerivatives: the model has 2 states");
    }
    dx[0] = ball_der_h(&m->ball);
    dx[1] = ball_der_v(&m->ball);
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 z[], size_t nz) {
    Instance *m = instance;
    if (nz != 1) {
        return fail(m, "fmi3GetEventIndicators: the model has 1 event indicator");
    }
    z[0] = ball_indicator(&m->ball);
    return fmi3OK;
}
