"""viewfinder.xvfb plugin registration (no hooks yet)."""
