"""Versioned compatibility matrices (data only); installed as imagelint.matrices."""
