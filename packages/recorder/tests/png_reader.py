"""Opens and decodes one PNG over and over until stdin closes; prints what it saw as JSON.

Run by the concurrency test as a separate process, as any other program reading the
recorder's live frame would be.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading

from PIL import Image


def main() -> None:
    path = sys.argv[1]
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    reads, failures, distinct = 0, [], set()
    while not done.is_set():
        try:
            with open(path, "rb") as file:
                data = file.read()
            with Image.open(path) as image:
                image.load()
            reads += 1
            distinct.add(hashlib.blake2b(data, digest_size=8).hexdigest())
        except Exception as exc:  # any failure to open or decode is what we look for
            failures.append(repr(exc))
        if reads % 100 == 0:
            print(json.dumps({"reads": reads}), flush=True)
    print(
        json.dumps(
            {
                "reads": reads,
                "failures": failures[:10],
                "failed": len(failures),
                "distinct": len(distinct),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
