"""viewfinder.recorder (being built; see the issue tracker)."""
