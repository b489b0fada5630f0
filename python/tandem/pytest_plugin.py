"""The pytest plugin (registered by installing the package): the
``tandem_session`` fixture starts sessions for a test and stops them after
it; ``--tandem-clock real`` runs them on the real clock instead of the
virtual one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest

from ._session import Session


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("tandem")
    group.addoption(
        "--tandem-clock",
        choices=("virtual", "real"),
        default="virtual",
        help="the clock of the sessions tandem_session starts (default: virtual, deterministic)",
    )


@pytest.fixture
def tandem_clock(request: Any) -> str:
    """The clock asked for on the command line (``virtual`` by default)."""
    return request.config.getoption("--tandem-clock")


@pytest.fixture
def tandem_session(tandem_clock: str, tmp_path: Path) -> Iterator[Callable[..., Session]]:
    """Starts sessions: ``plant = tandem_session("plant.toml")`` (a path or
    a dict, and :class:`Session`'s keywords), on the ``--tandem-clock``
    clock, writing into the test's temporary folder. Every session started
    is stopped after the test, the last first; a run that failed fails the
    test."""
    started: List[Session] = []

    def start(config: Any, **keywords: Any) -> Session:
        keywords.setdefault("clock", tandem_clock)
        keywords.setdefault("results", tmp_path)
        session = Session(config, **keywords)
        started.append(session)
        return session

    yield start
    failures = []
    for session in reversed(started):
        try:
            session.stop()
        except Exception as e:  # every session is stopped before reporting
            failures.append(e)
    if failures:
        raise failures[0]
