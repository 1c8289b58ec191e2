"""Reading each kind of artifact the viewer shows into the JSON the page renders."""
