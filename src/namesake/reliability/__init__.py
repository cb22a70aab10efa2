"""The pure reliability pipeline: spot, gate, score, read and decide. It takes values and ports, returns values, and
imports nothing from the floors above it."""
