/* One mass of a two-mass oscillator (oscillator.h) as an FMI 3.0
 * Co-Simulation FMU that can save and restore its state, with a force
 * stepping from 0 to step_force at step_time (a time event handled inside
 * fmi3DoStep). Value references: 0 time, 1 x, 2 v, 3 F, 4 m, 5 k, 6 c,
 * 7 x0, 8 v0, 9 step_time, 10 step_force. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3_api.h"
#include "oscillator.h"

#define TOKEN "{7a9d2e4f-1b3c-4d5e-8f6a-0b1c2d3e4f04}"

typedef struct {
    Oscillator osc;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
} Instance;

static fmi3Status fail(Instance *m, const char *message) {
    if (m->log) {
        m->log(m->env, fmi3Error, "logStatusError", message);
    }
    return fmi3Error;
}

FMI3_EXPORT fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String name, fmi3String token, fmi3String resources, fmi3Boolean visible, fmi3Boolean logging,
    fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed, const fmi3ValueReference required[],
    size_t nRequired, fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
    fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)name, (void)resources, (void)visible, (void)logging, (void)required, (void)nRequired;
    (void)intermediateUpdate;
    if (!token || strcmp(token, TOKEN) != 0 || eventModeUsed || earlyReturnAllowed) {
        if (log) {
            log(env, fmi3Error, "logStatusError", "wrong instantiationToken, or event mode or early return asked");
        }
        return NULL;
    }
    Instance *m = calloc(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->env = env;
    m->log = log;
    osc_init(&m->osc);
    m->osc.step_time = 0.5;
    m->osc.step_force = 10.0;
    return m;
}

FMI3_EXPORT void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

FMI3_EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                                   fmi3Float64 tolerance, fmi3Float64 startTime,
                                                   fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    ((Instance *)instance)->osc.time = startTime;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    Instance *m = instance;
    m->osc.x = m->osc.x0;
    m->osc.v = m->osc.v0;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3Terminate(fmi3Instance instance) { (void)instance; return fmi3OK; }

static double *variable(Instance *m, fmi3ValueReference vr) {
    switch (vr) {
    case 0: return &m->osc.time;
    case 1: return &m->osc.x;
    case 2: return &m->osc.v;
    case 3: return &m->osc.force;
    case 4: return &m->osc.m;
    case 5: return &m->osc.k;
    case 6: return &m->osc.c;
    case 7: return &m->osc.x0;
    case 8: return &m->osc.v0;
    case 9: return &m->osc.step_time;
    case 10: return &m->osc.step_force;
    default: return NULL;
    }
}

FMI3_EXPORT fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                      fmi3Float64 values[], size_t nValues) {
    if (nValues != nvr) {
        return fail(instance, "fmi3GetFloat64: the variables are scalars");
    }
    for (size_t i = 0; i < nvr; i++) {
        double *v = variable(instance, vr[i]);
        if (!v) {
            return fail(instance, "fmi3GetFloat64: unknown value reference");
        }
        values[i] = *v;
    }
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                                      const fmi3Float64 values[], size_t nValues) {
    if (nValues != nvr) {
        return fail(instance, "fmi3SetFloat64: the variables are scalars");
    }
    for (size_t i = 0; i < nvr; i++) {
        double *v = vr[i] >= 3 ? variable(instance, vr[i]) : NULL;
        if (!v) {
            return fail(instance, "fmi3SetFloat64: value reference not settable");
        }
        *v = values[i];
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

FMI3_EXPORT fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 t, fmi3Float64 h,
                                  fmi3Boolean noSetFMUStatePriorToCurrentPoint, fmi3Boolean *eventHandlingNeeded,
                                  fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn,
                                  fmi3Float64 *lastSuccessfulTime) {
    Instance *m = instance;
    (void)noSetFMUStatePriorToCurrentPoint;
    *eventHandlingNeeded = false;
    *terminateSimulation = false;
    *earlyReturn = false;
    *lastSuccessfulTime = m->osc.time;
    if (fabs(t - m->osc.time) > 1e-9 * fmax(1.0, fabs(t))) {
        char message[160];
        snprintf(message, sizeof message, "fmi3DoStep from t = %g, but the FMU is at t = %g", t, m->osc.time);
        return fail(m, message);
    }
    if (!(h > 0.0)) {
        return fail(m, "fmi3DoStep: the step must be positive");
    }
    osc_advance(&m->osc, t + h);
    *lastSuccessfulTime = m->osc.time;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *state) {
    Instance *m = instance;
    Oscillator *saved = *state ? *state : malloc(sizeof(Oscillator));
    if (!saved) {
        return fail(m, "fmi3GetFMUState: out of memory");
    }
    *saved = m->osc;
    *state = saved;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState state) {
    Instance *m = instance;
    if (!state) {
        return fail(m, "fmi3SetFMUState: no state");
    }
    m->osc = *(Oscillator *)state;
    return fmi3OK;
}

FMI3_EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *state) {
    (void)instance;
    if (state && *state) {
        free(*state);
        *state = NULL;
    }
    return fmi3OK;
}
