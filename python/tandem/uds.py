"""udsoncan over a Tandem bus: a :class:`udsoncan.connections.BaseConnection`
on an ISO-TP node of a session's bus (:meth:`tandem.Bus.isotp`), so that
udsoncan's client talks to a virtual ECU's diagnostic server (``[bus.diagnostics]``)
or to hardware on the bus::

    with session.bus("can0") as bus, Client(tandem.uds.Connection(bus.isotp(0x7E0, 0x7E8))) as client:
        client.read_data_by_identifier(0xF40D)

Needs udsoncan (``pip install tandem[uds]`` or ``pip install udsoncan``).
"""

from typing import Any, Optional

from udsoncan.connections import BaseConnection
from udsoncan.exceptions import TimeoutException


class Connection(BaseConnection):  # type: ignore[misc]
    """udsoncan's connection on ``isotp``, an ISO-TP node from
    :meth:`tandem.Bus.isotp`."""

    def __init__(self, isotp: Any, name: Optional[str] = None):
        BaseConnection.__init__(self, name)
        self._isotp = isotp
        self._opened = False

    def open(self) -> "Connection":
        self._opened = True
        return self

    def close(self) -> None:
        self._opened = False

    def is_open(self) -> bool:
        return self._opened

    def specific_send(self, payload: bytes, timeout: Optional[float] = None) -> None:
        self._isotp.send(bytes(payload), 5.0 if timeout is None else timeout)

    def specific_wait_frame(self, timeout: Optional[float] = None) -> Optional[bytes]:
        wait = 2.0 if timeout is None else timeout
        message = self._isotp.recv(wait)
        if message is None:
            raise TimeoutException(f"no ISO-TP message within {wait} s")
        return bytes(message)

    def empty_rxqueue(self) -> None:
        while self._isotp.recv(0.0) is not None:
            pass
