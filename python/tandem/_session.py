"""Real-time runs: :class:`Session` and the :class:`Bus` nodes it offers."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

from . import _tandem
from ._model import Result, parameter_json

ConfigSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class WaitTimeout(_tandem.TandemError, TimeoutError):
    """A condition that did not hold within its time (run time: virtual
    seconds on the virtual clock)."""


class SessionStopped(_tandem.TandemError, RuntimeError):
    """A call that needs a running session, made after :meth:`Session.stop`."""


class NoRowYet(KeyError):
    """A recorded output read before the first row was recorded: "not yet"
    to :meth:`Session.wait_until`, which keeps waiting."""

    def __str__(self) -> str:
        return str(self.args[0])


def _none_key(value: Any, path: str = "") -> Optional[str]:
    """The key (``record.signals[1]``) of the first None in a configuration
    given as a dict, if any."""
    if value is None:
        return path
    items: Any = ()
    if isinstance(value, Mapping):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    for key, item in items:
        found = _none_key(item, key)
        if found is not None:
            return found
    return None


class Frame(NamedTuple):
    """A frame received on a bus."""

    id: int
    extended: bool
    data: bytes
    #: The DBC message it is, when the DBC knows its identifier.
    message: Optional[str]
    #: Its signals' physical values, when the DBC knows it.
    signals: Dict[str, float]


class Session:
    """A real-time run of a configuration (a TOML file or a dict of the
    same keys), on the virtual clock (deterministic, the default) or the
    real one; use it as a context manager, which always stops it and joins
    its threads.

    ``session["vehicle_speed"]`` is a recorded output's newest value,
    ``session["torque_request"] = 50`` sets a model input from the next
    frame on. On the virtual clock time passes only through :meth:`step`,
    :meth:`run_for` and :meth:`wait_until`, and every session of the
    process on the virtual clock advances with it (so a plant and an ECU on
    one in-process bus run in lock-step). Python never runs on a real-time
    thread: it reads and writes through the session's lock-free paths.
    """

    def __init__(
        self,
        config: ConfigSource,
        *,
        clock: str = "virtual",
        results: Union[str, "os.PathLike[str]"] = "results",
        duration: Optional[float] = None,
    ):
        self._stopped = False
        if isinstance(config, Mapping):
            none = _none_key(config)
            if none is not None:
                error = _tandem.ConfigError(
                    f"<dict>: {none}: None is no value of a configuration; give a value, or leave the key out for "
                    "its default"
                )
                error.file, error.key = "<dict>", none
                raise error
            source, text = "<dict>", _tandem.toml_from_json(json.dumps(config))
        else:
            source, text = os.fspath(config), None
        self._native = _tandem.Session.start(source, text, clock, os.fspath(results), duration)
        self._recorded: List[str] = list(self._native.recorded)
        self._inputs: List[str] = list(self._native.inputs)
        self._report: Optional[Dict[str, Any]] = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        # A failure already on its way is not hidden by the run's own.
        self.stop(raise_failure=kind is None)

    def __del__(self) -> None:
        native = getattr(self, "_native", None)
        if native is not None:
            native.stop()

    @property
    def clock(self) -> str:
        """``"virtual"`` or ``"real"``."""
        return self._native.clock

    @property
    def frame(self) -> float:
        """The frame (s)."""
        return self._native.frame

    @property
    def time(self) -> float:
        """Run time (s): the frames completed times the frame."""
        return self._native.time

    @property
    def ended(self) -> bool:
        """Whether its frames have stopped (its duration reached, stopped or
        failed)."""
        return self._native.ended

    @property
    def outputs(self) -> List[str]:
        """The recorded outputs (the configuration's ``[record] signals``)."""
        return list(self._recorded)

    @property
    def inputs(self) -> List[str]:
        """The model inputs that can be set."""
        return list(self._inputs)

    @property
    def buses(self) -> List[str]:
        """The configuration's buses."""
        return list(self._native.buses)

    def values(self) -> Dict[str, float]:
        """Every recorded output's newest value (empty before the first)."""
        latest = self._native.latest()
        return dict(zip(self._recorded, latest[1])) if latest else {}

    def __getitem__(self, name: str) -> float:
        if name not in self._recorded:
            raise KeyError(
                f"{name!r} is not recorded; add it to the configuration's [record] signals (recorded: "
                f"{', '.join(self._recorded) or 'nothing'})"
            )
        values = self.values()
        if not values:
            raise NoRowYet(f"{name!r}: no row recorded yet (t = {self.time:g} s); step or wait first")
        return values[name]

    def __setitem__(self, name: str, value: float) -> None:
        self.set_input(name, value)

    def _running(self, call: str) -> None:
        """Refuses ``call`` once the session is stopped."""
        if self._stopped:
            raise SessionStopped(
                f"{call}: the session was stopped at t = {self.time:g} s; start a new Session to run again"
            )

    def set_input(self, name: str, value: float) -> int:
        """Sets model input ``name`` from the next frame on; returns that
        frame's number."""
        self._running("set_input")
        return self._native.set_input(name, float(value))

    def set_parameter(self, name: str, value: Any) -> int:
        """Changes parameter ``"block.param"`` at a frame boundary, on both
        sides of the tandem (numpy values are taken as the numbers they
        hold); returns the frame it applies from."""
        self._running("set_parameter")
        return self._native.set_parameter(*parameter_json(name, value))[1]

    def fault(
        self,
        kind: str,
        message: Optional[str] = None,
        *,
        bus: str = "can0",
        start: Optional[float] = None,
        duration: Optional[float] = None,
        count: Optional[int] = None,
        **params: Any,
    ) -> str:
        """Injects a frame fault into what the session sends on ``bus``,
        as a ``[[bus.fault]]`` table would: ``kind`` is one of drop, delay,
        repeat, stuck_counter, bad_crc, wrong_length, override, burst, stop;
        ``message`` the sent message (none for burst and stop); ``start``
        a run time in seconds (default: the next frame); ``duration``
        seconds or ``count`` frames (neither: to the end of the run);
        ``params`` the kind's own keys (``delay``, ``times``, ``bytes``,
        ``signal``/``value``/``raw``, ``id``/``extended``/``per_frame``).
        Returns the fault's description, as the report lists it with the
        frames it acted in (``device(bus)["faults"]``)."""
        self._running("fault")
        request: Dict[str, Any] = {"kind": kind, **params}
        for key, value in (("message", message), ("start", start), ("duration", duration), ("count", count)):
            if value is not None:
                request[key] = value
        return self._native.fault(bus, json.dumps(request))[1]

    def stats(self) -> Dict[str, Any]:
        """The counters since the start: frames, misses, unusable results,
        frames by source, wake-up and compute histograms (ns), and each
        device's counts (``stats()["devices"]``)."""
        return json.loads(self._native.counters())

    def device(self, name: str) -> Dict[str, Any]:
        """One device's counters (e.g. ``"can0"``)."""
        devices = self.stats()["devices"]
        if name not in devices:
            raise KeyError(f"no device {name!r}; devices: {', '.join(devices) or 'none'}")
        return devices[name]

    def step(self) -> None:
        """One frame (virtual clock), or about a millisecond (real clock)."""
        self._running("step")
        self._native.step()

    def run_for(self, seconds: float) -> None:
        """Lets ``seconds`` of run time pass."""
        self._running("run_for")
        self._native.run_for(seconds)

    def wait_until(
        self,
        condition: Callable[["Session"], bool],
        timeout: float,
        *,
        what: Optional[str] = None,
    ) -> float:
        """Advances until ``condition(session)`` holds and returns the run
        time it took; raises :class:`WaitTimeout` after ``timeout`` seconds of
        run time, or :class:`RunFault` if the run ends first. The condition is
        checked after every frame on the virtual clock, about every
        millisecond on the real one; one that reads an output before the
        first row is recorded does not hold yet."""
        self._running("wait_until")
        start = self.time
        deadline = start + timeout
        while not self._holds(condition):
            if self.ended:
                raise _tandem.run_fault(
                    f"the run ended at t = {self.time:g} s before {what or 'the condition'} held; "
                    f"values: {self.values()}"
                )
            if self.time >= deadline:
                raise WaitTimeout(
                    f"{what or 'the condition'} did not hold within {timeout:g} s (from t = {start:g} s to "
                    f"{self.time:g} s); values: {self.values()}"
                )
            self.step()
        return self.time - start

    def _holds(self, condition: Callable[["Session"], bool]) -> bool:
        """Whether ``condition`` holds; not yet when it reads an output
        before the first row."""
        try:
            return bool(condition(self))
        except NoRowYet:
            return False

    def recording(self) -> Result:
        """The recorded rows so far."""
        return Result._from_native(["time", *self._recorded], self._native.rows(0))

    def bus(self, name: str = "can0") -> "Bus":
        """Joins bus ``name`` as a node of its own (on the virtual clock the
        bus must be in-process: ``transport = "virtual"``)."""
        self._running("bus")
        return Bus(self._native.bus(name), self)

    @property
    def report(self) -> Optional[Dict[str, Any]]:
        """The run's report, once stopped."""
        return self._report

    def stop(self, raise_failure: bool = True) -> Optional[Dict[str, Any]]:
        """Stops the run, joins its threads and returns its report; raises
        :class:`RunFault` if the run failed (unless ``raise_failure`` is
        false). Stopping again returns the same report."""
        self._stopped = True
        stopped = self._native.stop()
        if stopped is not None:
            report, failure = stopped
            self._report = json.loads(report)
            self._report["failure"] = failure
        if raise_failure and self._report and self._report["failure"]:
            raise _tandem.run_fault(self._report["failure"])
        return self._report

    def __repr__(self) -> str:
        return f"<tandem.Session {self.clock} clock, t = {self.time:g} s{', ended' if self.ended else ''}>"


class Bus:
    """A node of its own on a session's bus: sends frames and DBC messages
    the session receives, and receives what the session (and the others)
    send. Made by :meth:`Session.bus`; close it when done (``with``)."""

    def __init__(self, native: "_tandem.Bus", session: Session):
        self._native = native
        self._session = session

    def __enter__(self) -> "Bus":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    @property
    def messages(self) -> List[str]:
        """The DBC's messages."""
        return list(self._native.messages)

    def send(self, message: Union[str, int], data: Optional[bytes] = None, **signals: float) -> None:
        """Sends DBC message ``message`` with ``signals`` (physical values;
        the others raw 0): ``bus.send("ECU_Command", TorqueRequest=50)``; or
        a raw frame ``bus.send(0x100, b"...")``."""
        if isinstance(message, str):
            if data is not None:
                raise ValueError("a DBC message takes its signals as keywords, not data")
            self._native.send_message(message, [(k, float(v)) for k, v in signals.items()])
        else:
            if signals:
                raise ValueError("a raw frame takes data, not signals")
            self.send_frame(message, data or b"")

    def send_frame(self, id: int, data: bytes, *, extended: bool = False, fd: bool = False) -> None:
        """Sends a raw frame."""
        self._native.send_frame(id, list(data), extended, fd)

    def isotp(
        self,
        tx_id: int,
        rx_id: int,
        *,
        fd: bool = False,
        extended_address: Optional[Tuple[int, int]] = None,
        padding: Optional[int] = None,
        block_size: int = 0,
        stmin: int = 0,
        extended_id: bool = False,
    ) -> "_tandem.IsoTp":
        """A node of its own on this bus speaking ISO-TP (ISO 15765-2): its
        ``send(data, timeout=5.0)`` and ``recv(timeout=1.0)`` carry whole
        messages (wall-clock timeouts), sent at ``tx_id`` and received from
        ``rx_id``; CAN FD frames of 64 bytes when ``fd``; extended addressing
        with ``extended_address`` = (byte sent, byte received); frames padded
        with ``padding``; ``block_size`` and ``stmin`` asked of the other
        side. :class:`tandem.uds.Connection` runs udsoncan over it."""
        return self._native.isotp(tx_id, rx_id, fd, extended_address, padding, block_size, stmin, extended_id)

    def receive(self, timeout: float = 1.0, *, message: Optional[str] = None) -> Optional[Frame]:
        """The next frame (of DBC message ``message`` when given), waiting up
        to ``timeout`` seconds of run time; None when none came."""
        deadline = self._session.time + timeout
        virtual = self._session.clock == "virtual"
        while True:
            got = self._native.receive(0.0 if virtual else max(0.0, min(0.01, deadline - self._session.time)))
            if got is not None:
                id, extended, data, decoded = got
                frame = Frame(id, extended, bytes(data), decoded[0] if decoded else None, dict(decoded[1]) if decoded else {})
                if message is None or frame.message == message:
                    return frame
                continue
            if self._session.time >= deadline or self._session.ended:
                return None
            if virtual:
                self._session.step()

    def close(self) -> None:
        """Leaves the bus."""
        self._native.close()
