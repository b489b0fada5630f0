/* The bouncing ball (ball.h) as an FMI 2.0 Model Exchange FMU.
 * Value references: 0 h, 1 der(h), 2 v, 3 der(v), 4 g, 5 e.
 * Defining OMIT_GET_DERIVATIVES leaves out fmi2GetDerivatives (for the
 * importer's missing-symbol test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ball.h"
#include "fmi2_api.h"

#define GUID "{8c4e810f-3df3-4a00-8276-176fa3c9f001}"

typedef struct {
    Ball ball;
    double time;
    fmi2CallbackFunctions cb;
    char name[64];
} Instance;

static void log_error(Instance *m, const char *message) {
    if (m->cb.logger) {
        m->cb.logger(m->cb.componentEnvironment, m->name, fmi2Error, "logStatusError", message);
    }
}

FMI2_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                          const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                                          fmi2Boolean logging) {
    (void)resources, (void)visible, (void)logging;
    if (!functions || !functions->allocateMemory || !functions->freeMemory) {
        return NULL;
    }
    if (type != fmi2ModelExchange || !guid || strcmp(guid, GUID) != 0) {
        if (functions->logger) {
            functions->logger(functions->componentEnvironment, name, fmi2Error, "logStatusError",
                              "wrong fmuType or GUID");
        }
        return NULL;
    }
    Instance *m = functions->allocateMemory(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->cb = *functions;
    snprintf(m->name, sizeof m->name, "%s", name ? name : "bouncing_ball");
    ball_init(&m->ball);
    m->time = 0.0;
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
    ((Instance *)c)->time = startTime;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    Instance *m = c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 0: value[i] = m->ball.h; break;
        case 1: value[i] = ball_der_h(&m->ball); break;
        case 2: value[i] = m->ball.v; break;
        case 3: value[i] = ball_der_v(&m->ball); break;
        case 4: value[i] = m->ball.g; break;
        case 5: value[i] = m->ball.e; break;
        default: log_error(m, "fmi2GetReal: unknown value reference"); return fmi2Error;
        }
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                   const fmi2Real value[]) {
    Instance *m = c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 0: m->ball.h = value[i]; break;
        case 2: m->ball.v = value[i]; break;
        case 4: m->ball.g = value[i]; break;
        case 5: m->ball.e = value[i]; break;
        default: log_error(m, "fmi2SetReal: value reference not settable"); return fmi2Error;
        }
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Integer value[]) {
    (void)vr, (void)value;
    if (nvr > 0) {
        log_error(c, "fmi2SetInteger: the model has no Integer variable");
        return fmi2Error;
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                      const fmi2Boolean value[]) {
    (void)vr, (void)value;
    if (nvr > 0) {
        log_error(c, "fmi2SetBoolean: the model has no Boolean variable");
        return fmi2Error;
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    Instance *m = c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = ball_event(&m->ball) ? fmi2True : fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    (void)c, (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    ((Instance *)c)->time = time;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    Instance *m = c;
    if (nx != 2) {
        log_error(m, "fmi2SetContinuousStates: the model has 2 states");
        return fmi2Error;
    }
    m->ball.h = x[0];
    m->ball.v = x[1];
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    Instance *m = c;
    if (nx != 2) {
        log_error(m, "fmi2GetContinuousStates: the model has 2 states");
        return fmi2Error;
    }
    x[0] = m->ball.h;
    x[1] = m->ball.v;
    return fmi2OK;
}

#ifndef OMIT_GET_DERIVATIVES
FMI2_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    Instance *m = c;
    if (nx != 2) {
        log_error(m, "fmi2GetDerivatives: the model has 2 states");
        return fmi2Error;
    }
    dx[0] = ball_der_h(&m->ball);
    dx[1] = ball_der_v(&m->ball);
    return fmi2OK;
}
#endif

FMI2_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz) {
    Instance *m = c;
    if (nz != 1) {
        log_error(m, "fmi2GetEventIndicators: the model has 1 event indicator");
        return fmi2Error;
    }
    z[0] = ball_indicator(&m->ball);
    return fmi2OK;
}
