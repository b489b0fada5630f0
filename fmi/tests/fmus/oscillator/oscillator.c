/* One mass of a two-mass oscillator (oscillator.h) as an FMI 2.0
 * Co-Simulation FMU that can save and restore its state.
 * Value references: 0 x, 1 v, 2 F, 3 m, 4 k, 5 c, 6 x0, 7 v0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmi2_api.h"
#include "oscillator.h"

#define GUID "{0f2b5c1e-6a3d-4c8e-b1f7-2d9e4a6c8b03}"

typedef struct {
    Oscillator osc;
    fmi2CallbackFunctions cb;
    char name[64];
} Instance;

static fmi2Status fail(Instance *m, const char *message) {
    if (m->cb.logger) {
        m->cb.logger(m->cb.componentEnvironment, m->name, fmi2Error, "logStatusError", message);
    }
    return fmi2Error;
}

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                          const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                                          fmi2Boolean logging) {
    (void)resources, (void)visible, (void)logging;
    if (!functions || !functions->allocateMemory || !functions->freeMemory || type != fmi2CoSimulation || !guid ||
        strcmp(guid, GUID) != 0) {
        return NULL;
    }
    Instance *m = functions->allocateMemory(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->cb = *functions;
    snprintf(m->name, sizeof m->name, "%s", name ? name : "oscillator");
    osc_init(&m->osc);
    return m;
}

FMI2_EXPORT void fmi2FreeInstance(fmi2Component c) {
    Instance *m = c;
    if (m) {
        m->cb.freeMemory(m);
    }
}

FMI2_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                           fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    ((Instance *)c)->osc.time = startTime;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *m = c;
    m->osc.x = m->osc.x0;
    m->osc.v = m->osc.v0;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

static double *variable(Instance *m, fmi2ValueReference vr) {
    switch (vr) {
    case 0: return &m->osc.x;
    case 1: return &m->osc.v;
    case 2: return &m->osc.force;
    case 3: return &m->osc.m;
    case 4: return &m->osc.k;
    case 5: return &m->osc.c;
    case 6: return &m->osc.x0;
    case 7: return &m->osc.v0;
    default: return NULL;
    }
}

FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    for (size_t i = 0; i < nvr; i++) {
        double *v = variable(c, vr[i]);
        if (!v) {
            return fail(c, "fmi2GetReal: unknown value reference");
        }
        value[i] = *v;
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                   const fmi2Real value[]) {
    for (size_t i = 0; i < nvr; i++) {
        double *v = vr[i] >= 2 ? variable(c, vr[i]) : NULL;
        if (!v) {
            return fail(c, "fmi2SetReal: value reference not settable");
        }
        *v = value[i];
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Integer value[]) {
    (void)vr, (void)value;
    return nvr > 0 ? fail(c, "fmi2SetInteger: the model has no Integer variable") : fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Boolean value[]) {
    (void)vr, (void)value;
    return nvr > 0 ? fail(c, "fmi2SetBoolean: the model has no Boolean variable") : fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    Instance *m = c;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (fabs(t - m->osc.time) > 1e-9 * fmax(1.0, fabs(t))) {
        char message[160];
        snprintf(message, sizeof message, "fmi2DoStep from t = %g, but the FMU is at t = %g", t, m->osc.time);
        return fail(m, message);
    }
    if (!(h > 0.0)) {
        return fail(m, "fmi2DoStep: the step must be positive");
    }
    osc_advance(&m->osc, t + h);
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Instance *m = c;
    Oscillator *saved = *state ? *state : m->cb.allocateMemory(1, sizeof(Oscillator));
    if (!saved) {
        return fail(m, "fmi2GetFMUstate: out of memory");
    }
    *saved = m->osc;
    *state = saved;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    Instance *m = c;
    if (!state) {
        return fail(m, "fmi2SetFMUstate: no state");
    }
    m->osc = *(Oscillator *)state;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    Instance *m = c;
    if (state && *state) {
        m->cb.freeMemory(*state);
        *state = NULL;
    }
    return fmi2OK;
}
