"""The Class tab: a class session (issue 39)."""
