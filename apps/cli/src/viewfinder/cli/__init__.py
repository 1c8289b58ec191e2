"""The viewfinder command."""
