"""The viewer's routes: artifacts (JSON and pictures) and the live view (a WebSocket)."""
