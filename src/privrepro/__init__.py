"""privrepro."""
