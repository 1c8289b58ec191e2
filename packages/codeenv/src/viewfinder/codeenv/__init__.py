"""viewfinder.codeenv (being built; see the issue tracker)."""
