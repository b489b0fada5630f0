"""Offline runs: :class:`Model`, :func:`sim` and their :class:`Result`."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _tandem

ModelSource = Union[str, "os.PathLike[str]", Mapping[str, Any], "Model"]
#: How a model is loaded: ("json", text, source name) or ("load", path or name,
#: an FMU's signals and start values as JSON, or "").
Spec = Tuple[str, str, str]
#: A change made to a model: the method, its arguments and keywords.
Change = Tuple[str, tuple, Dict[str, Any]]


class Result:
    """The rows of a run: ``time`` and one array per output.

    ``result["v"]`` is output ``v`` at every row, ``result.time`` the times,
    ``result.data`` the whole table (rows x columns, time first) and
    ``result.names`` the output names. Values are the doubles the command
    line writes to its CSV file, bit for bit.
    """

    def __init__(self, columns: Sequence[str], data: np.ndarray, summary: Optional[Dict[str, Any]] = None):
        self.columns: List[str] = list(columns)
        #: The table: one row per recorded instant, time first.
        self.data: np.ndarray = data
        #: What the run reports: steps, evaluations, events, wall time (s).
        self.summary: Dict[str, Any] = summary or {}

    @classmethod
    def _from_native(cls, columns: Sequence[str], raw: Any, summary: Optional[str] = None) -> "Result":
        # The native doubles become the array's memory, not a copy of it.
        data = np.asarray(raw).reshape(-1, len(columns))
        return cls(columns, data, json.loads(summary) if summary else None)

    @property
    def names(self) -> List[str]:
        """The output names (the columns after time)."""
        return self.columns[1:]

    @property
    def time(self) -> np.ndarray:
        """The time of each row (s)."""
        return self.data[:, 0]

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.data[:, self.columns.index(name)]
        except ValueError:
            raise KeyError(f"no output {name!r}; outputs: {', '.join(self.names)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return self.data.shape[0]

    def __repr__(self) -> str:
        return f"<tandem.Result {len(self)} rows x {', '.join(self.columns)}>"

    def final(self) -> Dict[str, float]:
        """Every output's last value."""
        return {name: float(self[name][-1]) for name in self.names} if len(self) else {}

    def to_pandas(self) -> "Any":
        """The table as a pandas DataFrame indexed by time (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.data[:, 1:], index=pd.Index(self.time, name="time"), columns=self.names)


def _parameter_name(name: str) -> Tuple[str, str]:
    block, dot, param = name.rpartition(".")
    if not dot:
        raise ValueError(f"{name!r}: name a parameter as 'block.param', e.g. 'controller.kp'")
    return block, param


def _plain(value: Any) -> Any:
    """numpy scalars, 0-d arrays and arrays as Python numbers and lists
    (json's hook for what it cannot write)."""
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"a {type(value).__name__} is not a number, a string, a boolean or a list of them")


def parameter_json(name: str, value: Any, source: Optional[str] = None) -> Tuple[str, str, str]:
    """The block, the parameter and ``value`` as JSON text for parameter
    ``"block.param"``; numpy values are taken as the Python numbers they
    hold. A value that is not finite or not JSON raises :class:`ModelError`
    naming the parameter."""
    block, param = _parameter_name(name)
    try:
        return block, param, json.dumps(value, default=_plain, allow_nan=False)
    except ValueError:
        problem = f"{value} is not a finite number; give a finite value"
    except TypeError as e:
        problem = f"{e}; give a value of the model file's form"
    error = _tandem.ModelError(f"{name}: {problem}")
    error.block, error.key, error.file = block, param, source
    raise error


class Model:
    """A model for offline runs.

    ``Model("models/examples/cruise_control.json")`` (a JSON block diagram),
    ``Model({...})`` (the same as a dict), ``Model("ev")`` (a built-in
    plant) or ``Model("plant.fmu")`` (a Model Exchange FMU). Inspect it,
    change parameters and inputs, then :meth:`sim`.

    An FMU also takes ``signals``, the variables that are its outputs and
    so recorded (names, FMI 3 aliases or array elements, globs with ``*``
    and ``?``, or the words ``outputs``, ``states``, ``derivatives``,
    ``inputs``, ``parameters``, ``locals``, as ``tandem sim --signals``;
    default: its outputs), and
    ``start_values``, values set by name before it is initialised (numbers,
    Booleans, text; as ``--set``). Its inputs follow :meth:`set_input`.
    """

    def __init__(
        self,
        source: ModelSource,
        *,
        signals: Optional[Sequence[str]] = None,
        start_values: Optional[Mapping[str, Union[float, int, bool, str]]] = None,
    ):
        options = ""
        if signals or start_values:
            options = json.dumps({"signals": list(signals or []), "start_values": dict(start_values or {})})
        if isinstance(source, Model):
            spec, changes = source._spec, source._changes
        elif isinstance(source, (str, os.PathLike)):
            spec, changes = ("load", os.fspath(source), options), []
        elif options:
            raise TypeError("signals and start_values apply to an FMU, given by its path")
        elif isinstance(source, Mapping):
            spec, changes = ("json", json.dumps(source), "<dict>"), []
        else:
            raise TypeError(f"a model is a path, a built-in name or a dict, not {type(source).__name__}")
        self._start(spec, changes)

    @classmethod
    def from_json(cls, text: str, source: str = "<text>") -> "Model":
        """A block diagram from its JSON text; errors name ``source``."""
        return _restore(("json", text, source), [])

    def _start(self, spec: Spec, changes: List[Change]) -> None:
        """Loads the model ``spec`` names, then makes ``changes`` to it."""
        self._spec = spec
        self._changes: List[Change] = []
        kind, text, source = spec
        if kind == "json":
            self._native = _tandem.Model.from_json(text, source)
        else:
            options = json.loads(source) if source else {}
            start_values = [(name, _start_text(value)) for name, value in options.get("start_values", {}).items()]
            self._native = _tandem.Model.load(text, options.get("signals", []), start_values)
        for method, args, keywords in changes:
            getattr(self, method)(*args, **keywords)

    def __reduce__(self) -> Any:
        # Sent to Dask workers as its source and the changes made to it.
        return (_restore, (self._spec, self._changes))

    def copy(self) -> "Model":
        """An independent copy, with the same changes."""
        return Model(self)

    @property
    def name(self) -> str:
        """The model's name."""
        return self._native.name

    @property
    def inputs(self) -> Dict[str, float]:
        """Its inputs and their defaults."""
        return {name: default for name, default, _ in self._native.inputs}

    @property
    def outputs(self) -> List[str]:
        """Its outputs."""
        return [name for name, _ in self._native.outputs]

    @property
    def units(self) -> Dict[str, Optional[str]]:
        """The unit of each input and output, where the model gives one."""
        units = {name: unit for name, _, unit in self._native.inputs}
        units.update(dict(self._native.outputs))
        return units

    @property
    def states(self) -> List[str]:
        """Its continuous states."""
        return list(self._native.states)

    @property
    def evaluation(self) -> Optional[str]:
        """How a block diagram is evaluated, as ``tandem check`` says it:
        ``"compiled 11 of 11 blocks in 0.4 ms"`` (machine code, the same
        results bit for bit as the interpreter; compiled again when
        ``set_parameter`` changes a value, and then followed by ``"(after
        block.param changed)"``), or why it is interpreted; ``None`` for
        FMUs and built-in models."""
        return self._native.evaluation

    @property
    def sample_times(self) -> List[Dict[str, Any]]:
        """Its discrete rates: a block at each, its period and offset (s)."""
        return [{"block": b, "period": p, "offset": o} for b, p, o in self._native.sample_times]

    @property
    def parameters(self) -> Dict[str, Any]:
        """Its tunable parameters as ``{"block.param": value}``."""
        return {f"{b}.{p}": v for b, p, v in json.loads(self._native.parameters)}

    @property
    def blocks(self) -> List[Dict[str, Any]]:
        """A block diagram's blocks (id, type), subsystems' inner blocks as
        ``outer/inner``; empty for FMUs and built-in plants."""
        text = self._native.text
        if text is None:
            return []
        found: List[Dict[str, Any]] = []

        def walk(blocks: Sequence[Mapping[str, Any]], prefix: str) -> None:
            for block in blocks:
                found.append({"id": prefix + block["id"], "type": block["type"]})
                inner = block.get("params", {}).get("blocks") or block.get("blocks")
                if isinstance(inner, list):
                    walk(inner, prefix + block["id"] + "/")

        walk(json.loads(text).get("blocks", []), "")
        return found

    @property
    def settings(self) -> Dict[str, Any]:
        """Its own simulation settings (solver, step, stop, rtol, atol)."""
        return json.loads(self._native.settings)

    def set_parameter(self, name: str, value: Any) -> None:
        """Sets parameter ``"block.param"`` (a value of the model file's
        form: numpy scalars and arrays are taken as the numbers and lists
        they hold); a value that is not finite, or a change of shape
        (signals, states, ports, rates), is refused with :class:`ModelError`."""
        self._native.set_parameter(*parameter_json(name, value, self._native.source))
        self._changes.append(("set_parameter", (name, value), {}))

    def set_input(
        self,
        name: str,
        value: Any = None,
        *,
        times: Any = None,
        values: Any = None,
        table: Any = None,
        interpolation: str = "linear",
    ) -> None:
        """Drives input ``name``: by a constant ``value``, by ``values`` at
        ``times`` (numpy arrays or lists), or by a breakpoint ``table`` of
        ``(time, value)`` rows; joined linearly (``interpolation="linear"``)
        or each held until the next (``"hold"``), held before the first and
        after the last, sampled at every step. ``None`` everywhere returns
        it to its default."""
        if interpolation not in ("linear", "hold"):
            raise ValueError(f"interpolation {interpolation!r}: use 'linear' or 'hold'")
        given = [x is not None for x in (value, table)] + [times is not None or values is not None]
        if sum(given) > 1:
            raise ValueError(f"input {name!r}: give a value, a table, or times and values, not several")
        if not any(given):
            self._native.clear_input(name)
        elif value is not None:
            self._native.set_input(name, [0.0], [float(value)], True)
        else:
            if table is not None:
                rows = np.asarray(table, dtype=float)
                if rows.ndim != 2 or rows.shape[1] != 2:
                    raise ValueError(f"input {name!r}: a table is rows of (time, value), not shape {rows.shape}")
                t, v = rows[:, 0], rows[:, 1]
            else:
                t, v = np.asarray(times, dtype=float).ravel(), np.asarray(values, dtype=float).ravel()
            self._native.set_input(name, t.tolist(), v.tolist(), interpolation == "hold")
        keywords = {"times": times, "values": values, "table": table, "interpolation": interpolation}
        self._changes.append(("set_input", (name, value), keywords))

    def sim(
        self,
        *,
        solver: Optional[str] = None,
        step: Optional[float] = None,
        stop: Optional[float] = None,
        rtol: Optional[float] = None,
        atol: Optional[float] = None,
        events: bool = True,
        event_tolerance: float = 1e-12,
        chatter: str = "stop",
        max_consecutive_events: int = 1000,
        record_events: bool = False,
        large_output: bool = False,
    ) -> Result:
        """Simulates the model with ``tandem sim``'s options over its own
        settings and returns the rows; the interpreter is free while it runs
        and Ctrl-C stops it. A run that fails raises :class:`RunFault` whose
        ``partial`` is the :class:`Result` of the rows before the failure."""
        try:
            columns, raw, summary = self._native.simulate(
                solver=solver,
                step=step,
                stop=stop,
                rtol=rtol,
                atol=atol,
                events=events,
                event_tolerance=event_tolerance,
                chatter=chatter,
                max_consecutive_events=max_consecutive_events,
                record_events=record_events,
                large_output=large_output,
            )
        except _tandem.RunFault as fault:
            columns, raw = fault.partial
            fault.partial = Result._from_native(columns, raw)
            raise
        return Result._from_native(columns, raw, summary)

    def __repr__(self) -> str:
        return f"<tandem.Model {self.name!r}: {len(self.inputs)} inputs, {len(self.outputs)} outputs>"


def _start_text(value: Union[float, int, bool, str]) -> str:
    """A start value as ``--set`` takes it."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))
    return str(value)


def _restore(spec: Spec, changes: List[Change]) -> Model:
    model = Model.__new__(Model)
    model._start(spec, changes)
    return model


def sim(model: ModelSource, **options: Any) -> Result:
    """Simulates ``model`` (a :class:`Model`, a path, a built-in name or a
    dict) with ``tandem sim``'s options; see :meth:`Model.sim`."""
    return (model if isinstance(model, Model) else Model(model)).sim(**options)
