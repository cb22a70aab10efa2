"""What measures: quality against the yardstick, speed, reliability under faults, the memory, the review keys."""
