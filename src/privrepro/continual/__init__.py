"""privrepro.continual."""
