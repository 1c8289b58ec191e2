"""The desktop package's plugin module: adds ``viewfinder desktop`` and its tools."""

from __future__ import annotations
