"""The viewer app's plugin module: adds its sub-command to `viewfinder`."""

from __future__ import annotations
