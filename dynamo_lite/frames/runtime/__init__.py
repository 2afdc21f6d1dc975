"""Runtime layer: compile configuration and requests, the code cache, counters, the frame hook."""
