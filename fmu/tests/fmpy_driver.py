"""Drives an FMU exported by Tandem with FMPy, for tandem-fmu's tests.

Numbers are printed with repr(), which reads back to the same bits.

  validate FMU               the validator's problems, one a line, then "problems: N"
  simulate FMU STOP STEP [NAME=VALUE ...]
                             fmpy.simulate_fmu to STOP with output interval STEP,
                             the start values given: rows "time,output1,..."
  slave FMU H N VR U1 U2     through FMU3Slave/FMU2Slave: input VR = U1, then N
                             steps of H, U2 from step N/2 on (the FMU state saved
                             just before); rows "time,outputs..." at t = 0 and after
                             each step; then "restored" and the rows of the second
                             half again, stepped from the restored state
  errors FMU STEP            a step of -STEP, setting an output, and an
                             instantiation without the resources folder: for each,
                             "call: status" and the messages logged
"""

import os
import shutil
import sys
from ctypes import byref

import fmpy
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException


def row(values):
    return ",".join(repr(float(v)) for v in values)


def slave(path, logger=None):
    """The FMU's description, an instance of its slave class (not yet
    instantiated), and its unzip folder."""
    description = read_model_description(path)
    folder = extract(path)
    kwargs = dict(
        guid=description.guid,
        unzipDirectory=folder,
        modelIdentifier=description.coSimulation.modelIdentifier,
        instanceName="test",
    )
    if description.fmiVersion == "3.0":
        from fmpy.fmi3 import FMU3Slave

        fmu = FMU3Slave(**kwargs)
    else:
        from fmpy.fmi2 import FMU2Slave

        fmu = FMU2Slave(**kwargs)
    return description, fmu, folder


def instantiate(description, fmu, messages):
    """Instantiates with a logger that appends to `messages`."""
    if description.fmiVersion == "3.0":

        def log(env, status, category, message):
            messages.append(message.decode())

        fmu.instantiate(logMessage=log)
    else:
        from fmpy.fmi2 import fmi2CallbackFunctions, fmi2CallbackLoggerTYPE
        from fmpy.fmi2 import fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE
        from fmpy.fmi2 import calloc, free
        from fmpy.logging import addLoggerProxy

        def log(env, name, status, category, message):
            messages.append(message.decode())

        callbacks = fmi2CallbackFunctions()
        callbacks.logger = fmi2CallbackLoggerTYPE(log)
        callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        addLoggerProxy(byref(callbacks))
        fmu.keep_alive = (log, callbacks)
        fmu.instantiate(callbacks=callbacks)


def initialize(description, fmu, stop=None):
    if description.fmiVersion == "3.0":
        fmu.enterInitializationMode(stopTime=stop)
    else:
        fmu.setupExperiment(startTime=0.0, stopTime=stop)
        fmu.enterInitializationMode()
    fmu.exitInitializationMode()


def get(description, fmu, vrs):
    if description.fmiVersion == "3.0":
        return fmu.getFloat64(vrs)
    return fmu.getReal(vrs)


def set_(description, fmu, vrs, values):
    if description.fmiVersion == "3.0":
        fmu.setFloat64(vrs, values)
    else:
        fmu.setReal(vrs, values)


def do_step(description, fmu, t, h):
    fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)


def outputs(description):
    return [v.valueReference for v in description.modelVariables if v.causality == "output"]


def validate(path):
    from fmpy.validation import validate_fmu

    problems = validate_fmu(path)
    for p in problems:
        print(p)
    print(f"problems: {len(problems)}")


def simulate(path, stop, step, start_values):
    result = fmpy.simulate_fmu(
        path, stop_time=stop, output_interval=step, fmi_type="CoSimulation", start_values=start_values
    )
    for r in result:
        print(row(r))


def run_slave(path, h, n, vr, u1, u2):
    description, fmu, folder = slave(path)
    messages = []
    instantiate(description, fmu, messages)
    initialize(description, fmu)
    ys = outputs(description)
    set_(description, fmu, [vr], [u1])
    print(row([0.0] + get(description, fmu, ys)))
    half = n // 2
    state = None
    second = []
    for k in range(n):
        if k == half:
            state = fmu.getFMUstate() if description.fmiVersion == "2.0" else fmu.getFMUState()
            set_(description, fmu, [vr], [u2])
        do_step(description, fmu, k * h, h)
        line = row([(k + 1) * h] + get(description, fmu, ys))
        print(line)
        if k >= half:
            second.append(line)
    print("restored")
    if description.fmiVersion == "2.0":
        fmu.setFMUstate(state)
        fmu.freeFMUstate(state)
    else:
        fmu.setFMUState(state)
        fmu.freeFMUState(state)
    set_(description, fmu, [vr], [u2])
    for k in range(half, n):
        do_step(description, fmu, k * h, h)
        print(row([(k + 1) * h] + get(description, fmu, ys)))
    fmu.terminate()
    fmu.freeInstance()
    shutil.rmtree(folder, ignore_errors=True)


def attempt(name, call, messages):
    try:
        call()
        print(f"{name}: ok")
    except FMICallException as e:
        print(f"{name}: status {e.status}")
    except Exception as e:
        print(f"{name}: {e}")
    for m in messages:
        print(f"  {m}")
    messages.clear()


def errors(path, step):
    description, fmu, folder = slave(path)
    messages = []
    instantiate(description, fmu, messages)
    initialize(description, fmu)
    attempt("doStep", lambda: do_step(description, fmu, 0.0, -step), messages)
    attempt("set output", lambda: set_(description, fmu, outputs(description)[:1], [1.0]), messages)
    fmu.terminate()
    fmu.freeInstance()
    description, fmu, folder2 = slave(path)
    shutil.rmtree(os.path.join(folder2, "resources"))
    attempt("instantiate", lambda: instantiate(description, fmu, messages), messages)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(folder2, ignore_errors=True)


if __name__ == "__main__":
    command, path, *rest = sys.argv[1:]
    if command == "validate":
        validate(path)
    elif command == "simulate":
        starts = {name: float(value) for name, value in (item.split("=", 1) for item in rest[2:])}
        simulate(path, float(rest[0]), float(rest[1]), starts)
    elif command == "slave":
        h, n, vr, u1, u2 = rest
        run_slave(path, float(h), int(n), int(vr), float(u1), float(u2))
    elif command == "errors":
        errors(path, float(rest[0]))
    else:
        sys.exit(f"unknown command {command}")
