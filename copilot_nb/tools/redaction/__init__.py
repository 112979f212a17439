"""Secrets kept from the model unless the user says yes: what counts, string literals as Python
reads them, and reads of secret paths that ask."""
