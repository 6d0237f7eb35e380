"""mtplint: a linter for the launch configuration of LLM servers that use speculative decoding."""

__version__ = "0.1.0"
