"""Practice: the checker that runs a user's own engine against the conventions, and the bug zoo."""
