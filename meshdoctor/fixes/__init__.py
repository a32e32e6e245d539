"""Fixes: one module per remediation (plan, apply, verify)."""
