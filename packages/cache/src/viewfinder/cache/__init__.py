"""viewfinder.cache (being built; see the issue tracker)."""
