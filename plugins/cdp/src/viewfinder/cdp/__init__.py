"""viewfinder.cdp."""
