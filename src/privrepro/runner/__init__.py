"""privrepro.runner."""
