"""Tandem from Python.

- Offline: :class:`Model` and :func:`sim` load a JSON block diagram, an FMU
  or a built-in plant, change its parameters and inputs, and simulate it
  with any solver and option of ``tandem sim``; results come back as numpy
  arrays (:class:`Result`), bit for bit the command line's CSV.
- Real time: :class:`Session` runs a configuration on the virtual or the
  real clock; read outputs and counters, write inputs, wait for conditions,
  send and receive CAN frames (:class:`Bus`).
- Tests: the pytest plugin's ``tandem_session`` fixture starts sessions for
  a test and stops them after it (``--tandem-clock real`` for the real clock).
- Campaigns: :func:`sweep` runs a parameter table, here when it is
  small, else as Dask tasks (a local cluster, or a client given).

Every error is a :class:`TandemError`: :class:`ModelError`,
:class:`ConfigError`, :class:`TandemIOError`, :class:`RunFault`,
:class:`WaitTimeout` or :class:`SessionStopped`, with the command line's
message and the place (``file``, ``line``, ``column``, ``block``, ``port``,
``key``).
"""

from ._tandem import ConfigError, ModelError, RunFault, TandemError, TandemIOError, __version__
from ._model import Model, Result, sim
from ._session import Bus, Frame, Session, SessionStopped, WaitTimeout
from .sweep import SweepResult, sweep

__all__ = [
    "Bus",
    "ConfigError",
    "Frame",
    "Model",
    "ModelError",
    "Result",
    "RunFault",
    "Session",
    "SessionStopped",
    "SweepResult",
    "TandemError",
    "TandemIOError",
    "WaitTimeout",
    "__version__",
    "sim",
    "sweep",
]
