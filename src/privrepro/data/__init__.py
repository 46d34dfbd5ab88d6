"""privrepro.data."""
