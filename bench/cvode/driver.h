/*
 * What both CVODE harnesses of `tandem-bench stiff` share: a monotonic
 * clock, the median of the wall times, CVODE's counters after a run, and
 * the one JSON line the benchmark reads.
 */
#ifndef TANDEM_CVODE_DRIVER_H
#define TANDEM_CVODE_DRIVER_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cvode/cvode.h>
#include <sundials/sundials_types.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* CVODE's counters, named as it names them. */
struct counters {
  long nst, nfe, nfeLS, nje, nsetups, nni, ncfn, netf;
};

static struct counters read_counters(void *mem) {
  struct counters c = {0};
  CVodeGetNumSteps(mem, &c.nst);
  CVodeGetNumRhsEvals(mem, &c.nfe);
  CVodeGetNumLinRhsEvals(mem, &c.nfeLS);
  CVodeGetNumJacEvals(mem, &c.nje);
  CVodeGetNumLinSolvSetups(mem, &c.nsetups);
  CVodeGetNumNonlinSolvIters(mem, &c.nni);
  CVodeGetNumNonlinSolvConvFails(mem, &c.ncfn);
  CVodeGetNumErrTestFails(mem, &c.netf);
  return c;
}

/* Prints the solution `y` of `n` states, the counters and the median of
 * the `repeats` wall times (which it sorts) as one JSON line. */
static void print_result(const double *y, long n, struct counters c, double *walls, int repeats) {
  qsort(walls, repeats, sizeof *walls, compare);
  printf("{\"y\": [");
  for (long i = 0; i < n; i++) printf("%s%.17g", i ? ", " : "", y[i]);
  printf("], \"nst\": %ld, \"nfe\": %ld, \"nfeLS\": %ld, \"nje\": %ld, \"nsetups\": %ld, \"nni\": %ld, "
         "\"ncfn\": %ld, \"netf\": %ld, \"wall\": %.9g}\n",
         c.nst, c.nfe, c.nfeLS, c.nje, c.nsetups, c.nni, c.ncfn, c.netf, walls[repeats / 2]);
}

#endif
