/* What every FMI 2.0 test FMU does alike, included right after its
 * `Instance` typedef, which must have the fields `cb` (the
 * fmi2CallbackFunctions given at instantiation) and `name` (the instance
 * name): `fail`, which logs an error through the instance's logger, and a
 * trivial fmi2Terminate. */
#ifndef FMI2_INSTANCE_H
#define FMI2_INSTANCE_H

/* Logs `message` with fmi2Error through the instance's logger and returns
 * fmi2Error. */
static fmi2Status fail(Instance *m, const char *message) {
    if (m->cb.logger) {
        m->cb.logger(m->cb.componentEnvironment, m->name, fmi2Error, "logStatusError", message);
    }
    return fmi2Error;
}

FMI2_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

#endif
