"""viewfinder.ray: env sessions as Ray actors, each on a node with a free display slot.

>>> from viewfinder.core import EnvSpec, open_provider
>>> provider = open_provider("ray", EnvSpec("my_envs:make_env"), address="auto")  # doctest: +SKIP
>>> session = provider.open("s1")               # an actor on a node with a free slot
>>> session.call("reset"), session.node          # doctest: +SKIP

Servers and pools use it by name: ``viewfinder serve --provider ray``,
``EnvPool(n, provider="ray")``. See docs/scale.md.
"""

import lazy_loader

# Names are imported on first use: the plugin manager imports this package without
# importing Ray (the stub lists the names).
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
