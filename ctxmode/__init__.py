"""ctxmode: Claude Code hooks that give a coding agent a memory that survives compaction."""

__version__ = "0.11.0"
