/*
 * CVODE with the KLU sparse direct solver on the large sparse problems of
 * `tandem-bench stiff`: CV_BDF, one call to t_end, analytic Jacobians
 * assembled in compressed sparse row form.
 *
 *   cvode_sparse_harness PROBLEM SIZE RTOL ATOL REPEATS
 *
 * PROBLEM is BRUSS2D (the Brusselator on a periodic SIZE x SIZE grid,
 * 2 SIZE^2 states, the two species interleaved per grid point) or PACK (a
 * battery pack of SIZE cells discharged at 100 A, 5 states per cell, the
 * equations of models/src/plants/pack.rs). Prints one JSON line: the
 * solution at t_end, CVODE's counters and the median wall time of REPEATS
 * runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_types.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "driver.h"

/* ---- a row-by-row CSR builder ------------------------------------------ */

struct rows {
  sunindextype *ptr, *col;
  sunrealtype *val;
  sunindextype nnz;
};

static void begin(struct rows *r, SUNMatrix J) {
  r->ptr = SUNSparseMatrix_IndexPointers(J);
  r->col = SUNSparseMatrix_IndexValues(J);
  r->val = SUNSparseMatrix_Data(J);
  r->nnz = 0;
  r->ptr[0] = 0;
}

/* Adds (column, value) to the row being built, keeping columns sorted and
 * summing repeats. */
static void entry(struct rows *r, sunindextype row_start, sunindextype c, double v) {
  sunindextype k = r->nnz;
  while (k > row_start && r->col[k - 1] > c) k--;
  if (k > row_start && r->col[k - 1] == c) {
    r->val[k - 1] += v;
    return;
  }
  memmove(&r->col[k + 1], &r->col[k], (r->nnz - k) * sizeof *r->col);
  memmove(&r->val[k + 1], &r->val[k], (r->nnz - k) * sizeof *r->val);
  r->col[k] = c;
  r->val[k] = v;
  r->nnz++;
}

/* ---- the 2D Brusselator -------------------------------------------------- */

#define BRUSS_A 1.0
#define BRUSS_B 3.4
#define BRUSS_ALPHA 0.002

static int grid;

static sunindextype at(int i, int j, int s) {
  i = (i + grid) % grid;
  j = (j + grid) % grid;
  return 2 * ((sunindextype)i * grid + j) + s;
}

static int bruss(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  double *Y = N_VGetArrayPointer(y), *F = N_VGetArrayPointer(f);
  double c = BRUSS_ALPHA * grid * grid;
  for (int i = 0; i < grid; i++)
    for (int j = 0; j < grid; j++) {
      double u = Y[at(i, j, 0)], v = Y[at(i, j, 1)];
      double lu = Y[at(i - 1, j, 0)] + Y[at(i + 1, j, 0)] + Y[at(i, j - 1, 0)] + Y[at(i, j + 1, 0)] - 4.0 * u;
      double lv = Y[at(i - 1, j, 1)] + Y[at(i + 1, j, 1)] + Y[at(i, j - 1, 1)] + Y[at(i, j + 1, 1)] - 4.0 * v;
      F[at(i, j, 0)] = BRUSS_A + u * u * v - (BRUSS_B + 1.0) * u + c * lu;
      F[at(i, j, 1)] = BRUSS_B * u - u * u * v + c * lv;
    }
  return 0;
}

static int bruss_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector t1,
                     N_Vector t2, N_Vector t3) {
  double *Y = N_VGetArrayPointer(y);
  double c = BRUSS_ALPHA * grid * grid;
  struct rows r;
  begin(&r, J);
  sunindextype row = 0;
  for (int i = 0; i < grid; i++)
    for (int j = 0; j < grid; j++) {
      double u = Y[at(i, j, 0)], v = Y[at(i, j, 1)];
      for (int s = 0; s < 2; s++) {
        sunindextype start = r.nnz;
        entry(&r, start, at(i - 1, j, s), c);
        entry(&r, start, at(i + 1, j, s), c);
        entry(&r, start, at(i, j - 1, s), c);
        entry(&r, start, at(i, j + 1, s), c);
        if (s == 0) {
          entry(&r, start, at(i, j, 0), 2.0 * u * v - (BRUSS_B + 1.0) - 4.0 * c);
          entry(&r, start, at(i, j, 1), u * u);
        } else {
          entry(&r, start, at(i, j, 0), BRUSS_B - 2.0 * u * v);
          entry(&r, start, at(i, j, 1), -u * u - 4.0 * c);
        }
        r.ptr[++row] = r.nnz;
      }
    }
  return 0;
}

static void bruss_initial(double *Y) {
  for (int i = 0; i < grid; i++)
    for (int j = 0; j < grid; j++) {
      double x = (double)i / grid, yy = (double)j / grid;
      Y[at(i, j, 0)] = 0.5 + yy;
      Y[at(i, j, 1)] = 1.0 + 5.0 * x;
    }
}

/* ---- the battery pack (models/src/plants/pack.rs) ----------------------- */

#define CURRENT 100.0
#define COOLANT 25.0
#define R0 1.5e-3
#define R0_B 3000.0
#define R1 1e-3
#define C1 0.2
#define R2 2e-3
#define C2 2e4
#define CELL_CAPACITY 1000.0
#define CELL_TO_PLATE 0.5
#define PLATE_CAPACITY 2.0
#define PLATE_TO_PLATE 0.05
#define PLATE_TO_COOLANT 0.2

static int cells;
static double *charge, *resistance;

static double series_resistance(int i, double temperature) {
  return resistance[i] * exp(R0_B * (1.0 / (temperature + 273.15) - 1.0 / 298.15));
}

static int pack(sunrealtype t, N_Vector y, N_Vector f, void *data) {
  double *X = N_VGetArrayPointer(y), *D = N_VGetArrayPointer(f);
  for (int i = 0; i < cells; i++) {
    double *c = &X[5 * i], *d = &D[5 * i];
    d[0] = -CURRENT / charge[i];
    d[1] = CURRENT / C1 - c[1] / (R1 * C1);
    d[2] = CURRENT / C2 - c[2] / (R2 * C2);
    double heat = CURRENT * CURRENT * series_resistance(i, c[3]) + c[1] * c[1] / R1 + c[2] * c[2] / R2;
    double to_plate = (c[3] - c[4]) / CELL_TO_PLATE;
    d[3] = (heat - to_plate) / CELL_CAPACITY;
    double conducted = 0.0;
    if (i > 0) conducted += X[5 * (i - 1) + 4] - c[4];
    if (i + 1 < cells) conducted += X[5 * (i + 1) + 4] - c[4];
    double to_coolant = (c[4] - COOLANT) / PLATE_TO_COOLANT;
    d[4] = (to_plate + conducted / PLATE_TO_PLATE - to_coolant) / PLATE_CAPACITY;
  }
  return 0;
}

static int pack_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector t1,
                    N_Vector t2, N_Vector t3) {
  double *X = N_VGetArrayPointer(y);
  struct rows r;
  begin(&r, J);
  sunindextype row = 0;
  for (int i = 0; i < cells; i++) {
    double *c = &X[5 * i];
    sunindextype base = 5 * (sunindextype)i, start;
    /* state of charge: a constant derivative, an empty row but for the
     * diagonal KLU's pattern keeps */
    start = r.nnz;
    entry(&r, start, base, 0.0);
    r.ptr[++row] = r.nnz;
    start = r.nnz;
    entry(&r, start, base + 1, -1.0 / (R1 * C1));
    r.ptr[++row] = r.nnz;
    start = r.nnz;
    entry(&r, start, base + 2, -1.0 / (R2 * C2));
    r.ptr[++row] = r.nnz;
    double kelvin = c[3] + 273.15;
    double dr = series_resistance(i, c[3]) * (-R0_B / (kelvin * kelvin));
    start = r.nnz;
    entry(&r, start, base + 1, 2.0 * c[1] / R1 / CELL_CAPACITY);
    entry(&r, start, base + 2, 2.0 * c[2] / R2 / CELL_CAPACITY);
    entry(&r, start, base + 3, (CURRENT * CURRENT * dr - 1.0 / CELL_TO_PLATE) / CELL_CAPACITY);
    entry(&r, start, base + 4, 1.0 / CELL_TO_PLATE / CELL_CAPACITY);
    r.ptr[++row] = r.nnz;
    start = r.nnz;
    int neighbours = (i > 0) + (i + 1 < cells);
    if (i > 0) entry(&r, start, base - 1, 1.0 / PLATE_TO_PLATE / PLATE_CAPACITY);
    entry(&r, start, base + 3, 1.0 / CELL_TO_PLATE / PLATE_CAPACITY);
    entry(&r, start, base + 4,
          (-1.0 / CELL_TO_PLATE - neighbours / PLATE_TO_PLATE - 1.0 / PLATE_TO_COOLANT) / PLATE_CAPACITY);
    if (i + 1 < cells) entry(&r, start, base + 9, 1.0 / PLATE_TO_PLATE / PLATE_CAPACITY);
    r.ptr[++row] = r.nnz;
  }
  return 0;
}

static void pack_initial(double *X) {
  for (int i = 0; i < cells; i++) {
    double cell[5] = {0.8, 0.0, 0.0, 25.0, 25.0};
    memcpy(&X[5 * i], cell, sizeof cell);
  }
}

/* ---- the driver ---------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s BRUSS2D|PACK SIZE RTOL ATOL REPEATS\n", argv[0]);
    return 2;
  }
  int size = atoi(argv[2]);
  if (size < 3 || size > 200000) {
    fprintf(stderr, "SIZE must be 3 to 200000, not %s\n", argv[2]);
    return 2;
  }
  sunindextype n, nnz;
  double t_end;
  CVRhsFn rhs;
  CVLsJacFn jac;
  void (*initial)(double *);
  if (strcmp(argv[1], "BRUSS2D") == 0) {
    grid = size;
    n = 2 * (sunindextype)size * size;
    nnz = 6 * n;
    t_end = 10.0;
    rhs = bruss;
    jac = bruss_jac;
    initial = bruss_initial;
  } else if (strcmp(argv[1], "PACK") == 0) {
    cells = size;
    n = 5 * (sunindextype)size;
    nnz = 4 * n;
    t_end = 600.0;
    rhs = pack;
    jac = pack_jac;
    initial = pack_initial;
    charge = calloc(size, sizeof *charge);
    resistance = calloc(size, sizeof *resistance);
    for (int i = 0; i < size; i++) {
      charge[i] = 3600.0 * 50.0 * (1.0 + 0.02 * sin(2.3 * i + 0.7));
      resistance[i] = R0 * (1.0 + 0.05 * cos(1.7 * i + 0.3));
    }
  } else {
    fprintf(stderr, "unknown problem %s; use BRUSS2D or PACK\n", argv[1]);
    return 2;
  }
  double rtol = atof(argv[3]), atol = atof(argv[4]);
  int repeats = atoi(argv[5]);
  if (repeats < 1) repeats = 1;
  double *walls = calloc(repeats, sizeof *walls);
  double *yend = calloc(n, sizeof *yend);
  SUNContext ctx;
  SUNContext_Create(NULL, &ctx);
  struct counters counters = {0};
  for (int r = 0; r < repeats; r++) {
    double start = now();
    N_Vector y = N_VNew_Serial(n, ctx);
    initial(N_VGetArrayPointer(y));
    void *mem = CVodeCreate(CV_BDF, ctx);
    CVodeInit(mem, rhs, 0.0, y);
    CVodeSStolerances(mem, rtol, atol);
    SUNMatrix A = SUNSparseMatrix(n, n, nnz, CSR_MAT, ctx);
    SUNLinearSolver LS = SUNLinSol_KLU(y, A, ctx);
    CVodeSetLinearSolver(mem, LS, A);
    CVodeSetJacFn(mem, jac);
    CVodeSetMaxNumSteps(mem, 1000000);
    double t;
    int flag = CVode(mem, t_end, y, &t, CV_NORMAL);
    walls[r] = now() - start;
    if (flag < 0) {
      fprintf(stderr, "CVODE failed with flag %d\n", flag);
      return 1;
    }
    memcpy(yend, N_VGetArrayPointer(y), n * sizeof *yend);
    counters = read_counters(mem);
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroy(y);
  }
  print_result(yend, n, counters, walls, repeats);
  SUNContext_Free(&ctx);
  free(walls);
  free(yend);
  return 0;
}
