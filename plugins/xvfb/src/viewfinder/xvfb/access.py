"""Who may connect to a display: the user who started it, and one guest user at a time.

An X server lets in whatever its access list allows. By default that is every local
connection, so any process on the machine, any other session's code included, could
screenshot a display and type into it. Each display viewfinder starts instead admits
exactly the user id that started it, and the code env lends it to one session's user id
at a time (:func:`admit_only`): the next session gets its own id in, and every other
entry out, whoever added it (a session's code may run ``xhost +`` on its display), with
access control on again. The X server checks the id itself, from the connecting
socket's credentials (``SI:localuser:#UID``, server-interpreted access), so there is no
cookie to steal.
"""

from __future__ import annotations

import os
from typing import Any

from Xlib import X
from Xlib.protocol import rq

from viewfinder.xvfb.connection import close_quietly, open_display, x_errors

#: The X protocol's family for "every non-network local connection" (``xhost local:``).
FAMILY_LOCAL_HOST = 252


class _ChangeHosts(rq.Request):
    """ChangeHosts with any family: python-xlib's own refuses the local one (252)."""

    _request = rq.Struct(
        rq.Opcode(109),
        rq.Set("mode", 1, (X.HostInsert, X.HostDelete)),
        rq.RequestLength(),
        rq.Card8("host_family"),
        rq.Pad(1),
        rq.LengthOf("host", 2),
        rq.List("host", rq.Card8Obj),
    )


def _change(conn: Any, mode: int, family: int, host: bytes) -> None:
    _ChangeHosts(display=conn.display, mode=mode, host_family=family, host=list(host))


def _local_user(uid: int) -> bytes:
    return b"localuser\0#" + str(uid).encode()


def restrict_to_owner(name: str, owner: int | None = None) -> None:
    """Admit only ``owner`` (default: this process's user id) to display ``name``."""
    admit_only(name, None, None, owner)


def admit_only(
    name: str, guest: int | None, previous: int | None = None, owner: int | None = None
) -> None:
    """Make display ``name`` admit exactly the owner and user id ``guest`` (None: the
    owner alone), with access control on.

    Whatever a client changed is undone here: ``xhost +`` (access control off), users or
    hosts it added, the owner or guest it took out. ``previous`` (the guest before) is
    taken out like every other entry; it is kept for callers that name it. Connections
    already open are not cut: the caller has ended the previous guest's processes.
    """
    del previous  # every entry but the owner and the guest goes, whoever added it
    owner = os.getuid() if owner is None else owner
    wanted = {_local_user(owner)}
    if guest is not None:
        wanted.add(_local_user(guest))
    conn = open_display(name)
    try:
        with x_errors(name):
            # first who may stay in, then control on, then the rest out: another order
            # could lock us out too
            for user in sorted(wanted):
                _change(conn, X.HostInsert, X.FamilyServerInterpreted, user)
            conn.set_access_control(X.EnableAccess)
            # "every local connection" is a switch of the server's, not always listed
            _change(conn, X.HostDelete, FAMILY_LOCAL_HOST, b"")
            for host in conn.list_hosts().hosts:
                raw = bytes(host.name)
                if host.family == X.FamilyServerInterpreted and raw in wanted:
                    continue
                _change(conn, X.HostDelete, host.family, raw)
            conn.sync()
    finally:
        close_quietly(conn)


def access_control_enabled(name: str) -> bool:
    """Whether display ``name`` checks its access list (False after ``xhost +``)."""
    conn = open_display(name)
    try:
        with x_errors(name):
            return bool(conn.list_hosts().mode == X.EnableAccess)
    finally:
        close_quietly(conn)


def admitted(name: str) -> list[str]:
    """The access list of display ``name``, as ``xhost`` prints it (``SI:localuser:#0``)."""
    conn = open_display(name)
    try:
        with x_errors(name):
            hosts = conn.list_hosts().hosts
    finally:
        close_quietly(conn)
    names = []
    for host in hosts:
        raw = bytes(host.name)
        if host.family == X.FamilyServerInterpreted:
            kind, _, value = raw.partition(b"\0")
            names.append(f"SI:{kind.decode()}:{value.decode()}")
        else:
            names.append(f"family {host.family}: {raw!r}")
    return names
