"""passhat: pass^k for Claude Code run unattended, as a Promptfoo extension."""

from __future__ import annotations

__version__ = "0.1.0"
