"""viewfinder.browser (being built; see the issue tracker)."""
