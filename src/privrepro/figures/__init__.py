"""privrepro.figures."""
