/* One mass of a two-mass oscillator: m x'' = F + F_step - k x - c x', with
 * F an input and F_step a force that steps from 0 to step_force at
 * step_time (a time event inside the FMU). Integrated by the classic
 * fourth-order Runge-Kutta method with a fixed internal step of at most
 * OSC_DT seconds, landing exactly on step_time. Shared by the FMI 2 and
 * FMI 3 Co-Simulation FMUs. */
#ifndef TANDEM_OSCILLATOR_H
#define TANDEM_OSCILLATOR_H

#include <math.h>

#define OSC_DT 1e-3
#define OSC_PI 3.14159265358979323846

typedef struct {
    double time, x, v;
    double force, m, k, c, x0, v0, step_time, step_force;
} Oscillator;

static inline void osc_init(Oscillator *o) {
    o->time = 0.0;
    o->force = 0.0;
    o->m = 1.0;
    o->k = 4.0 * OSC_PI * OSC_PI;
    o->c = 0.4;
    o->x0 = 1.0;
    o->v0 = 0.0;
    o->x = o->x0;
    o->v = o->v0;
    o->step_time = INFINITY;
    o->step_force = 0.0;
}

static inline double osc_acceleration(const Oscillator *o, double x, double v, double f) {
    return (f - o->k * x - o->c * v) / o->m;
}

/* Integrates by RK4 from o->time to `end` with the force constant. */
static inline void osc_rk4(Oscillator *o, double end) {
    double span = end - o->time;
    if (span <= 0.0) {
        return;
    }
    int n = (int)ceil(span / OSC_DT - 1e-9);
    double h = span / n;
    double f = o->force + (o->time >= o->step_time ? o->step_force : 0.0);
    for (int i = 0; i < n; i++) {
        double x = o->x, v = o->v;
        double k1x = v, k1v = osc_acceleration(o, x, v, f);
        double k2x = v + 0.5 * h * k1v, k2v = osc_acceleration(o, x + 0.5 * h * k1x, v + 0.5 * h * k1v, f);
        double k3x = v + 0.5 * h * k2v, k3v = osc_acceleration(o, x + 0.5 * h * k2x, v + 0.5 * h * k2v, f);
        double k4x = v + h * k3v, k4v = osc_acceleration(o, x + h * k3x, v + h * k3v, f);
        o->x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        o->v = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    o->time = end;
}

/* Advances to `end`, stopping at the force step when it falls inside. */
static inline void osc_advance(Oscillator *o, double end) {
    if (o->time < o->step_time && o->step_time < end) {
        osc_rk4(o, o->step_time);
    }
    osc_rk4(o, end);
}

#endif
