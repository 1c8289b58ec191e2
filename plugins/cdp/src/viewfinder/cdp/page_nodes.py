"""The nodes of a frame's reading world (:mod:`viewfinder.cdp.page_script`): a ref's
node found again by its key, and closed shadow roots handed to the reader.

The world keeps, per node id it gave, a ``WeakRef`` to the node, so a key
(``"<frame id>/<epoch>/<node id>"``) resolves to the node object while it is in its
document; the browser toolset acts on a ref through that object. A closed shadow root
is hidden from every script but not from the DevTools protocol: the elements a read
found without an open root that may hold one (custom elements, and the built-in
elements that can host a root and draw none of their own children, as a host draws its
root instead) are described (``DOM.describeNode``), and each closed root found is
resolved into the world and kept there by its host for the reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from viewfinder.cdp.errors import CDPError
from viewfinder.cdp.session import CDPSession

#: The isolated world's name: one per frame, found again by it on every read.
WORLD = "viewfinder-elements"

#: The node an id names, if it is still in the document of that epoch (else null).
RESOLVE = """
((epoch, id) => {
  const vf = globalThis.__viewfinder;
  if (!vf || vf.epoch !== epoch) return null;
  const node = vf.nodes.get(id)?.deref();
  return node && node.isConnected ? node : null;
})(%s, %d)
"""

#: Elements asked about per read whether they hold a closed shadow root (the rest are
#: asked on the next reads, and the read says how many are left).
MAX_HOSTS_CHECKED = 256

#: Keeps a closed shadow root (``this``) for the reader, by its host.
_KEEP_CLOSED = "function() { globalThis.__viewfinder.closed.set(this.host, this); }"

#: Marks the hosts asked about (``this``: the first ``n`` of the last read's hosts).
_CHECKED = (
    "function(n) { const vf = globalThis.__viewfinder;"
    " for (const h of vf.hosts.slice(0, n)) vf.checked.add(h); }"
)


async def open_closed_roots(session: CDPSession, context: int, timeout: float) -> tuple[int, int]:
    """Ask the DevTools protocol, which sees closed shadow roots, about the elements
    the last read found that may hold one; keep each closed root for the
    reader (``vf.closed``). Returns how many were found, and how many hosts are left
    to ask (over :data:`MAX_HOSTS_CHECKED`)."""
    group = WORLD + "-hosts"
    try:
        listed = await session.call(
            "Runtime.evaluate",
            {
                "expression": f"globalThis.__viewfinder.hosts.slice(0, {MAX_HOSTS_CHECKED})",
                "contextId": context,
                "objectGroup": group,
            },
            timeout=timeout,
        )
        array = listed["result"]["objectId"]
        items = await session.call(
            "Runtime.getProperties", {"objectId": array, "ownProperties": True}, timeout=timeout
        )
        hosts = [
            item["value"]["objectId"]
            for item in items.get("result", [])
            if item.get("name", "").isdigit() and "objectId" in item.get("value", {})
        ]
        described = await asyncio.gather(
            *(
                session.call("DOM.describeNode", {"objectId": host}, timeout=timeout)
                for host in hosts
            )
        )
        roots = [
            root["backendNodeId"]
            for answer in described
            for root in answer.get("node", {}).get("shadowRoots", [])
            if root.get("shadowRootType") == "closed"
        ]
        for backend in roots:
            root = await session.call(
                "DOM.resolveNode",
                {"backendNodeId": backend, "executionContextId": context, "objectGroup": group},
                timeout=timeout,
            )
            await session.call(
                "Runtime.callFunctionOn",
                {"objectId": root["object"]["objectId"], "functionDeclaration": _KEEP_CLOSED},
                timeout=timeout,
            )
        await session.call(
            "Runtime.callFunctionOn",
            {
                "executionContextId": context,
                "functionDeclaration": _CHECKED,
                "arguments": [{"value": len(hosts)}],
            },
            timeout=timeout,
        )
        left = await session.call(
            "Runtime.evaluate",
            {"expression": f"Math.max(0, globalThis.__viewfinder.hosts.length - {len(hosts)})",
             "contextId": context, "returnByValue": True},
            timeout=timeout,
        )  # fmt: skip
    finally:
        with contextlib.suppress(CDPError):
            await session.call("Runtime.releaseObjectGroup", {"objectGroup": group})
    return len(roots), int(left["result"]["value"])


def split_key(key: str) -> tuple[str, str, int]:
    """A node's key (``"<frame id>/<epoch>/<node id>"``) as its three parts; raises
    ValueError for a key of another shape."""
    frame, epoch, node = key.rsplit("/", 2)
    return frame, epoch, int(node)


async def resolve_node(session: CDPSession, key: str, timeout: float) -> tuple[str, int] | None:
    """The node ``key`` names, as a remote object in the reading world (its object id,
    and that world's execution context id), or None when it is no longer in its
    document (removed, or the frame navigated). The caller releases the object."""
    frame, epoch, node = split_key(key)
    world = await session.call(
        "Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD}, timeout=timeout
    )
    context = int(world["executionContextId"])
    answer = await session.call(
        "Runtime.evaluate",
        {"expression": RESOLVE % (json.dumps(epoch), node), "contextId": context},
        timeout=timeout,
    )
    object_id = answer.get("result", {}).get("objectId")
    if "exceptionDetails" in answer or object_id is None:
        return None
    return str(object_id), context
