"""viewfinder.cdp plugin registration (no hooks yet)."""
