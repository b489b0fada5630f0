"""The reference solution of tests/data/pack8_scipy.csv: the battery pack of
models/src/plants/pack.rs with 8 cells (40 states), written again here from
its equations (module documentation) and solved by SciPy's Radau IIA
(scipy.integrate.solve_ivp, rtol 1e-10, atol 1e-12), under the current
profile of tests/pack.rs as a run applies it: read at the start of each
1 ms frame and held over the frame (each frame inside a ramp is one
piece of the integration, each stretch of constant current another). Outputs every 0.1 s, as `time,pack_voltage,soc,
cell_voltage_min,cell_voltage_max,cell_temp_min,cell_temp_max`.

    python3 tests/data/pack_reference.py > tests/data/pack8_scipy.csv

Run with SciPy 1.17.1 and NumPy 2.4.6 (pip install scipy numpy)."""
import math
import sys

import numpy as np
from scipy.integrate import solve_ivp

CELLS = 8
CURRENT = [(0.0, 0.0), (0.5, 0.0), (0.6, 300.0), (3.0, 300.0), (3.1, -120.0), (4.5, -120.0), (4.6, 0.0)]
COOLANT = 25.0
END = 6.0
FRAME_MS = 1

CAPACITY = 50.0
R0, R0_B = 1.5e-3, 3000.0
R1, C1 = 1e-3, 0.2
R2, C2 = 2e-3, 2e4
CELL_CAPACITY, CELL_TO_PLATE = 1000.0, 0.5
PLATE_CAPACITY, PLATE_TO_PLATE, PLATE_TO_COOLANT = 2.0, 0.05, 0.2

charge = [3600.0 * CAPACITY * (1.0 + 0.02 * math.sin(2.3 * i + 0.7)) for i in range(CELLS)]
resistance = [R0 * (1.0 + 0.05 * math.cos(1.7 * i + 0.3)) for i in range(CELLS)]


def profile_at(t):
    if t <= CURRENT[0][0]:
        return CURRENT[0][1]
    for (ta, ya), (tb, yb) in zip(CURRENT, CURRENT[1:]):
        if t <= tb:
            return ya + (yb - ya) * (t - ta) / (tb - ta)
    return CURRENT[-1][1]


def current_at(t):
    """The current a run holds over the frame that `t` lies in."""
    frame = math.floor(round(t * 1000.0, 6)) // FRAME_MS * FRAME_MS
    return profile_at(frame / 1000.0)


def series_resistance(i, temperature):
    return resistance[i] * math.exp(R0_B * (1.0 / (temperature + 273.15) - 1.0 / 298.15))


def ocv(soc):
    return 3.0 + soc * (1.05 + soc * (-0.45 + soc * 0.35))


def rhs(t, x, current):
    d = np.zeros_like(x)
    for i in range(CELLS):
        soc, v1, v2, cell, plate = x[5 * i:5 * i + 5]
        d[5 * i] = -current / charge[i]
        d[5 * i + 1] = current / C1 - v1 / (R1 * C1)
        d[5 * i + 2] = current / C2 - v2 / (R2 * C2)
        heat = current * current * series_resistance(i, cell) + v1 * v1 / R1 + v2 * v2 / R2
        to_plate = (cell - plate) / CELL_TO_PLATE
        d[5 * i + 3] = (heat - to_plate) / CELL_CAPACITY
        conducted = 0.0
        if i > 0:
            conducted += x[5 * (i - 1) + 4] - plate
        if i + 1 < CELLS:
            conducted += x[5 * (i + 1) + 4] - plate
        to_coolant = (plate - COOLANT) / PLATE_TO_COOLANT
        d[5 * i + 4] = (to_plate + conducted / PLATE_TO_PLATE - to_coolant) / PLATE_CAPACITY
    return d


def outputs(t, x):
    current = current_at(t)
    volts = [ocv(x[5 * i]) - x[5 * i + 1] - x[5 * i + 2] - current * series_resistance(i, x[5 * i + 3]) for i in range(CELLS)]
    temps = [x[5 * i + 3] for i in range(CELLS)]
    soc = 100.0 * sum(x[5 * i] for i in range(CELLS)) / CELLS
    return [sum(volts), soc, min(volts), max(volts), min(temps), max(temps)]


def pieces():
    """The times between which the held current is constant: each frame
    inside a ramp, and the stretches between."""
    edges = {0.0, END}
    for (ta, ya), (tb, yb) in zip(CURRENT, CURRENT[1:]):
        if ya != yb:
            first, last = round(ta * 1000), round(tb * 1000)
            edges.update(k / 1000.0 for k in range(first, last + 2))
    edges = sorted(e for e in edges if e <= END)
    return list(zip(edges, edges[1:]))


def main():
    x = np.array([0.8, 0.0, 0.0, 25.0, 25.0] * CELLS)
    samples = [round(0.1 * k, 10) for k in range(int(round(END / 0.1)) + 1)]
    rows = [[0.0] + outputs(0.0, x)]
    for start, end in pieces():
        # The held current of this piece, at a time strictly inside it.
        held = current_at(start + 1e-9)
        wanted = [t for t in samples if start < t <= end]
        times = sorted(set(wanted) | {end})
        sol = solve_ivp(lambda t, y: rhs(t, y, held), (start, end), x, method="Radau", rtol=1e-10, atol=1e-12, t_eval=times)
        if not sol.success:
            sys.exit(sol.message)
        for k, t in enumerate(sol.t):
            if t in wanted:
                rows.append([t] + outputs(t, sol.y[:, k]))
        x = sol.y[:, -1]
    print("time,pack_voltage,soc,cell_voltage_min,cell_voltage_max,cell_temp_min,cell_temp_max")
    for row in rows:
        print(",".join(f"{v:.12g}" for v in row))


if __name__ == "__main__":
    main()
