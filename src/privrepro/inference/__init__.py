"""privrepro.inference."""
