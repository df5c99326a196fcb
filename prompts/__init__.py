"""Prompt files, one per prompt: a system part, a line `---`, and a user template ($names)."""
