"""The worker side of the code env: what runs in each session's subprocess.

Imports only the standard library at import time (the worker starts once per episode
and must start fast); viewfinder's capture code is imported on first use.
"""
