"""The floor every room stands on: the values, enums and identifiers they share (a suggestion, its status, a scope)."""
