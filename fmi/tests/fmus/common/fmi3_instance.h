/* What every FMI 3.0 test FMU does alike, included right after its
 * `Instance` typedef, which must have the fields `log` (the
 * fmi3LogMessageCallback given at instantiation) and `env` (its instance
 * environment), and be allocated with malloc/calloc: `fail`, which logs an
 * error through the instance's logger, fmi3FreeInstance and a trivial
 * fmi3Terminate. */
#ifndef FMI3_INSTANCE_H
#define FMI3_INSTANCE_H

/* Logs `message` with fmi3Error through the instance's logger and returns
 * fmi3Error. */
static fmi3Status fail(Instance *m, const char *message) {
    if (m->log) {
        m->log(m->env, fmi3Error, "logStatusError", message);
    }
    return fmi3Error;
}

FMI3_EXPORT void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

FMI3_EXPORT fmi3Status fmi3Terminate(fmi3Instance instance) { (void)instance; return fmi3OK; }

#endif
