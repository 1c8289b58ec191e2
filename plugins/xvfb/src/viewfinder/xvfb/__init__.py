"""viewfinder.xvfb."""
