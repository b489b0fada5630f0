/* A first-order lag as an FMI 2.0 Model Exchange FMU: x' = (u - x) / tau,
 * output x. The model is defined for u >= 0 only: fmi2SetReal refuses a
 * negative u with fmi2Error (for the importer's error test).
 * Value references: 0 x, 1 der(x), 2 u, 3 tau, 4 x0. */
#include <stdio.h>
#include <string.h>

#include "fmi2_api.h"

#define GUID "{3e5f7a9b-2c4d-4e6f-8a0b-1c2d3e4f5a05}"

typedef struct {
    double time, x, u, tau, x0;
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
    if (!functions || !functions->allocateMemory || !functions->freeMemory || type != fmi2ModelExchange ||
        !guid || strcmp(guid, GUID) != 0) {
        return NULL;
    }
    Instance *m = functions->allocateMemory(1, sizeof(Instance));
    if (!m) {
        return NULL;
    }
    m->cb = *functions;
    snprintf(m->name, sizeof m->name, "%s", name ? name : "first_order");
    m->u = 1.0;
    m->tau = 0.5;
    m->x0 = 0.0;
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

FMI2_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *m = c;
    m->x = m->x0;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]) {
    Instance *m = c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 0: value[i] = m->x; break;
        case 1: value[i] = (m->u - m->x) / m->tau; break;
        case 2: value[i] = m->u; break;
        case 3: value[i] = m->tau; break;
        case 4: value[i] = m->x0; break;
        default: return fail(m, "fmi2GetReal: unknown value reference");
        }
    }
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                   const fmi2Real value[]) {
    Instance *m = c;
    for (size_t i = 0; i < nvr; i++) {
        switch (vr[i]) {
        case 2:
            if (value[i] < 0.0) {
                char message[120];
                snprintf(message, sizeof message, "input u = %g is negative; the model is defined for u >= 0",
                         value[i]);
                return fail(m, message);
            }
            m->u = value[i];
            break;
        case 3: m->tau = value[i]; break;
        case 4: m->x0 = value[i]; break;
        default: return fail(m, "fmi2SetReal: value reference not settable");
        }
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

FMI2_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI2_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    (void)c;
    memset(info, 0, sizeof *info);
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
    if (nx != 1) {
        return fail(m, "fmi2SetContinuousStates: the model has 1 state");
    }
    m->x = x[0];
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    Instance *m = c;
    if (nx != 1) {
        return fail(m, "fmi2GetContinuousStates: the model has 1 state");
    }
    x[0] = m->x;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx) {
    Instance *m = c;
    if (nx != 1) {
        return fail(m, "fmi2GetDerivatives: the model has 1 state");
    }
    dx[0] = (m->u - m->x) / m->tau;
    return fmi2OK;
}

FMI2_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz) {
    (void)z;
    return nz > 0 ? fail(c, "fmi2GetEventIndicators: the model has no event indicator") : fmi2OK;
}
