"""privrepro.dp."""
