"""viewfinder.tui (being built; see the issue tracker)."""
