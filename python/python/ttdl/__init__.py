"""TTDL from Python: evaluate a Task Traffic Description Language program, plan it (place,
route, time-schedule, verify), run it on the hardware models and compare them.

Everything goes through the same session the ``ttdl`` command line and REPL use, so every
figure equals the command line's: ``Plan.to_json()`` is the document ``ttdl run --format json``
prints, and ``Plan.metrics``/``messages``/``schedule`` are its rows. Tables are pandas
DataFrames when pandas is installed, lists of dicts otherwise.

>>> import ttdl
>>> s = ttdl.Session()
>>> _ = s.eval('''(deftask a b)
...               (with-task a (write-stream 8 b))
...               (with-task b (read-stream 8 a))''')
>>> p = s.plan(network="mesh:2x1")
>>> p.metrics["makespan"]
8
"""

from __future__ import annotations

import html as _html
import json as _json
import os as _os
import sys as _sys

from ._ttdl import (
    PlanError,
    ScriptError,
    SimulationError,
    TtdlError,
    model_names,
    setting_names,
)
from ._ttdl import Session as _Session

try:  # pandas is optional: without it every table is a list of dicts.
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised only where pandas is absent
    _pd = None

__all__ = [
    "Session",
    "Plan",
    "Check",
    "Simulation",
    "TtdlError",
    "ScriptError",
    "PlanError",
    "SimulationError",
    "setting_names",
    "model_names",
    "has_pandas",
]


def has_pandas() -> bool:
    """Whether tables come back as pandas DataFrames (else as lists of dicts)."""
    return _pd is not None


def _table(rows, columns):
    """Rows (dicts with the JSON's keys) as a DataFrame, or the list itself without pandas.
    ``columns`` orders the columns (any others follow) and names them when there is no row."""
    rows = list(rows)
    if _pd is None:
        return rows
    if not rows:
        return _pd.DataFrame(columns=columns)
    frame = _pd.DataFrame(rows)
    # The JSON's keys come sorted; show the documented columns first, in their order.
    first = [c for c in columns if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]


def _resource(link):
    """A schedule row's resource as a hashable tuple: ``(3, 4)`` for the link from node 3 to
    node 4, ``("inject", 3)``/``("eject", 3)`` for node 3's ports."""
    return tuple(link) if isinstance(link, list) else link


class Check:
    """The program's communication timed before placement, as ``ttdl check`` reports it."""

    def __init__(self, document: str, text: str):
        self._json = document
        self.document = _json.loads(document)
        #: The text ``ttdl check`` prints.
        self.text = text

    @property
    def metrics(self) -> dict:
        """``critical_path`` and, for a repeating program, the ``period`` lower bound."""
        return dict(self.document["metrics"])

    @property
    def tasks(self):
        return _table(self.document["tasks"], ["id", "name", "coords", "mapped"])

    @property
    def messages(self):
        return _table(
            self.document["messages"],
            ["id", "src", "dst", "size", "release", "deadline", "phase", "iteration", "label"],
        )

    @property
    def phases(self):
        return _table(self.document["phases"], ["id", "name", "start"])

    def to_json(self) -> str:
        return self._json

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        d = self.document
        return (
            f"<ttdl.Check tasks={len(d['tasks'])} messages={len(d['messages'])} "
            f"critical_path={d['metrics']['critical_path']}>"
        )


class Plan:
    """A placed, routed, time-scheduled and verified plan (``ttdl run``).

    ``metrics`` is the JSON's ``metrics`` object; ``messages``, ``schedule`` and ``tasks`` are
    its rows; ``links`` is one row per network link."""

    def __init__(self, handle):
        self._handle = handle
        self._doc = None

    @property
    def document(self) -> dict:
        """The whole SPEC §4 document, parsed."""
        if self._doc is None:
            self._doc = _json.loads(self._handle.to_json())
        return self._doc

    @property
    def metrics(self) -> dict:
        """``makespan``, ``critical_path``, ``period``, ``lower_bound``, ``deadlines_met``,
        ``peak_utilization``, … exactly as ``ttdl run --format json`` writes them."""
        return dict(self.document["metrics"])

    @property
    def config(self) -> dict:
        """Every plan setting as resolved (the JSON's ``config``)."""
        return dict(self.document["config"])

    @property
    def network(self) -> dict:
        return dict(self.document["network"])

    @property
    def periodic(self):
        """``{period, kernel_start, kernel_end, repetitions}`` for a periodic schedule, else
        None."""
        return self.document.get("periodic")

    @property
    def tasks(self):
        return _table(self.document["tasks"], ["id", "name", "node"])

    @property
    def messages(self):
        """One row per message: ``id, src, dst, size, release, deadline, phase, iteration,
        route, effective_deadline, sent, arrival``."""
        return _table(
            self.document["messages"],
            [
                "id", "src", "dst", "size", "release", "deadline", "phase", "iteration",
                "route", "effective_deadline", "sent", "arrival",
            ],
        )

    @property
    def schedule(self):
        """One row per message fragment per resource it holds: ``msg, link, start, end``, the
        resource held for cycles ``start <= t < end``; ``link`` is ``(from, to)`` or
        ``("inject", node)``/``("eject", node)``."""
        rows = (
            {**r, "link": _resource(r["link"])} for r in self.document["schedule"]
        )
        return _table(rows, ["msg", "link", "start", "end"])

    @property
    def links(self):
        """One row per network link, in the JSON's order: ``from, to`` and ``busy``, the cycles
        the schedule's rows hold it (for a long periodic plan, whose rows list the prologue,
        one kernel and the epilogue, those rows' cycles)."""
        busy = {}
        for r in self.document["schedule"]:
            key = _resource(r["link"])
            busy[key] = busy.get(key, 0) + r["end"] - r["start"]
        rows = (
            {"from": a, "to": b, "busy": busy.get((a, b), 0)}
            for a, b in self.document["network"]["links"]
        )
        return _table(rows, ["from", "to", "busy"])

    @property
    def summary(self) -> str:
        """The text summary ``ttdl run`` prints."""
        return self._handle.summary()

    def to_json(self) -> str:
        """The document ``ttdl run --format json`` prints, byte for byte."""
        return self._handle.to_json()

    def html(self, title: str = "plan") -> str:
        """The self-contained HTML report ``ttdl run --html`` writes."""
        return self._handle.html(title)

    def save(self, directory, name: str = "plan") -> int:
        """Writes every artifact ``ttdl run --out DIR`` writes into ``directory`` (the tasks
        file, switch programs, JSON and its CSV tables, summary, task graph, pictures and
        ``report.html``), each named after ``name``; refuses to replace a file TTDL did not
        write there. Returns how many files it wrote."""
        return self._handle.save(_os.fspath(directory), name)

    def timeline_svg(self) -> str:
        """The link-by-time chart of the schedule, as SVG."""
        return self._handle.timeline_svg()

    def _repr_html_(self) -> str:
        return (
            "<div class='ttdl-plan'><pre>"
            + _html.escape(self.summary)
            + "</pre>"
            + self.timeline_svg()
            + "</div>"
        )

    def __repr__(self) -> str:
        m = self.metrics
        return (
            f"<ttdl.Plan makespan={m['makespan']} lower_bound={m['lower_bound']} "
            f"deadlines_met={m['deadlines_met']}>"
        )


class Simulation:
    """One run of the program on one hardware model (``ttdl simulate``)."""

    def __init__(self, document: str):
        self._json = document
        self.document = _json.loads(document)

    @property
    def model(self) -> str:
        return self.document["model"]

    @property
    def completion(self) -> int:
        """The cycle at which the last task finished."""
        return self.document["completion"]

    @property
    def metrics(self) -> dict:
        """Everything but the per-task, per-message and per-link rows."""
        return {
            k: v
            for k, v in self.document.items()
            if k not in ("tasks", "messages", "links")
        }

    @property
    def tasks(self):
        return _table(self.document["tasks"], ["task", "name", "node", "finish"])

    @property
    def messages(self):
        return _table(
            self.document["messages"],
            ["msg", "src", "dst", "size", "sent", "delivered", "latency", "local"],
        )

    @property
    def links(self):
        return _table(self.document["links"], ["from", "to", "busy", "utilization"])

    def to_json(self) -> str:
        return self._json

    def __repr__(self) -> str:
        lat = self.document.get("latency", {})
        return (
            f"<ttdl.Simulation model={self.model!r} completion={self.completion} "
            f"mean_latency={lat.get('mean')}>"
        )


_COMPARE_COLUMNS = [
    "model", "completion", "completion_norm", "mean_latency", "mean_latency_norm",
    "max_latency", "max_latency_norm", "energy_pj",
]


def _compare_rows(rows):
    """The rows of ``compare --format json`` with the run's total energy also as a column of its
    own, ``energy_pj`` (the ``energy`` dict keeps the dynamic, static and per-component parts)."""
    for row in rows:
        energy = row.get("energy")
        if isinstance(energy, dict) and "total_pj" in energy:
            row["energy_pj"] = energy["total_pj"]
    return rows


class Session:
    """A TTDL session: an interpreter with the standard library loaded, and the program
    evaluated so far.

    What the program prints (``println``) is written to ``sys.stdout`` unless ``echo`` is
    False; ``printed`` holds what the last call printed either way. ``max_steps`` and
    ``max_depth`` raise the evaluation's step budget and its nested call depth (10,000 by
    default), as ``--max-steps`` and ``--max-depth`` do on the command line."""

    def __init__(
        self,
        stdlib: bool = True,
        max_steps: int | None = None,
        echo: bool = True,
        max_depth: int | None = None,
    ):
        self._s = _Session(stdlib=stdlib, max_steps=max_steps, max_depth=max_depth)
        self.echo = echo
        self.printed = ""

    def _flush(self):
        self.printed = self._s.take_output()
        if self.echo and self.printed:
            _sys.stdout.write(self.printed)

    def load(self, path) -> str:
        """Reads and evaluates a ``.ttdl`` file; returns the printed value of its last form.
        A wrong script raises :class:`ScriptError`."""
        try:
            return self._s.load(_os.fspath(path))
        finally:
            self._flush()

    def eval(self, source: str, name: str = "<python>") -> str:
        """Evaluates TTDL source; returns the printed value of its last form. A wrong script
        raises :class:`ScriptError`."""
        try:
            return self._s.eval(source, name)
        finally:
            self._flush()

    @property
    def mapping(self):
        """The canned mapping (a ``define-mapping`` name) plans place with, or None."""
        return self._s.mapping

    @mapping.setter
    def mapping(self, name):
        self._s.mapping = name

    def check(self, timing: str | None = None, mapping: str | None = None) -> Check:
        """Tasks, messages, phases and the critical path, as ``ttdl check`` reports them."""
        doc, text = self._s.check(timing=timing, mapping=mapping)
        return Check(doc, text)

    def plan(self, **settings) -> Plan:
        """Places, routes, schedules and verifies the program. The keyword arguments are the
        plan settings (``ttdl.setting_names()``): ``network="mesh:4x4"``, ``place="anneal"``,
        ``seed=3``, …; each overrides the script's ``(target …)``."""
        return Plan(self._s.plan(**settings))

    def simulate(self, model: str, **options) -> Simulation:
        """Runs the program on one hardware model: ``simulate("wormhole", vc=2, buf=4)``.
        A keyword argument the model declares is the model's option (``circuit``'s ``setup``,
        ``warp``'s ``seed``, as after ``ttdl simulate --model``); the other plan settings
        (``network="torus:4x4"``, ``place=…``) place the program; anything else goes to the
        model, which says what it takes."""
        return Simulation(self._s.simulate(model, **options))

    def compare(self, models=None, **settings):
        """Every model side by side (``ttdl compare``): one row per model with the columns of
        ``ttdl compare --format json``'s rows. ``models`` is a list of model specs (or one
        comma-separated string); None runs every registered model's standard set."""
        if isinstance(models, str):
            models = [m for m in (x.strip() for x in models.split(",")) if m]
        if models is not None and len(models) == 0:
            raise ValueError("`models` names no model (None runs every model)")
        rows = _compare_rows(_json.loads(self._s.compare(models, **settings)))
        return _table(rows, _COMPARE_COLUMNS)

    def __repr__(self) -> str:
        return "<ttdl.Session>"
