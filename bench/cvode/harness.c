/*
 * CVODE on the stiff problems of the Test Set for IVP Solvers, run the way
 * `tandem bench stiff` runs Tandem's BDF: CV_BDF, dense direct solver,
 * one call to t_end, the analytic Jacobian for ROBER only.
 *
 *   cvode_harness PROBLEM RTOL ATOL REPEATS
 *
 * prints one JSON line: the solution at t_end, CVODE's counters and the
 * median wall time of REPEATS runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_types.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "driver.h"

#define Y(i) NV_Ith_S(y, i)
#define F(i) NV_Ith_S(f, i)

static int rober(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  F(0) = -0.04 * Y(0) + 1e4 * Y(1) * Y(2);
  F(2) = 3e7 * Y(1) * Y(1);
  F(1) = -F(0) - F(2);
  return 0;
}

static int rober_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector t1,
                     N_Vector t2, N_Vector t3) {
  SM_ELEMENT_D(J, 0, 0) = -0.04;
  SM_ELEMENT_D(J, 1, 0) = 0.04;
  SM_ELEMENT_D(J, 2, 0) = 0.0;
  SM_ELEMENT_D(J, 0, 1) = 1e4 * Y(2);
  SM_ELEMENT_D(J, 1, 1) = -1e4 * Y(2) - 6e7 * Y(1);
  SM_ELEMENT_D(J, 2, 1) = 6e7 * Y(1);
  SM_ELEMENT_D(J, 0, 2) = 1e4 * Y(1);
  SM_ELEMENT_D(J, 1, 2) = -1e4 * Y(1);
  SM_ELEMENT_D(J, 2, 2) = 0.0;
  return 0;
}

static int hires(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  F(0) = -1.71 * Y(0) + 0.43 * Y(1) + 8.32 * Y(2) + 0.0007;
  F(1) = 1.71 * Y(0) - 8.75 * Y(1);
  F(2) = -10.03 * Y(2) + 0.43 * Y(3) + 0.035 * Y(4);
  F(3) = 8.32 * Y(1) + 1.71 * Y(2) - 1.12 * Y(3);
  F(4) = -1.745 * Y(4) + 0.43 * Y(5) + 0.43 * Y(6);
  F(5) = -280.0 * Y(5) * Y(7) + 0.69 * Y(3) + 1.71 * Y(4) - 0.43 * Y(5) + 0.69 * Y(6);
  F(6) = 280.0 * Y(5) * Y(7) - 1.81 * Y(6);
  F(7) = -F(6);
  return 0;
}

static int vdpol(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  F(0) = Y(1);
  F(1) = ((1.0 - Y(0) * Y(0)) * Y(1) - Y(0)) / 1e-6;
  return 0;
}

static int orego(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  F(0) = 77.27 * (Y(1) + Y(0) * (1.0 - 8.375e-6 * Y(0) - Y(1)));
  F(1) = (Y(2) - (1.0 + Y(0)) * Y(1)) / 77.27;
  F(2) = 0.161 * (Y(0) - Y(2));
  return 0;
}

static int vdpolm(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  F(0) = Y(1);
  F(1) = 1e3 * (1.0 - Y(0) * Y(0)) * Y(1) - Y(0);
  return 0;
}

static int e5(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  double p1 = 7.89e-10 * Y(0), p2 = 1.1e7 * Y(0) * Y(2), p3 = 1.13e9 * Y(1) * Y(2), p4 = 1.13e3 * Y(3);
  F(0) = -p1 - p2;
  F(1) = p1 - p3;
  F(3) = p2 - p4;
  F(2) = F(1) - F(3);
  return 0;
}

static const double K[25] = {0.35,   26.6,   1.23e4, 8.6e-4, 8.2e-4, 1.5e4,   1.3e-4, 2.4e4, 1.65e4,
                             9e3,    2.2e-2, 1.2e4,  1.88,   1.63e4, 4.8e6,   3.5e-4, 1.75e-2, 1e8,
                             4.44e11, 1.24e3, 2.1,   5.78,   4.74e-2, 1.78e3, 3.12};

static int pollu(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  double r[25] = {K[0] * Y(0),         K[1] * Y(1) * Y(3),  K[2] * Y(4) * Y(1),  K[3] * Y(6),
                  K[4] * Y(6),         K[5] * Y(6) * Y(5),  K[6] * Y(8),         K[7] * Y(8) * Y(5),
                  K[8] * Y(10) * Y(1), K[9] * Y(10) * Y(0), K[10] * Y(12),       K[11] * Y(9) * Y(1),
                  K[12] * Y(13),       K[13] * Y(0) * Y(5), K[14] * Y(2),        K[15] * Y(3),
                  K[16] * Y(3),        K[17] * Y(15),       K[18] * Y(15),       K[19] * Y(16) * Y(5),
                  K[20] * Y(18),       K[21] * Y(18),       K[22] * Y(0) * Y(3), K[23] * Y(18) * Y(0),
                  K[24] * Y(19)};
  F(0) = -r[0] - r[9] - r[13] - r[22] - r[23] + r[1] + r[2] + r[8] + r[10] + r[11] + r[21] + r[24];
  F(1) = -r[1] - r[2] - r[8] - r[11] + r[0] + r[20];
  F(2) = -r[14] + r[0] + r[16] + r[18] + r[21];
  F(3) = -r[1] - r[15] - r[16] - r[22] + r[14];
  F(4) = -r[2] + 2.0 * r[3] + r[5] + r[6] + r[12] + r[19];
  F(5) = -r[5] - r[7] - r[13] - r[19] + r[2] + 2.0 * r[17];
  F(6) = -r[3] - r[4] - r[5] + r[12];
  F(7) = r[3] + r[4] + r[5] + r[6];
  F(8) = -r[6] - r[7];
  F(9) = -r[11] + r[6] + r[8];
  F(10) = -r[8] - r[9] + r[7] + r[10];
  F(11) = r[8];
  F(12) = -r[10] + r[9];
  F(13) = -r[12] + r[11];
  F(14) = r[13];
  F(15) = -r[17] - r[18] + r[15];
  F(16) = -r[19];
  F(17) = r[19];
  F(18) = -r[20] - r[21] - r[23] + r[22] + r[24];
  F(19) = -r[24] + r[23];
  return 0;
}

struct problem {
  const char *name;
  int n;
  double t_end;
  double y0[20];
  CVRhsFn rhs;
  CVLsJacFn jac;
};

static const struct problem PROBLEMS[] = {
    {"ROBER", 3, 1e11, {1.0, 0.0, 0.0}, rober, rober_jac},
    {"HIRES", 8, 321.8122, {1, 0, 0, 0, 0, 0, 0, 0.0057}, hires, NULL},
    {"VDPOL", 2, 2.0, {2.0, 0.0}, vdpol, NULL},
    {"OREGO", 3, 360.0, {1.0, 2.0, 3.0}, orego, NULL},
    {"VDPOLM", 2, 2000.0, {2.0, 0.0}, vdpolm, NULL},
    {"E5", 4, 1e13, {1.76e-3, 0.0, 0.0, 0.0}, e5, NULL},
    {"POLLU", 20, 60.0, {0, 0.2, 0, 0.04, 0, 0, 0.1, 0.3, 0.01, 0, 0, 0, 0, 0, 0, 0, 0.007, 0, 0, 0}, pollu, NULL},
};

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s PROBLEM RTOL ATOL REPEATS\n", argv[0]);
    return 2;
  }
  const struct problem *p = NULL;
  for (size_t i = 0; i < sizeof PROBLEMS / sizeof PROBLEMS[0]; i++)
    if (strcmp(argv[1], PROBLEMS[i].name) == 0) p = &PROBLEMS[i];
  if (!p) {
    fprintf(stderr, "unknown problem %s; use ROBER, HIRES, VDPOL, OREGO, VDPOLM, E5 or POLLU\n", argv[1]);
    return 2;
  }
  double rtol = atof(argv[2]), atol = atof(argv[3]);
  int repeats = atoi(argv[4]);
  if (repeats < 1) repeats = 1;
  double *walls = calloc(repeats, sizeof *walls);
  SUNContext ctx;
  SUNContext_Create(NULL, &ctx);
  struct counters counters = {0};
  double yend[20];
  for (int r = 0; r < repeats; r++) {
    double start = now();
    N_Vector y = N_VNew_Serial(p->n, ctx);
    for (int i = 0; i < p->n; i++) Y(i) = p->y0[i];
    void *mem = CVodeCreate(CV_BDF, ctx);
    CVodeInit(mem, p->rhs, 0.0, y);
    CVodeSStolerances(mem, rtol, atol);
    SUNMatrix A = SUNDenseMatrix(p->n, p->n, ctx);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, ctx);
    CVodeSetLinearSolver(mem, LS, A);
    if (p->jac) CVodeSetJacFn(mem, p->jac);
    CVodeSetMaxNumSteps(mem, 1000000);
    double t;
    int flag = CVode(mem, p->t_end, y, &t, CV_NORMAL);
    walls[r] = now() - start;
    if (flag < 0) {
      fprintf(stderr, "CVODE failed with flag %d\n", flag);
      return 1;
    }
    for (int i = 0; i < p->n; i++) yend[i] = Y(i);
    counters = read_counters(mem);
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
  }
  print_result(yend, p->n, counters, walls, repeats);
  SUNContext_Free(&ctx);
  free(walls);
  return 0;
}
