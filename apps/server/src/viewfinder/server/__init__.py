"""viewfinder.server: the HTTP/WebSocket server for code environment sessions."""
